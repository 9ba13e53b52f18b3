//! `wireperf selftest`: a server in this process on 127.0.0.1, and upload, download and bidir
//! tests against it. It proves the machine and the build work end to end with nothing else
//! installed, and shows what the host itself can move over loopback.

use crate::args::SelftestArgs;
use serde_json::json;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use wireperf_engine::event::NullObserver;
use wireperf_engine::{ClientConfig, Observer, Outcome, Server, ServerConfig, ServerHooks, run_client};
use wireperf_protocol::TestParams;
use wireperf_protocol::schema::Summary;
use wireperf_report::units::format_unit;

/// Server hooks that keep quiet and remember failures.
#[derive(Default)]
struct QuietHooks {
    notes: Vec<String>,
}

impl ServerHooks for QuietHooks {
    fn listening(&mut self, _port: u16, _test_no: u64) {}
    fn new_test(&mut self, _test_no: u64) -> Box<dyn Observer + Send> {
        Box::new(NullObserver)
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

struct Phase {
    name: &'static str,
    reverse: bool,
    bidir: bool,
}

const PHASES: [Phase; 3] = [
    Phase { name: "upload", reverse: false, bidir: false },
    Phase { name: "download", reverse: true, bidir: false },
    Phase { name: "bidir", reverse: false, bidir: true },
];

fn rate(s: Option<&Summary>) -> f64 {
    s.map_or(0.0, |s| s.bits_per_second)
}

/// Runs the selftest; returns the exit status.
pub fn run(a: &SelftestArgs) -> i32 {
    let cfg = ServerConfig {
        port: 0,
        bind: Some([127, 0, 0, 1].into()),
        interval: None,
        ..Default::default()
    };
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
    if !a.json {
        println!("wireperf selftest: in-process server on 127.0.0.1 port {port}, {} s per phase", a.time);
        println!("{:<10} {:>16} {:>16} {:>8}", "phase", "upload", "download", "retr");
    }
    let interrupt = crate::signals::interrupt_flag();
    let mut failed = false;
    let mut phases = Vec::new();
    for ph in &PHASES {
        let params = TestParams {
            time: a.time,
            parallel: a.parallel.clamp(1, 128),
            reverse: ph.reverse,
            bidirectional: ph.bidir,
            ..Default::default()
        };
        let mut c = ClientConfig::new("127.0.0.1", params);
        c.port = port;
        c.interval = None;
        c.connect_timeout = Some(Duration::from_secs(5));
        let out = run_client(&c, &mut NullObserver, &interrupt);
        let end = &out.report.end;
        // Upload = client→server, download = server→client, whichever block carries them.
        let (up, down, retr) = if ph.bidir {
            (
                rate(end.sum_received.as_ref()),
                rate(end.sum_received_bidir_reverse.as_ref()),
                end.sum_sent.as_ref().and_then(|s| s.retransmits).unwrap_or(0)
                    + end.sum_sent_bidir_reverse.as_ref().and_then(|s| s.retransmits).unwrap_or(0),
            )
        } else if ph.reverse {
            (0.0, rate(end.sum_received.as_ref()), end.sum_sent.as_ref().and_then(|s| s.retransmits).unwrap_or(0))
        } else {
            (rate(end.sum_received.as_ref()), 0.0, end.sum_sent.as_ref().and_then(|s| s.retransmits).unwrap_or(0))
        };
        let err = out.error.as_ref().map(|e| e.to_string());
        failed |= err.is_some();
        if a.json {
            phases.push(json!({
                "phase": ph.name, "upload_bits_per_second": up, "download_bits_per_second": down,
                "retransmits": retr, "error": err,
            }));
        } else {
            let show = |bps: f64, used: bool| {
                if used { format!("{}s/sec", format_unit(bps / 8.0, 'a')) } else { "-".to_string() }
            };
            match &err {
                None => println!(
                    "{:<10} {:>16} {:>16} {:>8}",
                    ph.name,
                    show(up, !ph.reverse),
                    show(down, ph.reverse || ph.bidir),
                    retr
                ),
                Some(e) => println!("{:<10} failed: {e}", ph.name),
            }
        }
        if interrupt.load(Ordering::Relaxed) {
            break;
        }
    }
    stop.store(true, Ordering::Relaxed);
    let notes = match server_thread.join() {
        Ok((Ok(()), notes)) => notes,
        Ok((Err(e), mut notes)) => {
            notes.push(e.to_string());
            notes
        }
        Err(_) => vec!["the in-process server thread panicked".to_string()],
    };
    if a.json {
        println!("{}", json!({"selftest": {"port": port, "seconds": a.time, "phases": phases, "server_notes": notes}}));
    } else {
        for n in &notes {
            println!("server: {n}");
        }
        println!("{}", if failed { "selftest FAILED" } else { "selftest passed" });
    }
    i32::from(failed)
}
