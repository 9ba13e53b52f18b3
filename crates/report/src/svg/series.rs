//! Turning test reports into chart models: per-stream and summed throughput, TCP sender
//! figures (retransmits, cwnd), and the per-run overlay for comparisons.
//!
//! Omitted (`-O`) intervals are left out: they are the warm-up the user asked not to count.

use wireperf_protocol::schema::{Interval, IntervalStream, TestReport};

use super::chart::{Chart, HALF, Sample, Series, SeriesKind, WIDE};
use super::palette;
use super::scale::AxisUnit;
use crate::view::RunView;

/// The charts of one phase of one run.
#[derive(Clone, Debug, PartialEq)]
pub struct PhaseCharts {
    /// Throughput per stream plus the sum(s).
    pub throughput: Chart,
    /// TCP senders: retransmits per interval (bars), when the report has them.
    pub retransmits: Option<Chart>,
    /// TCP senders: congestion window (lines), when the report has it.
    pub cwnd: Option<Chart>,
    /// `--latency`: the probes' round trips over the test, when the report has them.
    pub latency: Option<Chart>,
    /// Both hosts' per-CPU load, when the phase was watched ([`super::cpu`]).
    pub cpu: Vec<Chart>,
}

impl PhaseCharts {
    /// The charts in page order.
    pub fn iter(&self) -> impl Iterator<Item = &Chart> {
        std::iter::once(&self.throughput)
            .chain(self.retransmits.as_ref())
            .chain(self.cwnd.as_ref())
            .chain(self.latency.as_ref())
            .chain(&self.cpu)
    }
}

/// True when the report was written by the client (the usual case; a server's `-J` document
/// has `accepted_connection` instead of `connecting_to`).
fn client_side(report: &TestReport) -> bool {
    report.start.accepted_connection.is_none()
}

/// True when data on a stream with this `sender` flag flows client → server.
fn is_upload(report: &TestReport, sender: bool) -> bool {
    sender == client_side(report)
}

/// True when both directions ran at once.
fn is_bidir(report: &TestReport) -> bool {
    report.intervals.iter().any(|i| i.sum_bidir_reverse.is_some())
}

fn arrow(upload: bool) -> &'static str {
    if upload { "↑" } else { "↓" }
}

/// Stream ids in order of first appearance, with their sender flag.
fn streams(report: &TestReport) -> Vec<(i32, bool)> {
    let mut out: Vec<(i32, bool)> = Vec::new();
    for s in report.intervals.iter().flat_map(|i| &i.streams) {
        if !out.iter().any(|(id, _)| *id == s.socket) {
            out.push((s.socket, s.sender));
        }
    }
    out
}

fn counted(report: &TestReport) -> impl Iterator<Item = &Interval> {
    report.intervals.iter().filter(|i| !i.sum.omitted)
}

fn stream_samples(report: &TestReport, socket: i32, value: impl Fn(&IntervalStream) -> Option<f64>) -> Vec<Sample> {
    counted(report)
        .flat_map(|i| i.streams.iter().filter(|s| s.socket == socket))
        .filter(|s| !s.omitted)
        .filter_map(|s| value(s).map(|v| Sample { start: s.start, end: s.end, value: v }))
        .collect()
}

fn stream_name(socket: i32, bidir: bool, upload: bool) -> String {
    if bidir { format!("stream {socket} {}", arrow(upload)) } else { format!("stream {socket}") }
}

/// Picks (start, end, bit/s) of one direction's sum from an interval.
type SumPick = dyn Fn(&Interval) -> Option<(f64, f64, f64)>;

