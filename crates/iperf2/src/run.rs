//! Running an iperf 2 test: engine events to iperf 2 text, CSV or wireperf's `-J` JSON, with
//! the settings banner iperf 2 prints first. (`wireperf --iperf2` flags are parsed and lowered
//! into a [`Test`] in the `cli` crate.)

use crate::config::*;
use crate::event::Event;
use crate::output::{Format, JsonCollector, Output, Role, TextRenderer};
use crate::streams::{self, EngineError};
use crate::units::{bits_adaptive, bytes_adaptive};
use std::sync::mpsc;
use wireperf_protocol::schema::{HostPort, Start, TestStart, Timestamp};

/// What to run.
#[derive(Clone, Debug)]
pub enum Test {
    /// A client.
    Client(ClientConfig),
    /// A server.
    Server(ServerConfig),
}

/// Runs the test: engine events to the chosen output, the exit status back.
pub fn run(test: &Test, format: Format, enhanced: bool) -> i32 {
    let (role, udp) = match test {
        Test::Client(c) => (Role::Client, c.proto == Proto::Udp),
        Test::Server(s) => (Role::Server, s.proto == Proto::Udp),
    };
    let mut out = match format {
        Format::Json => Output::Json(Box::new(JsonCollector::new(role, json_start(test), udp))),
        f => Output::Text(TextRenderer::new(f, role, enhanced)),
    };
    if format == Format::Text {
        let _ = wireperf_sys::stdout::print(&banner(test, enhanced));
    }
    let (tx, rx) = mpsc::channel::<Event>();
    let job = test.clone();
    let worker = std::thread::spawn(move || match &job {
        Test::Client(c) => streams::run_client(c, tx),
        Test::Server(s) => streams::run_server(s, tx),
    });
    for e in rx {
        out.handle(&e);
    }
    let result = worker.join().unwrap_or_else(|_| Err(EngineError::Io(std::io::Error::other("engine panicked"))));
    let code = match &result {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("wireperf: {e}");
            1
        }
    };
    if let Output::Json(j) = out {
        let mut rep = j.finish();
        if let Err(e) = &result {
            rep.error = Some(e.to_string());
        }
        match serde_json::to_string_pretty(&rep) {
            Ok(s) => {
                let _ = wireperf_sys::stdout::println(&s);
            }
            Err(e) => eprintln!("wireperf: cannot encode JSON: {e}"),
        }
    }
    code
}

const SEP: &str = "------------------------------------------------------------\n";

fn default_buf(udp: bool, send: bool) -> usize {
    let ty = if udp { socket2::Type::DGRAM } else { socket2::Type::STREAM };
    socket2::Socket::new(socket2::Domain::IPV4, ty, None)
        .and_then(|s| if send { s.send_buffer_size() } else { s.recv_buffer_size() })
        .unwrap_or(0)
}

