//! One in-process test end to end: a server, the client against it, both under time limits,
//! and the first checks every test needs (both ends succeeded, each observer saw the report
//! its end returned).

use super::flags::Flags;
use super::recorder::{Recorder, Seen};
use super::server::OneTestServer;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant};
use wireperf_engine::{ClientConfig, EngineTuning, run_client};
use wireperf_protocol::TestParams;
use wireperf_protocol::schema::TestReport;

/// Longest a client run may take before it is interrupted (as SIGINT would): every test here
/// is about a second of traffic, so this only ends a hung engine.
const CLIENT_LIMIT: Duration = Duration::from_secs(30);

/// Longest the server may take to end its test once the client's run returned: the server
/// finishes right after the client's last control message, so this too only ends a hang.
const SERVER_LIMIT: Duration = Duration::from_secs(10);

/// Both ends of one finished test.
#[derive(Debug)]
pub struct Run {
    /// The flags, for messages.
    pub what: String,
    /// The parameters the client sent.
    pub params: TestParams,
    /// The client's report (its `-J` document).
    pub client: TestReport,
    /// What the client's observer saw.
    pub client_seen: Seen,
    /// The server's report of the same test.
    pub server: TestReport,
    /// What the server's observer saw.
    pub server_seen: Seen,
}

/// Runs the test `flags` describe against a one-test server on 127.0.0.1, both ends tuned by
/// `tuning`, and checks that both ended well and that each observer's [`End`] report is the
/// report its end returned (so the checks on the reports hold for what renderers print too).
///
/// [`End`]: wireperf_engine::Event::End
pub fn run(what: &str, flags: &Flags, tuning: EngineTuning) -> Run {
    let server = OneTestServer::start(tuning);
    let cfg = flags.client(server.port, tuning);
    let started = Instant::now();
    let (outcome, client_seen) = bounded_client(&cfg);
    // Shown with `--nocapture`: what each case costs.
    eprintln!("{what}: the client ran {:.2} s", started.elapsed().as_secs_f64());
    let mut srv = server.finish(SERVER_LIMIT);
    assert_eq!(outcome.error, None, "{what}: the client failed; the server reported {srv:#?}");
    assert_eq!(srv.result, Ok(()), "{what}: the server's loop failed");
    assert_eq!(srv.tests.len(), 1, "{what}: the server served {} tests: {srv:#?}", srv.tests.len());
    let served = srv.tests.remove(0);
    assert_eq!(served.error, None, "{what}: the server's test {} failed", served.test_no);
    assert!(srv.notes.is_empty(), "{what}: the server noted {:?}", srv.notes);
    for (end, seen) in [("client", &client_seen), ("server", &srv.seen)] {
        assert!(seen.started && seen.failures.is_empty(), "{what}: the {end}'s observer saw {seen:#?}");
    }
    assert_eq!(client_seen.end.as_ref(), Some(&outcome.report), "{what}: the client's End event");
    assert_eq!(srv.seen.end.as_ref(), Some(&served.report), "{what}: the server's End event");
    Run {
        what: what.to_string(),
        params: flags.params().clone(),
        client: outcome.report,
        client_seen,
        server: served.report,
        server_seen: srv.seen,
    }
}

/// A client's outcome, its error as text (`EngineError` has no `PartialEq`).
pub struct ClientOutcome {
    /// The report as far as it got.
    pub report: TestReport,
    /// Why it failed, if it did.
    pub error: Option<String>,
}

/// Runs the client on this thread; a watchdog thread interrupts it past [`CLIENT_LIMIT`], and
/// the run then fails rather than hanging the test binary.
fn bounded_client(cfg: &ClientConfig) -> (ClientOutcome, Seen) {
    let interrupt = Arc::new(AtomicBool::new(false));
    let (done, finished) = mpsc::channel::<()>();
    let flag = Arc::clone(&interrupt);
    let watchdog = std::thread::spawn(move || {
        if let Err(RecvTimeoutError::Timeout) = finished.recv_timeout(CLIENT_LIMIT) {
            flag.store(true, Ordering::Relaxed);
        }
    });
    let mut recorder = Recorder::default();
    let outcome = run_client(cfg, &mut recorder, &interrupt);
    drop(done);
    watchdog.join().expect("the watchdog thread");
    assert!(!interrupt.load(Ordering::Relaxed), "the client did not finish within {CLIENT_LIMIT:?}");
    let error = outcome.error.map(|e| e.to_string());
    (ClientOutcome { report: outcome.report, error }, recorder.take())
}
