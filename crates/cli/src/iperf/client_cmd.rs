//! `wireperf -c HOST`: run one test and print it as iperf3 would. A series (`--repeat`,
//! [`crate::iperf::series`]) runs [`test_in_series`] once per test.

use crate::iperf::json_out::{JsonMode, JsonObserver};
use crate::iperf::live_hosts::LiveHosts;
use crate::iperf::output::{Captured, Sink};
use crate::iperf::run_spec::{ClientRun, OutputOpts, SaveTo};
use crate::iperf::text_out::TextObserver;
use std::io::{IsTerminal, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use wireperf_bottleneck::Watch;
use wireperf_bottleneck::engine_watch::{self as bottleneck, PeerWatch, WatchReply};
use wireperf_bottleneck::why_output as why;
use wireperf_engine::{ClientConfig, EngineError, Observer, Outcome, run_client, run_client_finishing};
use wireperf_latency::engine_probe::{LatencyConfig, LatencyProbe};
use wireperf_latency::{LatencySummary, Phase};
use wireperf_protocol::schema::TestReport;
use wireperf_tui::{Controls, LiveView};

/// Whether `--tui` can take the screen; says why not on stderr when it cannot.
fn live_view_fits(out: &OutputOpts) -> bool {
    let why_not = if out.json {
        Some("-J output")
    } else if out.debug {
        Some("-d writes to the terminal")
    } else if !std::io::stdout().is_terminal() {
        Some("stdout is not a terminal")
    } else {
        None
    };
    if let Some(why) = why_not {
        eprintln!("wireperf: --tui ignored ({why}); plain output");
    }
    why_not.is_none()
}

/// Runs the test under the live view: its quit key ends the test as if time were up, a second
/// one (or SIGTERM) interrupts it. The terminal is restored before this returns. The server is
/// asked for its watch samples (as `--why` does) so the view can show its CPU; a stock iperf3
/// server ignores the request and the view says the far side was not seen.
fn run_live(cfg: &ClientConfig, obs: Box<dyn Observer + Send>, interrupt: &Arc<AtomicBool>, latency: Probe) -> Ran {
    let controls = Controls { finish: Arc::new(AtomicBool::new(false)), interrupt: Arc::clone(interrupt) };
    let view = match LiveView::start(controls.clone()) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("wireperf: --tui unavailable ({e}); plain output");
            let mut obs = obs;
            return run_plain(cfg, obs.as_mut(), interrupt, latency, 0);
        }
    };
    let mut live_obs = view.observer(obs, Some(Box::new(LiveHosts::start())));
    let mut peer = PeerWatch::new(&mut live_obs);
    let mut watched = cfg.clone();
    watched.params.wireperf_watch = true;
    let mut probe = LatencyProbe::new(&mut peer, &cfg.host, cfg.port, latency);
    let outcome = run_client_finishing(&watched, &mut probe, interrupt, &controls.finish);
    let latency = probe.finish(&outcome.report);
    let far = (peer.far(), peer.declined());
    drop(live_obs);
    if let Err(e) = view.close() {
        eprintln!("wireperf: warning - live view: {e}");
    }
    (outcome, far, latency)
}

/// The latency probes' phase and settings (`--latency`), or `None`.
type Probe = Option<(Phase, LatencyConfig)>;

/// A finished run: the outcome, the far side's watch reply (and whether it declined to share
/// its host), the latency figures.
type Ran = (Outcome, (Option<WatchReply>, bool), Option<LatencySummary>);

/// Pause between the starts of a test a server refused or found busy (see [`run_plain`]).
const BUSY_PAUSE: Duration = Duration::from_millis(200);

/// Runs the test with plain output; the far side's watch samples and the latency figures
/// come back with it. A start refused or answered "busy" is tried again up to `busy_retries`
/// times: a stock iperf3 server re-opens its listener after each test and is busy while it
/// finishes the last one, which the next test of a series meets (nothing is printed before a
/// test has started, so a retried start leaves no trace).
fn run_plain(
    cfg: &ClientConfig,
    obs: &mut dyn Observer,
    interrupt: &AtomicBool,
    latency: Probe,
    busy_retries: u32,
) -> Ran {
    let mut peer = PeerWatch::new(obs);
    let mut probe = LatencyProbe::new(&mut peer, &cfg.host, cfg.port, latency);
    let mut outcome = run_client(cfg, &mut probe, interrupt);
    for _ in 0..busy_retries {
        let busy = matches!(outcome.error, Some(EngineError::Connect(_) | EngineError::AccessDenied));
        if !busy || interrupt.load(Ordering::Relaxed) {
            break;
        }
        std::thread::sleep(BUSY_PAUSE);
        outcome = run_client(cfg, &mut probe, interrupt);
    }
    let latency = probe.finish(&outcome.report);
    (outcome, (peer.far(), peer.declined()), latency)
}

