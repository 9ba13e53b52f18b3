//! Gates for scripts and CI: did the link meet what the caller expects?
//!
//! A gate is judged on the series' mean when the suite was repeated (one round is a series
//! of one). Each gate and direction is one [`GateResult`], so a CI system can list them as
//! test cases (JUnit, [`junit_xml`]); the exit status is [`exit_code`]'s: 0 every gate met,
//! 1 a gate missed, 2 the suite could not test (a phase failed, or a gate's figure was not
//! measured: a latency gate with `--no-latency`, a stock server's missing direction).

use crate::phase::Phase;
use crate::series::SeriesResult;
use serde::Serialize;
use wireperf_protocol::outcome::words::rate;

/// What the caller expects.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Gates {
    /// `--expect-min`: the upload phase's mean goodput at least this, bit/s.
    pub min_upload_bps: Option<f64>,
    /// `--expect-min`: the download phase's mean goodput at least this, bit/s.
    pub min_download_bps: Option<f64>,
    /// `--expect-max-loaded-latency`: each TCP phase's loaded round trip (probes' median,
    /// mean over the rounds) at most this, ms.
    pub max_loaded_latency_ms: Option<f64>,
}

impl Gates {
    /// True when no gate is set.
    pub fn is_empty(&self) -> bool {
        *self == Gates::default()
    }
}

/// How a gate came out.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum GateStatus {
    /// Met.
    Met,
    /// Missed.
    Missed,
    /// Its figure was not measured.
    NotMeasured,
}

/// One gate for one direction or phase.
#[derive(Clone, Debug, Serialize)]
pub struct GateResult {
    /// `expect-min upload`, `expect-max-loaded-latency bidir`.
    pub name: String,
    /// The outcome.
    pub status: GateStatus,
    /// What was measured (bit/s or ms); `None` when not measured.
    pub measured: Option<f64>,
    /// The limit.
    pub limit: f64,
    /// One line a user reads.
    pub message: String,
}

/// Judges every gate against the series.
pub fn check(gates: &Gates, series: &SeriesResult) -> Vec<GateResult> {
    let mut out = Vec::new();
    for (direction, phase, min) in
        [("upload", Phase::Upload, gates.min_upload_bps), ("download", Phase::Download, gates.min_download_bps)]
    {
        let Some(min) = min else { continue };
        let name = format!("expect-min {direction}");
        let measured = series.stats(phase, direction).map(|s| s.throughput_bps.mean);
        out.push(match measured {
            None => not_measured(name, min, format!("the {direction} phase measured nothing")),
            Some(m) if m >= min => GateResult {
                message: format!("{direction} {} ≥ {}", rate(m), rate(min)),
                name,
                status: GateStatus::Met,
                measured: Some(m),
                limit: min,
            },
            Some(m) => GateResult {
                message: format!("{direction} {} is below the expected {}", rate(m), rate(min)),
                name,
                status: GateStatus::Missed,
                measured: Some(m),
                limit: min,
            },
        });
    }
    if let Some(max) = gates.max_loaded_latency_ms {
        for phase in [Phase::Upload, Phase::Download, Phase::Bidir] {
            let Some(first) = directions_of(series, phase) else { continue };
            let name = format!("expect-max-loaded-latency {}", phase.name());
            let measured = series.stats(phase, first).and_then(|s| s.loaded_latency_ms).map(|l| l.mean);
            out.push(match measured {
                None => not_measured(name, max, format!("{} has no loaded latency (--no-latency?)", phase.name())),
                Some(m) if m <= max => GateResult {
                    message: format!("{} loaded latency {m:.2} ms ≤ {max} ms", phase.name()),
                    name,
                    status: GateStatus::Met,
                    measured: Some(m),
                    limit: max,
                },
                Some(m) => GateResult {
                    message: format!("{} loaded latency {m:.2} ms is above the allowed {max} ms", phase.name()),
                    name,
                    status: GateStatus::Missed,
                    measured: Some(m),
                    limit: max,
                },
            });
        }
    }
    out
}

/// The first direction a phase has statistics for (the phase ran).
fn directions_of(series: &SeriesResult, phase: Phase) -> Option<&'static str> {
    series.statistics.iter().find(|s| s.phase == phase).map(|s| s.direction)
}

fn not_measured(name: String, limit: f64, why: String) -> GateResult {
    GateResult { name, status: GateStatus::NotMeasured, measured: None, limit, message: why }
}