/// Throughput: one line per stream and a bold sum per direction. A direction with a single
/// stream gets only its sum, since the stream line would sit exactly under it.
pub fn throughput_chart(id_prefix: &str, phase: &str, report: &TestReport) -> Chart {
    let bidir = is_bidir(report);
    let all = streams(report);
    let per_direction = |sender: bool| all.iter().filter(|(_, s)| *s == sender).count();
    let mut series = Vec::new();
    for (index, (socket, sender)) in all.iter().enumerate() {
        if per_direction(*sender) < 2 {
            continue;
        }
        series.push(Series {
            name: stream_name(*socket, bidir, is_upload(report, *sender)),
            colour: palette::series(index),
            kind: SeriesKind::Line,
            samples: stream_samples(report, *socket, |s| Some(s.bits_per_second)),
        });
    }
    let sum_samples = |pick: &SumPick| -> Vec<Sample> {
        counted(report).filter_map(pick).map(|(start, end, value)| Sample { start, end, value }).collect()
    };
    let forward = sum_samples(&|i| Some((i.sum.start, i.sum.end, i.sum.bits_per_second)));
    let forward_upload = report.intervals.first().is_none_or(|i| is_upload(report, i.sum.sender));
    series.push(Series {
        name: if bidir { format!("sum {}", arrow(forward_upload)) } else { "sum".to_string() },
        colour: palette::SUM,
        kind: SeriesKind::Emphasis,
        samples: forward,
    });
    if bidir {
        let reverse = sum_samples(&|i| i.sum_bidir_reverse.as_ref().map(|r| (r.start, r.end, r.bits_per_second)));
        series.push(Series {
            name: format!("sum {}", arrow(!forward_upload)),
            colour: palette::SUM_REVERSE,
            kind: SeriesKind::Emphasis,
            samples: reverse,
        });
    }
    let n = all.len();
    Chart {
        id: format!("{id_prefix}-throughput"),
        title: format!("{phase}: throughput"),
        description: format!(
            "Line chart of the throughput of the {phase} phase over time, {n} stream{}.",
            if n == 1 { "" } else { "s" }
        ),
        y_label: "Throughput".to_string(),
        y_unit: AxisUnit::BitsPerSecond,
        width: WIDE.0,
        height: WIDE.1,
        series,
    }
}

/// Sending TCP streams that report `value` at least once, as series of `kind`.
fn sender_series(report: &TestReport, kind: SeriesKind, value: fn(&IntervalStream) -> Option<f64>) -> Vec<Series> {
    let bidir = is_bidir(report);
    streams(report)
        .into_iter()
        .enumerate()
        .filter(|(_, (_, sender))| *sender)
        .filter_map(|(index, (socket, sender))| {
            let samples = stream_samples(report, socket, value);
            (!samples.is_empty()).then(|| Series {
                name: stream_name(socket, bidir, is_upload(report, sender)),
                colour: palette::series(index),
                kind,
                samples,
            })
        })
        .collect()
}

/// Retransmits per interval of each sending TCP stream (bars); `None` for UDP or receivers.
pub fn retransmits_chart(id_prefix: &str, phase: &str, report: &TestReport) -> Option<Chart> {
    // Counts fit f64 exactly far beyond any interval's retransmits.
    let series = sender_series(report, SeriesKind::Bar, |s| s.retransmits.map(|r| r as f64));
    (!series.is_empty()).then(|| Chart {
        id: format!("{id_prefix}-retransmits"),
        title: format!("{phase}: retransmits"),
        description: format!("Bar chart of TCP retransmits per interval for each sending stream of the {phase} phase."),
        y_label: "Retransmits".to_string(),
        y_unit: AxisUnit::Count,
        width: HALF.0,
        height: HALF.1,
        series,
    })
}

/// Congestion window of each sending TCP stream (lines); `None` for UDP or receivers.
pub fn cwnd_chart(id_prefix: &str, phase: &str, report: &TestReport) -> Option<Chart> {
    let series = sender_series(report, SeriesKind::Line, |s| s.snd_cwnd.map(|c| c as f64));
    (!series.is_empty()).then(|| Chart {
        id: format!("{id_prefix}-cwnd"),
        title: format!("{phase}: congestion window"),
        description: format!("Line chart of the TCP congestion window of each sending stream of the {phase} phase."),
        y_label: "Congestion window".to_string(),
        y_unit: AxisUnit::Bytes,
        width: HALF.0,
        height: HALF.1,
        series,
    })
}

/// All charts of one phase.
pub fn phase_charts(id_prefix: &str, phase: &str, report: &TestReport) -> PhaseCharts {
    PhaseCharts {
        throughput: throughput_chart(id_prefix, phase, report),
        retransmits: retransmits_chart(id_prefix, phase, report),
        cwnd: cwnd_chart(id_prefix, phase, report),
        latency: latency_chart(id_prefix, phase, report),
        cpu: Vec::new(),
    }
}