/// What a test of a series left.
pub struct Tested {
    /// The exit status a single `wireperf -c` would have ended with.
    pub code: i32,
    /// The test's report, with its `error` when it failed (as saved).
    pub report: TestReport,
    /// Why it failed.
    pub error: Option<String>,
    /// With -J: the document a single test prints (none when stdout's reader went away).
    pub document: Option<serde_json::Value>,
    /// The run's id in the history, when it was saved.
    pub saved: Option<i64>,
}

/// The log file or stdout; says why not and gives the exit status when the log file does not
/// open.
pub fn open_sink(out: &OutputOpts) -> Result<Sink, i32> {
    Sink::open(out.logfile.as_deref(), out.timestamps.clone(), out.forceflush).map_err(|e| {
        eprintln!("wireperf: error - unable to open log file: {e}");
        1
    })
}

/// Runs the client's one test; returns the exit status.
pub fn run(run: &ClientRun) -> i32 {
    let out = &run.output;
    let live = run.tui && live_view_fits(out);
    // In the live view the text output waits in memory and is printed when the screen is back
    // (a log file gets it as it comes, as without the view).
    let (sink, captured) = if live && out.logfile.is_none() {
        let (s, c) = Sink::memory(out.timestamps.clone());
        (s, Some(c))
    } else {
        match open_sink(out) {
            Ok(s) => (s, None),
            Err(code) => return code,
        }
    };
    one_test(run, &sink, Screen { live, captured, keep_document: false, busy_retries: 0 }).code
}

/// One test of a series: printed to `sink` as a single test is, except that its -J document is
/// handed back rather than printed; the plain output only (the live view is for one test). A
/// start the server refuses or finds busy is retried for two seconds unless `first`.
pub fn test_in_series(run: &ClientRun, sink: &Sink, first: bool) -> Tested {
    let busy_retries = if first { 0 } else { 10 };
    one_test(run, sink, Screen { live: false, captured: None, keep_document: true, busy_retries })
}

/// How a test meets the terminal.
struct Screen {
    /// Under the live view.
    live: bool,
    /// The text output kept while the live view has the screen.
    captured: Option<Captured>,
    /// -J: hand the document back instead of printing it.
    keep_document: bool,
    /// See [`run_plain`].
    busy_retries: u32,
}

/// Runs one test and prints it; see [`run`].
fn one_test(run: &ClientRun, sink: &Sink, screen: Screen) -> Tested {
    let (cfg, out) = (&*run.config, &run.output);
    let (why, latency, save) = (run.why, run.latency, &run.save);
    let (live, captured) = (screen.live, screen.captured);
    let sink = sink.clone();
    let interrupt = crate::shared::signals::interrupt_flag();
    let inner: Box<dyn Observer + Send> = if out.json {
        Box::new(JsonObserver::client(sink.clone(), JsonMode::of(out)))
    } else {
        Box::new(TextObserver::client(sink.clone(), out, &cfg.params))
    };
    let mut output = crate::iperf::debug_out::wrap(inner, out.debug);
    let interval = cfg.interval.unwrap_or(Duration::from_secs(1));
    let watch = if why { bottleneck::start_watch(bottleneck::peer_ip(&cfg.host, cfg.port), interval) } else { None };
    let probe = latency.map(|l| (Phase::of_test(cfg.params.reverse, cfg.params.bidirectional), l));
    let (mut outcome, (far, declined), latency) = if live {
        run_live(cfg, output, &interrupt, probe)
    } else {
        run_plain(cfg, output.as_mut(), &interrupt, probe, screen.busy_retries)
    };
    if let Some(l) = &latency {
        outcome.report.wireperf_latency = Some(l.to_json_full());
    }
    let local = watch.map(Watch::stop);
    if let Some(c) = captured {
        let mut stdout = wireperf_sys::stdout::Stdout;
        let _ = stdout.write_all(&c.take());
        let _ = stdout.flush();
    }
    let verdicts = (why && outcome.error.is_none()).then(|| {
        let mut v = bottleneck::verdicts(&outcome.report, local.as_ref(), far.as_ref());
        if declined {
            bottleneck::note_declined(&mut v);
        }
        v
    });
    let (code, failed_document) = print_failure(&outcome, out, &sink, screen.keep_document);
    let mut document = failed_document;
    let watched = why::Watched {
        client: local.as_ref(),
        server: far.as_ref().map(|r| &r.series),
        server_host: far.as_ref().and_then(|r| r.host.as_ref()),
    };
    match &verdicts {
        Some(v) if out.json && out.json_stream => {
            sink.raw(&format!("{}\n", serde_json::json!({"event": "wireperf", "data": why::extension(v, watched)})));
        }
        Some(v) if out.json && screen.keep_document => {
            document = Some(why::json_with_verdicts(&outcome.report, v, watched));
        }
        Some(v) if out.json => {
            sink.raw(&wireperf_report::cjson::to_cjson_string(&why::json_with_verdicts(&outcome.report, v, watched)));
        }
        Some(v) => sink.lines(&why::render_text(v, watched), None),
        None if out.json && outcome.error.is_none() && screen.keep_document => {
            document = serde_json::to_value(&outcome.report).ok();
        }
        None if out.json && outcome.error.is_none() && JsonMode::of(out).document => {
            sink.raw(&wireperf_report::cjson::to_cjson_string(&outcome.report));
        }
        None => {}
    }
    if let Some(l) = &latency {
        print_latency(l, out, &sink);
    }
    sink.flush();
    let mut report = outcome.report;
    let error = outcome.error.as_ref().map(ToString::to_string);
    if let Some(e) = &error {
        report.error.get_or_insert_with(|| e.clone());
    }
    let saved = (*save != SaveTo::No).then(|| {
        let watched = verdicts.as_ref().and_then(|v| serde_json::to_value(v).ok()).map(|v| {
            let far_reply = far.as_ref();
            (v, bottleneck::cpu_load(local.as_ref(), far_reply))
        });
        save_run(save.path(), &report, watched)
    });
    let saved = saved.flatten();
    Tested { code, report, error, document, saved }
}