/// The exit status: 2 when the suite could not test (a phase failed, a gate's figure is
/// missing), else 1 when a gate was missed, else 0.
pub fn exit_code(series: &SeriesResult, results: &[GateResult]) -> i32 {
    if !series.all_ok() || results.iter().any(|g| g.status == GateStatus::NotMeasured) {
        2
    } else if results.iter().any(|g| g.status == GateStatus::Missed) {
        1
    } else {
        0
    }
}

/// The gates as a JUnit XML document (one `testcase` per gate; GitLab and Jenkins show them
/// as test results): a missed gate is a `failure`, an unmeasured one an `error`.
pub fn junit_xml(results: &[GateResult], seconds: f64) -> String {
    let failures = results.iter().filter(|g| g.status == GateStatus::Missed).count();
    let errors = results.iter().filter(|g| g.status == GateStatus::NotMeasured).count();
    let mut s = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    s.push_str(&format!(
        "<testsuites name=\"wireperf\" tests=\"{}\" failures=\"{failures}\" errors=\"{errors}\" time=\"{seconds:.1}\">\n",
        results.len()
    ));
    s.push_str(&format!(
        "  <testsuite name=\"wireperf suite\" tests=\"{}\" failures=\"{failures}\" errors=\"{errors}\" time=\"{seconds:.1}\">\n",
        results.len()
    ));
    for g in results {
        s.push_str(&format!("    <testcase classname=\"wireperf.gates\" name=\"{}\"", xml(&g.name)));
        match g.status {
            GateStatus::Met => s.push_str(&format!("><system-out>{}</system-out></testcase>\n", xml(&g.message))),
            GateStatus::Missed => s.push_str(&format!(
                "><failure message=\"{}\" type=\"gate\">{}</failure></testcase>\n",
                xml(&g.message),
                xml(&g.message)
            )),
            GateStatus::NotMeasured => s.push_str(&format!(
                "><error message=\"{}\" type=\"not-measured\">{}</error></testcase>\n",
                xml(&g.message),
                xml(&g.message)
            )),
        }
    }
    s.push_str("  </testsuite>\n</testsuites>\n");
    s
}

/// Escapes text for an XML attribute or element.
fn xml(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;").replace('\'', "&apos;")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::series::{DirectionStats, SeriesResult};
    use wireperf_stats::Summary;

    fn series(up: f64, down: f64, latency: Option<f64>) -> SeriesResult {
        let st = |phase, direction, v: f64| DirectionStats {
            phase,
            direction,
            throughput_bps: Summary::of(&[v], 95.0).unwrap(),
            retransmits: Summary::of(&[0.0], 95.0).unwrap(),
            loaded_latency_ms: latency.and_then(|l| Summary::of(&[l], 95.0)),
        };
        SeriesResult {
            rounds: Vec::new(),
            warmup: 0,
            statistics: vec![st(Phase::Upload, "upload", up), st(Phase::Download, "download", down)],
            confidence: None,
            interrupted: false,
        }
    }

    #[test]
    fn gates_are_met_missed_or_not_measured() {
        let gates =
            Gates { min_upload_bps: Some(900e6), min_download_bps: Some(900e6), max_loaded_latency_ms: Some(5.0) };
        let r = check(&gates, &series(940e6, 600e6, Some(3.0)));
        let st: Vec<(&str, GateStatus)> = r.iter().map(|g| (g.name.as_str(), g.status)).collect();
        assert_eq!(
            st,
            [
                ("expect-min upload", GateStatus::Met),
                ("expect-min download", GateStatus::Missed),
                ("expect-max-loaded-latency upload", GateStatus::Met),
                ("expect-max-loaded-latency download", GateStatus::Met),
            ]
        );
        assert_eq!(r[1].message, "download 600 Mbit/s is below the expected 900 Mbit/s");
        let r = check(&gates, &series(940e6, 950e6, None));
        assert_eq!(r[2].status, GateStatus::NotMeasured);
    }

    #[test]
    fn junit_lists_each_gate_as_a_case() {
        let gates = Gates { min_upload_bps: Some(900e6), min_download_bps: Some(900e6), ..Default::default() };
        let r = check(&gates, &series(940e6, 600e6, None));
        let x = junit_xml(&r, 6.0);
        assert!(x.contains("tests=\"2\" failures=\"1\" errors=\"0\""), "{x}");
        assert!(x.contains("<testcase classname=\"wireperf.gates\" name=\"expect-min upload\"><system-out>"), "{x}");
        assert!(x.contains("<failure message=\"download 600 Mbit/s is below the expected 900 Mbit/s\""), "{x}");
        assert_eq!(xml("a<b & \"c\""), "a&lt;b &amp; &quot;c&quot;");
    }
}
