//! A wireperf server in this process that serves one test and stops.
//!
//! It is configured as `wireperf -s -1 -B 127.0.0.1 --idle-timeout 20` lowers
//! (crates/cli/src/iperf/lower_server.rs), on port 0 so the kernel picks a free port and tests
//! running at once never collide (the selftest binds its in-process server the same way). Two
//! bounds keep a broken engine from hanging the test binary: the server gives up on its own
//! when no client comes within the idle timeout (`-1` with `--idle-timeout` exits), and
//! [`OneTestServer::finish`] waits a limited time, then asks the server to stop, then fails.

use super::recorder::{Recorder, Seen};
use std::net::Ipv4Addr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::Duration;
use wireperf_engine::{EngineTuning, Observer, Outcome, Server, ServerConfig, ServerHooks};
use wireperf_protocol::schema::TestReport;

/// How long a server without a client waits before it gives up (`--idle-timeout`).
const IDLE_TIMEOUT: Duration = Duration::from_secs(20);

/// How long [`OneTestServer::finish`] waits for the serve loop to return after it was asked to
/// stop (the loop looks at the flag every 100 ms; a running test is interrupted first).
const STOP_GRACE: Duration = Duration::from_secs(5);

/// One test as the server's serve loop reported it ([`ServerHooks::test_done`]).
#[derive(Debug)]
pub struct ServedTest {
    /// The server's test number.
    pub test_no: u64,
    /// The server's own report of the test.
    pub report: TestReport,
    /// Why the test failed, if it did.
    pub error: Option<String>,
}

/// Everything the server reported, once its serve loop returned.
#[derive(Debug)]
pub struct ServerRun {
    /// What [`Server::run`] returned.
    pub result: Result<(), String>,
    /// The tests it served, in the order they ended.
    pub tests: Vec<ServedTest>,
    /// What its tests' observer saw.
    pub seen: Seen,
    /// Connections that did not become a test ([`ServerHooks::log`]).
    pub notes: Vec<String>,
}

/// The serve loop's hooks: every test gets the same recorder; outcomes are kept.
struct Hooks {
    recorder: Recorder,
    tests: Vec<ServedTest>,
    notes: Vec<String>,
}

impl ServerHooks for Hooks {
    fn listening(&mut self, _port: u16, _test_no: u64) {}

    fn new_test(&mut self, _test_no: u64) -> Box<dyn Observer + Send> {
        Box::new(self.recorder.clone())
    }

    fn test_done(&mut self, test_no: u64, outcome: &Outcome) {
        let error = outcome.error.as_ref().map(ToString::to_string);
        self.tests.push(ServedTest { test_no, report: outcome.report.clone(), error });
    }

    fn log(&mut self, line: &str) {
        self.notes.push(line.to_string());
    }
}

/// A bound server serving on its own thread.
pub struct OneTestServer {
    /// The port it listens on, on 127.0.0.1.
    pub port: u16,
    stop: Arc<AtomicBool>,
    done: Receiver<ServerRun>,
    thread: JoinHandle<()>,
}

impl OneTestServer {
    /// Binds 127.0.0.1 on a free port and starts serving one test, with the data path tuned
    /// by `tuning` (the server's own: each end of a test tunes its own streams).
    pub fn start(tuning: EngineTuning) -> Self {
        let cfg = ServerConfig {
            port: 0,
            bind: Some(Ipv4Addr::LOCALHOST.into()),
            one_off: true,
            idle_timeout: Some(IDLE_TIMEOUT),
            tuning,
            ..Default::default()
        };
        let server = Server::bind(cfg).expect("bind a server on 127.0.0.1");
        let port = server.local_addr().expect("the server's address").port();
        let stop = Arc::new(AtomicBool::new(false));
        let (tx, done) = mpsc::channel();
        let flag = Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name("test-server".into())
            .spawn(move || {
                let recorder = Recorder::default();
                let mut hooks = Hooks { recorder: recorder.clone(), tests: Vec::new(), notes: Vec::new() };
                let result = server.run(&mut hooks, &flag).map_err(|e| e.to_string());
                let Hooks { tests, notes, .. } = hooks;
                let _ = tx.send(ServerRun { result, tests, seen: recorder.take(), notes });
            })
            .expect("start the server thread");
        Self { port, stop, done, thread }
    }

    /// Waits up to `limit` for the server to finish its test and return; past it, asks it to
    /// stop, and fails the test if it does not within [`STOP_GRACE`] either.
    pub fn finish(self, limit: Duration) -> ServerRun {
        let run = match self.done.recv_timeout(limit) {
            Ok(run) => Some(run),
            Err(RecvTimeoutError::Timeout) => {
                self.stop.store(true, Ordering::Relaxed);
                self.done.recv_timeout(STOP_GRACE).ok().map(|mut run| {
                    run.notes.push(format!("stopped: its test had not ended {limit:?} after the client's"));
                    run
                })
            }
            // The thread ended without a word: it panicked, which the join below reports.
            Err(RecvTimeoutError::Disconnected) => None,
        };
        let Some(run) = run else {
            let panicked = self.thread.is_finished() && self.thread.join().is_err();
            assert!(!panicked, "the server thread panicked");
            panic!("the server did not stop within {:?}", limit + STOP_GRACE);
        };
        self.thread.join().expect("the server thread panicked");
        run
    }
}
