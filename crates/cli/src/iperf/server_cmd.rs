//! `wireperf -s`: serve tests until interrupted (or one with `-1`).

use crate::iperf::json_out::{JsonMode, JsonObserver};
use crate::iperf::output::Sink;
use crate::iperf::run_spec::LogFormat;
use crate::iperf::run_spec::{OutputOpts, ServerRun};
use crate::iperf::text_out::TextObserver;
use wireperf_engine::server::{RecordKind, ServerRecord};
use wireperf_engine::{EngineError, Observer, Outcome, Server, ServerHooks};

/// Prints what an iperf3 server prints around tests.
struct Hooks {
    sink: Sink,
    out: OutputOpts,
    to_log: bool,
    /// `--metrics`: the Prometheus counters.
    metrics: Option<crate::iperf::metrics_endpoint::ServerMetrics>,
    /// `--max-tests` > 1: tests' text lines carry `[test N]`.
    concurrent: bool,
    /// `--log-format`.
    log_format: LogFormat,
    /// What a client that asks is told of this host.
    share: std::sync::Arc<wireperf_bottleneck::engine_watch::HostSharing>,
    /// `--allow-fix`: how fix channels are served, and the gate that keeps them one at a time.
    fix: Option<(wireperf_fix::serve::ServeConfig, wireperf_fix::serve::SessionGate)>,
}

impl Hooks {
    fn error(&self, line: &str) {
        if self.to_log {
            self.sink.lines(&format!("{line}\n"), None);
        } else {
            self.sink.flush();
            eprintln!("{line}");
        }
    }
}

impl ServerHooks for Hooks {
    fn listening(&mut self, port: u16, test_no: u64) {
        if !self.out.json {
            let dashes = "-".repeat(59);
            self.sink.lines(&format!("{dashes}\nServer listening on {port} (test #{test_no})\n{dashes}\n"), None);
            self.sink.flush();
        }
    }

    fn new_test(&mut self, test_no: u64) -> Box<dyn Observer + Send> {
        if let Some(m) = &self.metrics {
            m.test_started();
        }
        let inner: Box<dyn Observer + Send> = if self.out.json {
            Box::new(JsonObserver::server(self.sink.clone(), JsonMode::of(&self.out)))
        } else {
            let text = TextObserver::server(self.sink.clone(), &self.out);
            if self.concurrent { Box::new(text.with_prefix(format!("[test {test_no}]"))) } else { Box::new(text) }
        };
        wireperf_bottleneck::engine_watch::server_observer(
            crate::iperf::debug_out::wrap(inner, self.out.debug),
            self.share.clone(),
        )
    }

    fn test_done(&mut self, _test_no: u64, outcome: &Outcome) {
        if let Some(m) = &self.metrics {
            m.test_done(outcome);
        }
        // Ended because stdout's reader went away: nothing to say, and nobody to say it to.
        if let Some(e) = outcome.error.as_ref().filter(|_| !wireperf_sys::stdout::reader_gone()) {
            if self.out.json {
                let mut report = outcome.report.clone();
                report.error = Some(e.to_string());
                JsonObserver::print_error(&self.sink, &report, JsonMode::of(&self.out));
            } else {
                let what = match e {
                    EngineError::ServerTerminated => "interrupt - the server has terminated".to_string(),
                    other => format!("error - {other}"),
                };
                self.error(&format!("wireperf: {what}"));
            }
        }
        self.sink.flush();
    }

    fn record(&mut self, rec: &ServerRecord) {
        if let Some(m) = self.metrics.as_ref().filter(|_| rec.kind == RecordKind::Refused) {
            m.refused(rec.limit);
        }
        self.error(&crate::iperf::server_log::format(rec, self.log_format));
    }

    fn fix_channel(
        &mut self,
        mut sock: std::net::TcpStream,
        addr: std::net::SocketAddr,
        auth: Option<wireperf_engine::server::AuthHook>,
    ) -> Option<std::net::TcpStream> {
        let Some((cfg, gate)) = self.fix.as_ref() else { return Some(sock) };
        let Some(held) = gate.enter() else {
            use std::io::Write;
            use wireperf_protocol::fix_wire::{FixAnswer, encode_answer};
            let reason = "another client's fix loop is running on this server; try again when it is done".to_string();
            let _ = sock.write_all(&encode_answer(&FixAnswer::Refused { reason }));
            self.error(&format!("wireperf: fix channel from {}: refused, another one is open", addr.ip()));
            return None;
        };
        let (cfg, sink, to_log) = (cfg.clone(), self.sink.clone(), self.to_log);
        let spawned = std::thread::Builder::new().name("wireperf-fix".into()).spawn(move || {
            let mut log = |line: String| {
                if to_log {
                    sink.lines(&format!("wireperf: {line}\n"), None);
                    sink.flush();
                } else {
                    eprintln!("wireperf: {line}");
                }
            };
            wireperf_fix::serve::serve(sock, addr, &cfg, auth, held, &mut log);
        });
        if spawned.is_err() {
            self.error("wireperf: cannot start a thread for a fix channel");
        }
        None
    }

    fn log(&mut self, line: &str) {
        // The serve loop reports a client turned away while busy as "refused <addr>: …".
        if let Some(m) = self.metrics.as_ref().filter(|_| line.starts_with("refused ")) {
            m.refused(None);
        }
        self.error(&format!("wireperf: {line}"));
    }
}

/// Runs the server; returns the exit status.
pub fn run(run: &ServerRun) -> i32 {
    let (cfg, out, proc) = (&*run.config, &run.output, &run.process);
    if let Some(Err(e)) = proc.daemon.then(wireperf_sys::daemon::daemonize) {
        eprintln!("wireperf: error - unable to become a daemon: {e}");
        return 1;
    }
    let sink = match Sink::open(out.logfile.as_deref(), out.timestamps.clone(), out.forceflush) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("wireperf: error - unable to open log file: {e}");
            return 1;
        }
    };
    let _pid = match proc.pidfile.as_deref().map(PidFile::create).transpose() {
        Ok(p) => p,
        Err(e) => {
            eprintln!("wireperf: error - unable to write PID file: {e}");
            return 1;
        }
    };
    // After daemonizing: the metrics thread would not survive the fork.
    let metrics = match proc.metrics.as_deref().map(crate::iperf::metrics_endpoint::spawn).transpose() {
        Ok(m) => m,
        Err(e) => {
            eprintln!("wireperf: error - {e}");
            return 1;
        }
    };
    let stop = crate::shared::signals::interrupt_flag();
    let server = match Server::bind(cfg.clone()) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("wireperf: error - {e}");
            return 1;
        }
    };
    let mut hooks = Hooks {
        sink: sink.clone(),
        out: out.clone(),
        to_log: out.logfile.is_some(),
        metrics,
        concurrent: cfg.max_tests > 1,
        log_format: proc.log_format,
        share: std::sync::Arc::new(proc.share.clone()),
        fix: proc.allow_fix.clone().map(|c| (c, wireperf_fix::serve::SessionGate::default())),
    };
    let res = server.run(&mut hooks, &stop);
    sink.flush();
    match res {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("wireperf: error - {e}");
            1
        }
    }
}

/// A PID file removed when the server exits.
struct PidFile(String);

impl PidFile {
    fn create(path: &str) -> std::io::Result<Self> {
        std::fs::write(path, format!("{}\n", std::process::id()))?;
        Ok(Self(path.to_string()))
    }
}

impl Drop for PidFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}