/// The settings block iperf 2 prints before a run.
fn banner(low: &Test, enhanced: bool) -> String {
    let mut b = String::from(SEP);
    let pid = std::process::id();
    match low {
        Test::Client(c) => {
            let udp = c.proto == Proto::Udp;
            let proto = if udp { "UDP" } else { "TCP" };
            b.push_str(&format!("Client connecting to {}, {proto} port {}", c.host, c.port));
            if enhanced {
                b.push_str(&format!(" with pid {pid} ({} flows)", c.threads));
            }
            b.push('\n');
            if enhanced && !udp {
                b.push_str(&format!("Write buffer size: {} Byte\n", c.effective_len()));
            }
            if udp {
                let len = c.effective_len();
                let ipg_us = len as f64 * 8.0 / c.rate.max(1) as f64 * 1e6;
                b.push_str(&format!("Sending {len} byte datagrams, IPG target: {ipg_us:.2} us (kalman adjust)\n"));
                b.push_str(&format!("UDP buffer size: {} (default)\n", bytes_adaptive(default_buf(true, true) as f64)));
            } else {
                let w = c.window.unwrap_or_else(|| default_buf(false, true));
                b.push_str(&format!("TCP window size: {} (default)\n", bytes_adaptive(w as f64)));
            }
            b.push_str(SEP);
            if matches!(c.mode, Mode::Dual | Mode::Tradeoff) {
                b.push_str(SEP);
                b.push_str(&format!("Server listening on TCP port {}\n", c.listen_port.unwrap_or(c.port)));
                b.push_str(&format!(
                    "TCP window size: {} (default)\n",
                    bytes_adaptive(default_buf(false, false) as f64)
                ));
                b.push_str(SEP);
            }
        }
        Test::Server(s) => {
            let udp = s.proto == Proto::Udp;
            let proto = if udp { "UDP" } else { "TCP" };
            b.push_str(&format!("Server listening on {proto} port {}", s.port));
            if enhanced {
                b.push_str(&format!(" with pid {pid}"));
            }
            b.push('\n');
            if enhanced {
                let len = s.len.unwrap_or(if udp { DEFAULT_UDP_LEN } else { DEFAULT_TCP_LEN });
                b.push_str(&format!(
                    "Read buffer size: {} (Dist bin width={})\n",
                    bytes_adaptive(len as f64),
                    bytes_adaptive((len / 8) as f64)
                ));
            }
            let label = if udp { "UDP buffer size" } else { "TCP window size" };
            let w = s.window.unwrap_or_else(|| default_buf(udp, false));
            b.push_str(&format!("{label}: {} (default)\n", bytes_adaptive(w as f64)));
            b.push_str(SEP);
        }
    }
    let _ = bits_adaptive; // rates appear only in result lines
    b
}

/// Runs one client test and returns it as wireperf's iperf3-schema report (what `-J` prints),
/// with the error text if it failed. The suite uses this for `--iperf2`.
pub fn client_report(c: &ClientConfig) -> (wireperf_protocol::schema::TestReport, Option<String>) {
    let low = Test::Client(c.clone());
    let mut collector = JsonCollector::new(Role::Client, json_start(&low), c.proto == Proto::Udp);
    let (tx, rx) = mpsc::channel::<Event>();
    let cfg = c.clone();
    let worker = std::thread::spawn(move || streams::run_client(&cfg, tx));
    for e in rx {
        collector.handle(&e);
    }
    let result = worker.join().unwrap_or_else(|_| Err(EngineError::Io(std::io::Error::other("engine panicked"))));
    let mut report = collector.finish();
    let err = result.err().map(|e| e.to_string());
    report.error = err.clone();
    (report, err)
}

/// `start` of the JSON document, filled from the configuration.
fn json_start(low: &Test) -> Start {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs() as i64);
    let mut st = Start {
        version: format!("wireperf {} {}", env!("CARGO_PKG_VERSION"), wireperf_protocol::outcome::IPERF2_MODE),
        system_info: wireperf_sys::system_info(),
        timestamp: Some(Timestamp {
            time: wireperf_protocol::datetime::rfc1123(now),
            timesecs: now,
            timemillisecs: Some(now * 1000),
        }),
        ..Start::default()
    };
    if let Test::Client(c) = low {
        st.connecting_to = Some(HostPort { host: c.host.clone(), port: c.port });
        let (duration, bytes) = match c.stop {
            Stop::Time(d) => (d.as_secs() as u32, 0),
            Stop::Bytes(b) => (0, b),
        };
        st.test_start = Some(TestStart {
            protocol: if c.proto == Proto::Udp { "UDP" } else { "TCP" }.into(),
            num_streams: c.threads,
            blksize: c.effective_len() as u32,
            duration,
            bytes,
            reverse: i32::from(c.mode == Mode::Reverse),
            target_bitrate: if c.proto == Proto::Udp { c.rate } else { 0 },
            ..TestStart::default()
        });
        st.target_bitrate = (c.proto == Proto::Udp).then_some(c.rate);
    }
    st
}
