//! `wireperf selftest`: the suite against a server in this process on 127.0.0.1, then the
//! doctor on this machine's interfaces. It proves the build and the host work end to end with
//! nothing else installed, and shows what the host itself can move over loopback.

mod args;
pub use args::SelftestArgs;

use crate::shared::progress::LiveProgress;
use serde_json::json;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use wireperf_engine::event::NullObserver;
use wireperf_engine::{ClientConfig, Observer, Outcome, Server, ServerConfig, ServerHooks};
use wireperf_suite::{SuiteConfig, run_suite};

/// Server hooks that keep quiet and remember failures.
#[derive(Default)]
struct QuietHooks {
    notes: Vec<String>,
}

impl ServerHooks for QuietHooks {
    fn listening(&mut self, _port: u16, _test_no: u64) {}
    fn new_test(&mut self, _test_no: u64) -> Box<dyn Observer + Send> {
        // The in-process server watches too, so each phase's verdict sees both sides.
        wireperf_bottleneck::engine_watch::server_observer(Box::new(NullObserver), Default::default())
    }
    fn test_done(&mut self, test_no: u64, outcome: &Outcome) {
        if let Some(e) = &outcome.error {
            self.notes.push(format!("server test #{test_no}: {e}"));
        }
    }
    fn log(&mut self, line: &str) {
        self.notes.push(line.to_string());
    }
}

/// Runs the selftest; returns the exit status (1 if a phase failed).
pub fn run(a: &SelftestArgs) -> i32 {
    // The environment's engine tuning (docs/performance.md) applies to both ends, as in `-s`/`-c`.
    let tuning = crate::shared::tuning::from_env();
    let cfg = ServerConfig { port: 0, bind: Some([127, 0, 0, 1].into()), interval: None, tuning, ..Default::default() };
    let server = match Server::bind(cfg) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("wireperf: selftest error - {e}");
            return 1;
        }
    };
    let port = match server.local_addr() {
        Ok(a) => a.port(),
        Err(e) => {
            eprintln!("wireperf: selftest error - {e}");
            return 1;
        }
    };
    let stop = Arc::new(AtomicBool::new(false));
    let server_stop = Arc::clone(&stop);
    let server_thread = std::thread::spawn(move || {
        let mut hooks = QuietHooks::default();
        let res = server.run(&mut hooks, &server_stop);
        (res, hooks.notes)
    });
    let mut base = ClientConfig::new("127.0.0.1", Default::default());
    base.port = port;
    base.connect_timeout = Some(Duration::from_secs(5));
    base.tuning = tuning;
    let suite = SuiteConfig {
        base,
        time: a.time,
        parallel: a.parallel,
        udp: false,
        path: None,
        disk_bytes: 0,
        baseline: false,
        iperf2: false,
        latency: None,
        congestion: None,
    };
    let interrupt = crate::shared::signals::interrupt_flag();
    let mut progress = LiveProgress::new(a.json);
    let result = run_suite(&suite, &mut progress, &interrupt);
    drop(progress);
    stop.store(true, Ordering::Relaxed);
    let notes = match server_thread.join() {
        Ok((Ok(()), notes)) => notes,
        Ok((Err(e), mut notes)) => {
            notes.push(e.to_string());
            notes
        }
        Err(_) => vec!["the in-process server thread panicked".to_string()],
    };
    let doctor = wireperf_doctor::inspect(&wireperf_doctor::InspectOptions::default());
    let failed = !result.all_ok();
    let saved = if a.no_save {
        None
    } else {
        match crate::suite::save(&result, wireperf_store::RunKind::Selftest, a.db.as_deref()) {
            Ok(id) => Some(id.0),
            Err(e) => {
                eprintln!("wireperf: warning - the run was not saved to history: {e}");
                None
            }
        }
    };
    if a.json {
        let doc = json!({
            "selftest": {
                "passed": !failed,
                "suite": result,
                "doctor": doctor.as_ref().ok(),
                "doctor_error": doctor.as_ref().err().map(|e| e.to_string()),
                "server_notes": notes,
                "saved_run": saved,
            }
        });
        outln!("{doc}");
    } else {
        out!("{}", crate::suite::render(&result));
        match &doctor {
            Ok(r) => {
                outln!("\ndoctor: {} interface(s) inspected", r.interfaces.len());
                for i in &r.interfaces {
                    let ids = i.finding_ids();
                    outln!(
                        "  {}: {}",
                        i.link.name,
                        if ids.is_empty() { "no findings".to_string() } else { ids.join(", ") }
                    );
                }
                outln!("  (run `wireperf doctor` for the details)");
            }
            Err(e) => outln!("\ndoctor: {e}"),
        }
        for n in &notes {
            outln!("server: {n}");
        }
        if let Some(id) = saved {
            outln!("\nsaved as run #{id} (wireperf history show {id})");
        }
        outln!("\n{}", if failed { "selftest FAILED" } else { "selftest passed" });
    }
    i32::from(failed)
}
