//! `--why`: watch the hosts during a test and name what held each direction back.
//!
//! The watching itself lives in `wireperf_suite::bottleneck` (shared with the suite and
//! selftest); this module renders the client's verdicts: below iperf3's summary (text) or
//! under the report's `wireperf` key (`-J`). Without `--why` nothing here runs, and plain
//! iperf3 output is unchanged.

use serde_json::{Value, json};
use wireperf_doctor::watch::{self, Verdict};
use wireperf_protocol::schema::TestReport;

/// The text block printed after iperf3's summary.
pub fn render_text(verdicts: &[Verdict]) -> String {
    let mut out = String::from("\n");
    for v in verdicts {
        out.push_str(&watch::render::render(v));
        out.push('\n');
    }
    out
}

/// The `-J` document with the verdicts under `wireperf.bottleneck`.
pub fn json_with_verdicts(report: &TestReport, verdicts: &[Verdict]) -> Value {
    let mut v = serde_json::to_value(report).unwrap_or(Value::Null);
    if let Some(m) = v.as_object_mut() {
        m.insert("wireperf".into(), json!({ "bottleneck": verdicts }));
    }
    v
}
