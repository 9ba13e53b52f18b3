//! `--why`: watch the hosts during a test and name what held each direction back.
//!
//! The watching itself lives in `wireperf_suite::bottleneck` (shared with the suite and
//! selftest); this module renders the client's verdicts and what the watching cost each host:
//! below iperf3's summary (text) or under the report's `wireperf` key (`-J`). Without `--why`
//! nothing here runs, and plain iperf3 output is unchanged.

use serde_json::{Value, json};
use wireperf_doctor::watch::{self, Series, Verdict};
use wireperf_protocol::schema::TestReport;

/// What the watch cost each host: this one's series and the far host's, when it sent one.
#[derive(Debug, Clone, Copy, Default)]
pub struct Watched<'a> {
    /// This host's series (`None` when its watcher could not start).
    pub client: Option<&'a Series>,
    /// The wireperf server's series (`None` against a stock server).
    pub server: Option<&'a Series>,
}

impl Watched<'_> {
    /// `{"client": cost, "server": cost}`; a host that sent no cost is `null`.
    pub fn cost_json(&self) -> Value {
        let one = |s: Option<&Series>| s.and_then(|s| s.cost).map_or(Value::Null, |c| c.to_json());
        json!({ "client": one(self.client), "server": one(self.server) })
    }

    /// One line per host that was watched.
    fn cost_text(&self) -> String {
        let mut out = String::new();
        for (side, s) in [("client", self.client), ("server", self.server)] {
            let Some(s) = s else { continue };
            let what = s.cost.map_or_else(|| "not reported (an older wireperf)".to_string(), |c| c.text());
            out.push_str(&format!("Watch cost ({side}): {what}\n"));
        }
        out
    }
}

/// The text block printed after iperf3's summary.
pub fn render_text(verdicts: &[Verdict], watched: Watched<'_>) -> String {
    let mut out = String::from("\n");
    for v in verdicts {
        out.push_str(&watch::render::render(v));
        out.push('\n');
    }
    out.push_str(&watched.cost_text());
    out
}

/// The `wireperf` extension of a `-J` document: the verdicts and the watch's cost.
pub fn extension(verdicts: &[Verdict], watched: Watched<'_>) -> Value {
    json!({ "bottleneck": verdicts, "watch_cost": watched.cost_json() })
}

/// The `-J` document with the verdicts under `wireperf.bottleneck` and the cost under
/// `wireperf.watch_cost`.
pub fn json_with_verdicts(report: &TestReport, verdicts: &[Verdict], watched: Watched<'_>) -> Value {
    let mut v = serde_json::to_value(report).unwrap_or(Value::Null);
    if let Some(m) = v.as_object_mut() {
        m.insert("wireperf".into(), extension(verdicts, watched));
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use wireperf_doctor::watch::WatchCost;

    #[test]
    fn cost_lines_and_json_per_watched_host() {
        let cost = WatchCost { seconds: 2.0, during_ns: 1_000_000, samples: 2, edges_ns: 4_000_000 };
        let client = Series { cost: Some(cost), ..Default::default() };
        let older = Series::default();
        let w = Watched { client: Some(&client), server: Some(&older) };
        let text = render_text(&[], w);
        assert!(text.contains("Watch cost (client): sampling used 1.0 ms CPU in 2.0 s (0.050 % of one core"), "{text}");
        assert!(text.contains("Watch cost (server): not reported (an older wireperf)"), "{text}");
        let j = w.cost_json();
        assert_eq!(j["client"]["cpu_ms"], 1.0);
        assert!(j["server"].is_null());
        // A stock server: no server line at all (the verdict says the far side was not seen).
        let stock = render_text(&[], Watched { client: Some(&client), server: None });
        assert!(!stock.contains("(server)"), "{stock}");
    }
}