/// Says why the test failed: on stderr (or in the log file), or as -J's document with its
/// `error` (handed back with `keep_document`). The exit status (0 without a failure, and when
/// stdout's reader went away), and the document kept.
fn print_failure(
    outcome: &Outcome,
    out: &OutputOpts,
    sink: &Sink,
    keep_document: bool,
) -> (i32, Option<serde_json::Value>) {
    let mut document = None;
    let code = match &outcome.error {
        None => 0,
        // Interrupted because stdout's reader went away: end without a word (main exits 0).
        Some(_) if wireperf_sys::stdout::reader_gone() => 0,
        Some(e) => {
            let msg = match e {
                wireperf_engine::EngineError::ClientTerminated => "interrupt - the client has terminated".to_string(),
                other => format!("error - {other}"),
            };
            if out.json {
                let mut report = outcome.report.clone();
                report.error = Some(e.to_string());
                if keep_document {
                    document = serde_json::to_value(&report).ok();
                } else {
                    JsonObserver::print_error(sink, &report, JsonMode::of(out));
                }
            } else {
                sink.flush();
                let line = format!("wireperf: {msg}\n");
                if out.logfile.is_some() {
                    sink.lines(&line, None);
                } else {
                    eprint!("{line}");
                }
            }
            1
        }
    };
    (code, document)
}

/// The latency figures after the test: a `wireperf` event in a JSON stream, text below the
/// summary (in a -J document they are under `wireperf_latency` already).
fn print_latency(l: &LatencySummary, out: &OutputOpts, sink: &Sink) {
    if out.json && out.json_stream {
        sink.raw(&format!("{}\n", serde_json::json!({"event": "wireperf", "data": {"latency": l.to_json_full()}})));
    } else if !out.json {
        sink.lines(&format!("\n{}", l.text()), None);
    }
}

/// Saves the run (its report with its error) in the history and gives its id. A side record:
/// a failure to save warns but never changes the result.
#[cfg(feature = "history")]
fn save_run(
    db: Option<&std::path::Path>,
    report: &TestReport,
    watched: Option<(serde_json::Value, serde_json::Value)>,
) -> Option<i64> {
    let cmdline = wireperf_store::current_command_line();
    match wireperf_store::save_client_run(db, report, &cmdline, watched) {
        Ok(id) => Some(id.0),
        Err(e) => {
            eprintln!("wireperf: warning - run not saved to history: {e}");
            None
        }
    }
}

/// A build without the history saves nothing; asked for a database by name, it says why.
#[cfg(not(feature = "history"))]
fn save_run(
    db: Option<&std::path::Path>,
    _report: &TestReport,
    _watched: Option<(serde_json::Value, serde_json::Value)>,
) -> Option<i64> {
    if let Some(db) = db {
        eprintln!(
            "wireperf: warning - run not saved to {}: this wireperf was built without the history (cargo feature `history`)",
            db.display()
        );
    }
    None
}
