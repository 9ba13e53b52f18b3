//! Report inputs built from real iperf3 3.12 `-J` captures (loopback, `-t 4 -i 0.25`,
//! `-P 2` for upload/download, one stream each way for `--bidir`, a 200 Mbit/s UDP run) plus
//! hand-written verdicts and doctor findings in the shapes those crates write.

#![allow(clippy::unwrap_used)]

use serde_json::Value;
use wireperf_protocol::schema::TestReport;
use wireperf_report::{ReportInput, RunView};

use crate::support::fixture;

/// A captured `-J` document.
pub fn report(name: &str) -> TestReport {
    serde_json::from_str(&fixture(&format!("report/{name}.json"))).unwrap()
}

/// A JSON fixture.
pub fn json(name: &str) -> Value {
    serde_json::from_str(&fixture(&format!("report/{name}.json"))).unwrap()
}

fn run(id: &str, label: &str, phases: &[(&str, &str)]) -> RunView {
    RunView {
        id: id.into(),
        label: label.into(),
        time: "2026-11-29 19:40:12 UTC".into(),
        host: "vm → 127.0.0.1".into(),
        phases: phases.iter().map(|(name, file)| (name.to_string(), report(file))).collect(),
        verdicts: None,
        findings: None,
        watch: Vec::new(),
    }
}

/// A suite: upload, download, bidir, with verdicts and findings.
pub fn suite_a() -> RunView {
    let mut r = run("12", "suite 127.0.0.1", &[("upload", "up_a"), ("download", "down_a"), ("bidir", "bidir_a")]);
    r.verdicts = Some(json("verdicts_a"));
    r.findings = Some(json("findings_a"));
    r
}

/// A second suite (upload and download at `-b 8G`), to compare with [`suite_a`].
pub fn suite_b() -> RunView {
    run("13", "suite 127.0.0.1, -b 8G", &[("upload", "up_b"), ("download", "down_b")])
}

/// One upload phase with two streams.
pub fn upload_only() -> RunView {
    run("7", "client", &[("upload", "up_a")])
}

/// One UDP phase, with verdicts and findings (small enough to snapshot whole).
pub fn udp_only() -> RunView {
    let mut r = run("9", "client -u -b 200M", &[("udp", "udp_a")]);
    r.verdicts = Some(json("verdicts_a"));
    r.findings = Some(json("findings_a"));
    r
}

/// Input of one or more runs.
pub fn input(runs: Vec<RunView>) -> ReportInput {
    ReportInput { runs }
}
