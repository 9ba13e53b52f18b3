//! `wireperf -c HOST --repeat N`: the same test N times back to back, then the statistics of
//! each direction over the counted tests (a wireperf extension; without `--repeat` nothing
//! here runs and the output is iperf3's).
//!
//! Each test is an ordinary client test ([`crate::iperf::client_cmd::test_in_series`]): printed as a
//! single test is, saved as the run it is. Its figures are read as the suite reads a phase's
//! ([`PhaseResult::from_report`]: each direction's receiver's goodput, the sender's
//! retransmits) and summed up by the suite's own [`statistics`] and [`judge`], so a client
//! series and a suite series give the same numbers for the same runs. A failed or interrupted
//! test ends the series: what ran is reported, and the exit status is that test's.

use crate::iperf::client_cmd::{self, Tested};
use crate::iperf::output::Sink;
use crate::iperf::run_spec::{ClientRun, OutputOpts, SaveTo};
use crate::iperf::series_summary::{Series, Stopped};
use crate::iperf::series_text;
use serde_json::{Value, json};
use std::sync::atomic::Ordering;
use wireperf_engine::ClientConfig;
use wireperf_protocol::TestParams;
use wireperf_report::text::prefix::prefix_lines;
use wireperf_suite::series::{ConfidenceOutcome, DirectionStats, RepeatConfig, judge, statistics};
use wireperf_suite::{Phase, PhaseResult, SuiteResult};

/// The suite phase a test's direction matches: `-R` download, `--bidir` both, else upload
/// (UDP too: the phase only names the directions).
fn phase_of(p: &TestParams) -> Phase {
    if p.bidirectional {
        Phase::Bidir
    } else if p.reverse {
        Phase::Download
    } else {
        Phase::Upload
    }
}

/// One test as a suite round of one phase: what [`statistics`] reads.
fn round(cfg: &ClientConfig, phase: Phase, t: &Tested) -> SuiteResult {
    let p = PhaseResult::from_report(phase, t.report.clone(), t.error.clone());
    SuiteResult::of_phases(cfg.host.clone(), cfg.port, cfg.params.time, cfg.params.parallel, vec![p])
}

/// The confidence target judged on `stats` of `counted` tests; the widest interval is named
/// by its direction alone (the test has one phase).
fn judged(stats: &[DirectionStats], repeat: &RepeatConfig, width: f64, counted: usize) -> ConfidenceOutcome {
    let widest = stats
        .iter()
        .filter_map(|s| Some((s.direction.to_string(), s.throughput_bps.relative_half_width()? * 100.0)))
        .max_by(|a, b| a.1.total_cmp(&b.1));
    ConfidenceOutcome { widest, ..judge(stats, repeat.level, width, counted) }
}

/// Runs the series `repeat` of `run`'s test; returns the exit status: 0 when every test
/// succeeded, else the failed test's (the usual 1; 0 when stdout's reader went away).
pub fn run(run: &ClientRun, repeat: &RepeatConfig) -> i32 {
    let (cfg, out) = (&*run.config, &run.output);
    if run.tui {
        eprintln!("wireperf: --tui ignored (--repeat runs several tests); plain output");
    }
    let sink = match client_cmd::open_sink(out) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let interrupt = crate::shared::signals::interrupt_flag();
    let phase = phase_of(&cfg.params);
    let (mut rounds, mut documents, mut saved) = (Vec::new(), Vec::new(), Vec::new());
    let (mut confidence, mut stopped, mut code) = (None, None, 0);
    for i in 0..repeat.rounds {
        if interrupt.load(Ordering::Relaxed) {
            stopped = Some(Stopped::Interrupted(i));
            code = i32::from(!wireperf_sys::stdout::reader_gone());
            break;
        }
        if !out.json {
            print_lines(&sink, out, &series_text::header(i, repeat));
        }
        let t = client_cmd::test_in_series(run, &sink, i == 0);
        rounds.push(round(cfg, phase, &t));
        documents.extend(t.document.clone());
        saved.extend(t.saved);
        if t.error.is_some() {
            let interrupted = interrupt.load(Ordering::Relaxed);
            stopped = Some(if interrupted { Stopped::Interrupted(i + 1) } else { Stopped::Failed(i + 1) });
            code = t.code;
            break;
        }
        if let Some(width) = repeat.width_pct {
            let counted = rounds.get(repeat.warmup..).unwrap_or_default();
            let c = judged(&statistics(counted, repeat.level), repeat, width, counted.len());
            let met = c.met;
            confidence = Some(c);
            if met {
                break;
            }
        }
    }
    let warmup = repeat.warmup.min(rounds.len());
    let counted_rounds = &rounds[warmup..];
    let counted = counted_rounds.iter().filter(|r| r.all_ok()).count();
    // A stopped series states figures only when there is a spread to state.
    let statistics =
        if stopped.is_none() || counted >= 2 { statistics(counted_rounds, repeat.level) } else { Vec::new() };
    let mut summary = Series { warmup, counted, statistics, confidence, stopped, saved, saved_series: None };
    if run.save != SaveTo::No {
        summary.saved_series = group(run.save.path(), &summary);
    }
    if out.json {
        sink.raw(&wireperf_report::cjson::to_cjson_string(&document(documents, &summary)));
    } else if !wireperf_sys::stdout::reader_gone() {
        print_lines(&sink, out, &series_text::render(&summary, repeat));
    }
    sink.flush();
    code
}