/// `--latency`: each loaded probe's round trip at its time (seconds from the first loaded
/// probe, about the start of the streams), with the idle median as a flat line to read the
/// added latency against. Read from the report's `wireperf_latency` key as the client wrote
/// it; lost probes have no point. `None` without loaded round trips.
pub fn latency_chart(id_prefix: &str, phase: &str, report: &TestReport) -> Option<Chart> {
    let l = report.wireperf_latency.as_ref()?;
    let probes = l.get("series")?.as_array()?;
    let loaded: Vec<(f64, f64)> = probes
        .iter()
        .filter(|p| p.get("phase").and_then(|v| v.as_str()) != Some("idle"))
        .filter_map(|p| Some((p.get("at_ms")?.as_f64()?, p.get("rtt_ms")?.as_f64()?)))
        .collect();
    let t0 = loaded.first()?.0;
    let samples: Vec<Sample> = loaded
        .iter()
        .map(|(at, rtt)| {
            let t = (at - t0) / 1000.0;
            Sample { start: t, end: t, value: *rtt }
        })
        .collect();
    let span = samples.last().map_or(0.0, |s| s.end);
    let load = l.get("phase").and_then(|v| v.as_str()).unwrap_or("loaded");
    let mut series =
        vec![Series { name: format!("{load} probes"), colour: palette::series(0), kind: SeriesKind::Line, samples }];
    if let Some(idle) = l.pointer("/idle_ms/p50").and_then(|v| v.as_f64()) {
        series.push(Series {
            name: "idle p50".to_string(),
            colour: palette::SUM_REVERSE,
            kind: SeriesKind::Line,
            samples: vec![Sample { start: 0.0, end: 0.0, value: idle }, Sample { start: span, end: span, value: idle }],
        });
    }
    Some(Chart {
        id: format!("{id_prefix}-latency"),
        title: format!("{phase}: round trip under load"),
        description: format!(
            "Line chart of the latency probes' round trips during the {phase} phase, with the idle median for reference."
        ),
        y_label: "Round trip".to_string(),
        y_unit: AxisUnit::Milliseconds,
        width: HALF.0,
        height: HALF.1,
        series,
    })
}

/// Phase names in order of first appearance that at least two runs have.
pub fn shared_phases(runs: &[RunView]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for (name, _) in runs.iter().flat_map(|r| &r.phases) {
        if !names.contains(name) {
            names.push(name.clone());
        }
    }
    names.into_iter().filter(|name| runs.iter().filter(|r| r.phase(name).is_some()).count() >= 2).collect()
}

/// For two or more runs: per shared phase, the summed throughput of each run on one chart
/// (the first direction's sum for `--bidir`). Colours follow the run's position.
pub fn overlay_charts(runs: &[RunView]) -> Vec<Chart> {
    shared_phases(runs)
        .into_iter()
        .map(|phase| {
            let series = runs
                .iter()
                .enumerate()
                .filter_map(|(index, run)| {
                    let report = run.phase(&phase)?;
                    Some(Series {
                        name: run.display_name(),
                        colour: palette::series(index),
                        kind: SeriesKind::Line,
                        samples: counted(report)
                            .map(|i| Sample { start: i.sum.start, end: i.sum.end, value: i.sum.bits_per_second })
                            .collect(),
                    })
                })
                .collect::<Vec<_>>();
            Chart {
                id: format!("compare-{}-throughput", crate::escape::slug(&phase)),
                title: format!("{phase}: throughput by run"),
                description: format!(
                    "Line chart comparing the summed throughput of the {phase} phase across {} runs.",
                    series.len()
                ),
                y_label: "Throughput".to_string(),
                y_unit: AxisUnit::BitsPerSecond,
                width: WIDE.0,
                height: WIDE.1,
                series,
            }
        })
        .collect()
}

#[cfg(test)]
mod latency_tests {
    use super::*;

    #[test]
    fn latency_chart_plots_loaded_probes_from_the_first_one_with_the_idle_median() {
        let mut r = TestReport::default();
        assert!(latency_chart("p", "upload", &r).is_none());
        r.wireperf_latency = Some(serde_json::json!({
            "phase": "upload",
            "idle_ms": {"p50": 0.2},
            "series": [
                {"at_ms": 0.0, "phase": "idle", "rtt_ms": 0.2},
                {"at_ms": 1000.0, "phase": "upload", "rtt_ms": 40.0},
                {"at_ms": 1100.0, "phase": "upload", "rtt_ms": null},
                {"at_ms": 1200.0, "phase": "upload", "rtt_ms": 60.0}
            ]
        }));
        let c = latency_chart("p", "upload", &r).unwrap();
        assert_eq!(c.series[0].name, "upload probes");
        let pts: Vec<(f64, f64)> = c.series[0].samples.iter().map(|s| (s.start, s.value)).collect();
        assert_eq!(pts.len(), 2);
        assert!((pts[1].0 - 0.2).abs() < 1e-9 && pts[1].1 == 60.0, "{pts:?}");
        assert_eq!(c.series[1].samples[0].value, 0.2);
        assert_eq!(c.y_unit, AxisUnit::Milliseconds);
        let html = crate::svg::render_svg(&c);
        assert!(html.contains("round trip under load"), "{html}");
    }
}
