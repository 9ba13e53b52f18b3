//! `wireperf -c HOST`: run one test and print it as iperf3 would.

use crate::iperf::lower::OutputOpts;
use crate::json_out::JsonObserver;
use crate::output::Sink;
use crate::text_out::TextObserver;
use crate::why;
use std::time::Duration;
use wireperf_doctor::watch::Watch;
use wireperf_engine::{ClientConfig, Observer, run_client};
use wireperf_suite::bottleneck::{self, PeerWatch};

/// Runs the client; returns the exit status. `save` is the history database to store the run
/// in (`Some(None)`: the default one; `None`: `--no-save`). `why` (`--why`) watches the hosts
/// and prints the bottleneck of each direction after the summary.
pub fn run(cfg: &ClientConfig, out: &OutputOpts, save: Option<Option<&std::path::Path>>, why: bool) -> i32 {
    let sink = match Sink::open(out.logfile.as_deref(), out.timestamps.clone(), out.forceflush) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("wireperf: error - unable to open log file: {e}");
            return 1;
        }
    };
    let interrupt = crate::signals::interrupt_flag();
    let inner: Box<dyn Observer + Send> = if out.json {
        Box::new(JsonObserver::client(sink.clone(), out.json_stream))
    } else {
        Box::new(TextObserver::client(sink.clone(), out, &cfg.params))
    };
    let mut output = crate::debug_out::wrap(inner, out.debug);
    let mut obs = PeerWatch::new(output.as_mut());
    let interval = cfg.interval.unwrap_or(Duration::from_secs(1));
    let watch = if why { bottleneck::start_watch(bottleneck::peer_ip(&cfg.host, cfg.port), interval) } else { None };
    let outcome = run_client(cfg, &mut obs, &interrupt);
    let local = watch.map(Watch::stop);
    let verdicts = (why && outcome.error.is_none())
        .then(|| bottleneck::verdicts(&outcome.report, local.as_ref(), obs.far().as_ref()));
    let code = match &outcome.error {
        None => 0,
        Some(e) => {
            let msg = match e {
                wireperf_engine::EngineError::ClientTerminated => "interrupt - the client has terminated".to_string(),
                other => format!("error - {other}"),
            };
            if out.json {
                let mut report = outcome.report.clone();
                report.error = Some(e.to_string());
                JsonObserver::print_error(&sink, &report, out.json_stream);
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
    match &verdicts {
        Some(v) if out.json && out.json_stream => {
            sink.raw(&format!("{}\n", serde_json::json!({"event": "wireperf", "data": {"bottleneck": v}})));
        }
        Some(v) if out.json => {
            sink.raw(&wireperf_report::cjson::to_cjson_string(&why::json_with_verdicts(&outcome.report, v)));
        }
        Some(v) => sink.lines(&why::render_text(v), None),
        None if out.json && outcome.error.is_none() && !out.json_stream => {
            sink.raw(&wireperf_report::cjson::to_cjson_string(&outcome.report));
        }
        None => {}
    }
    sink.flush();
    if let Some(db) = save {
        save_run(db, &outcome);
    }
    code
}

/// Saves the run in the history. A side record: a failure to save warns but never changes the
/// result.
#[cfg(feature = "history")]
fn save_run(db: Option<&std::path::Path>, outcome: &wireperf_engine::Outcome) {
    let mut report = outcome.report.clone();
    if let Some(e) = &outcome.error {
        report.error.get_or_insert_with(|| e.to_string());
    }
    let cmdline = wireperf_store::current_command_line();
    if let Err(e) = wireperf_store::save_client_run(db, &report, &cmdline) {
        eprintln!("wireperf: warning - run not saved to history: {e}");
    }
}

/// A build without the history saves nothing; asked for a database by name, it says why.
#[cfg(not(feature = "history"))]
fn save_run(db: Option<&std::path::Path>, _outcome: &wireperf_engine::Outcome) {
    if let Some(db) = db {
        eprintln!(
            "wireperf: warning - run not saved to {}: this wireperf was built without the history (cargo feature `history`)",
            db.display()
        );
    }
}