/// Groups the saved tests (two or more) into one history series with the statistics (each
/// test was saved when it ended, so a cut-short series keeps what ran); `None` after a
/// warning when it cannot.
#[cfg(feature = "history")]
fn group(db: Option<&std::path::Path>, s: &Series) -> Option<i64> {
    let ids: Vec<wireperf_store::RunId> = s.saved.iter().copied().map(wireperf_store::RunId).collect();
    // One test (a series cut short at its first) stays the plain run it is.
    if ids.len() < 2 {
        return None;
    }
    let head = wireperf_store::NewSeries {
        kind: wireperf_store::RunKind::Client,
        command_line: Some(wireperf_store::current_command_line()),
        label: None,
        warmup: s.warmup,
        statistics: serde_json::to_value(&s.statistics).unwrap_or_default(),
        confidence: s.confidence.as_ref().and_then(|c| serde_json::to_value(c).ok()),
    };
    match wireperf_store::Store::open_default(db).and_then(|mut store| store.group_series(&head, &ids)) {
        Ok(id) => Some(id.0),
        Err(e) => {
            eprintln!("wireperf: warning - the tests were saved but not grouped as one series: {e}");
            None
        }
    }
}

/// A build without the history saved no test, so there is nothing to group.
#[cfg(not(feature = "history"))]
fn group(_db: Option<&std::path::Path>, _s: &Series) -> Option<i64> {
    None
}

/// Prints whole lines with the prefixes the tests' lines have (`--timestamps`, `-T`).
fn print_lines(sink: &Sink, out: &OutputOpts, text: &str) {
    let stamp = out.timestamps.as_deref().map(|f| wireperf_sys::time::strftime_local(f).unwrap_or_default());
    sink.raw(&prefix_lines(text, stamp.as_deref(), out.title.as_deref()));
}

/// The -J document of a series: every test's own document, then the statistics.
fn document(runs: Vec<Value>, s: &Series) -> Value {
    json!({
        "runs": runs,
        "warmup": s.warmup,
        "statistics": s.statistics,
        "confidence": s.confidence,
        "interrupted": matches!(s.stopped, Some(Stopped::Interrupted(_))),
        "saved_runs": s.saved,
        "saved_series": s.saved_series,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_phase_names_the_directions_of_the_test() {
        let p = |reverse, bidirectional| TestParams { reverse, bidirectional, ..Default::default() };
        assert_eq!(phase_of(&p(false, false)), Phase::Upload);
        assert_eq!(phase_of(&p(true, false)), Phase::Download);
        assert_eq!(phase_of(&p(false, true)), Phase::Bidir);
    }

    #[test]
    fn the_document_keeps_every_run_and_names_the_widest_by_direction() {
        let cfg = ClientConfig::new("h".to_string(), TestParams::default());
        let tested = |bps: f64| {
            let mut report: wireperf_protocol::schema::TestReport = Default::default();
            report.end.sum_received = Some(wireperf_protocol::schema::Summary {
                end: 1.0,
                seconds: 1.0,
                bytes: (bps / 8.0) as u64,
                bits_per_second: bps,
                ..Default::default()
            });
            Tested { code: 0, report, error: None, document: Some(json!({"end": {}})), saved: Some(7) }
        };
        let rounds: Vec<SuiteResult> =
            [900.0, 1000.0, 1100.0].iter().map(|&b| round(&cfg, Phase::Upload, &tested(b))).collect();
        let stats = statistics(&rounds, 95.0);
        assert_eq!(stats.len(), 1);
        assert_eq!((stats[0].direction, stats[0].throughput_bps.mean), ("upload", 1000.0));
        let repeat = RepeatConfig { rounds: 3, warmup: 0, level: 95.0, width_pct: Some(5.0) };
        let c = judged(&stats, &repeat, 5.0, 3);
        assert!(!c.met);
        assert_eq!(c.widest.as_ref().map(|w| w.0.as_str()), Some("upload"));
        let s = Series {
            warmup: 0,
            counted: 3,
            statistics: stats,
            confidence: Some(c),
            stopped: None,
            saved: vec![7, 8, 9],
            saved_series: None,
        };
        let doc = document(vec![json!({"end": {}}); 3], &s);
        assert_eq!(doc["runs"].as_array().map(Vec::len), Some(3));
        assert_eq!(doc["statistics"][0]["throughput_bps"]["n"], 3);
        assert_eq!(doc["confidence"]["met"], false);
        assert_eq!((doc["interrupted"].clone(), doc["saved_runs"].clone()), (json!(false), json!([7, 8, 9])));
    }
}
