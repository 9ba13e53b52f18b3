//! iperf 2's command line: `wireperf --iperf2 -c HOST ...` / `-s ...`.
//!
//! [`Iperf2Args`] keeps the flags as typed (ripgrep's "low args"); [`lower`] turns them into
//! engine configs; [`run`] wires engine events to the chosen renderer and returns the exit code.

use crate::config::*;
use crate::engine::{self, EngineError};
use crate::event::Event;
use crate::output::{Format, JsonCollector, Output, Role, TextRenderer};
use crate::units::{bits_adaptive, bytes_adaptive, parse_binary};
use clap::{Args, Parser};
use std::ffi::OsString;
use std::sync::mpsc;
use std::time::Duration;
use wireperf_protocol::schema::{HostPort, Start, TestStart, Timestamp};

/// iperf 2 compatible flags.
#[derive(Args, Clone, Debug, Default)]
pub struct Iperf2Args {
    /// Run as a server.
    #[arg(short = 's', long = "server")]
    pub server: bool,
    /// Run as a client connecting to HOST.
    #[arg(short = 'c', long = "client", value_name = "HOST")]
    pub client: Option<String>,
    /// Server port to listen on / connect to.
    #[arg(short = 'p', long = "port", default_value_t = DEFAULT_PORT)]
    pub port: u16,
    /// Use UDP rather than TCP.
    #[arg(short = 'u', long = "udp")]
    pub udp: bool,
    /// Seconds to transmit (default 10).
    #[arg(short = 't', long = "time", value_name = "SECS")]
    pub time: Option<f64>,
    /// Bytes to transmit instead of -t (suffix K/M/G, binary).
    #[arg(short = 'n', long = "num", value_name = "BYTES")]
    pub num: Option<String>,
    /// Seconds between periodic reports.
    #[arg(short = 'i', long = "interval", value_name = "SECS")]
    pub interval: Option<f64>,
    /// Read/write buffer length, or UDP datagram size.
    #[arg(short = 'l', long = "len", value_name = "BYTES")]
    pub len: Option<String>,
    /// UDP rate in bit/s (suffix K/M/G, binary as in iperf 2; default 1M).
    #[arg(short = 'b', long = "bandwidth", value_name = "RATE")]
    pub bandwidth: Option<String>,
    /// Parallel client streams; on a server, tests to serve before exiting.
    #[arg(short = 'P', long = "parallel", value_name = "N")]
    pub parallel: Option<u32>,
    /// Bidirectional test at once: the server connects back to -L.
    #[arg(short = 'd', long = "dualtest")]
    pub dualtest: bool,
    /// Bidirectional test one after the other: the server connects back to -L.
    #[arg(short = 'r', long = "tradeoff")]
    pub tradeoff: bool,
    /// Both directions at once on the same socket.
    #[arg(long = "full-duplex")]
    pub full_duplex: bool,
    /// The server sends on the client's connection.
    #[arg(short = 'R', long = "reverse")]
    pub reverse: bool,
    /// Port to receive the server's -d/-r connect-back on (default: -p).
    #[arg(short = 'L', long = "listenport", value_name = "PORT")]
    pub listenport: Option<u16>,
    /// Enhanced reports (write/read counts, retries, cwnd/rtt, latency).
    #[arg(short = 'e', long = "enhanced")]
    pub enhanced: bool,
    /// Report style: C for CSV.
    #[arg(short = 'y', long = "reportstyle", value_name = "C")]
    pub reportstyle: Option<String>,
    /// wireperf JSON (iperf3 schema) instead of text.
    #[arg(short = 'J', long = "json")]
    pub json: bool,
    /// Socket buffer size (TCP window).
    #[arg(short = 'w', long = "window", value_name = "BYTES")]
    pub window: Option<String>,
    /// Bind the server to this address.
    #[arg(short = 'B', long = "bind", value_name = "ADDR")]
    pub bind: Option<String>,
    /// Print the version and exit.
    #[arg(short = 'v', long = "version")]
    pub version: bool,
}

#[derive(Parser, Debug)]
#[command(name = "wireperf --iperf2", disable_version_flag = true, about = "iperf 2 compatible mode")]
struct Top {
    #[command(flatten)]
    args: Iperf2Args,
}

/// Why the flags cannot run.
#[derive(Debug, thiserror::Error)]
pub enum ArgError {
    /// Neither -s nor -c.
    #[error("must specify a client (-c HOST) or a server (-s)")]
    NoRole,
    /// A size or rate that does not parse.
    #[error(transparent)]
    Number(#[from] crate::units::BadNumber),
    /// -y other than C.
    #[error("unknown report style '{0}' (only C is supported)")]
    Style(String),
    /// Invalid combination.
    #[error("{0}")]
    Conflict(&'static str),
}

/// What to run.
pub enum Lowered {
    /// A client.
    Client(ClientConfig),
    /// A server.
    Server(ServerConfig),
}

fn size(s: &Option<String>) -> Result<Option<usize>, ArgError> {
    Ok(match s {
        Some(v) => Some(parse_binary(v)? as usize),
        None => None,
    })
}

/// Lowers flags into an engine config.
pub fn lower(a: &Iperf2Args) -> Result<Lowered, ArgError> {
    if let Some(st) = &a.reportstyle
        && !st.eq_ignore_ascii_case("c")
    {
        return Err(ArgError::Style(st.clone()));
    }
    let proto = if a.udp { Proto::Udp } else { Proto::Tcp };
    if a.server {
        return Ok(Lowered::Server(ServerConfig {
            port: a.port,
            bind: a.bind.clone(),
            proto,
            interval: a.interval,
            len: size(&a.len)?,
            window: size(&a.window)?,
            enhanced: a.enhanced,
            max_tests: a.parallel,
        }));
    }
    let host = a.client.clone().ok_or(ArgError::NoRole)?;
    let modes = [a.dualtest, a.tradeoff, a.full_duplex, a.reverse].iter().filter(|b| **b).count();
    if modes > 1 {
        return Err(ArgError::Conflict("choose one of -d, -r, --full-duplex, -R"));
    }
    let mode = if a.dualtest {
        Mode::Dual
    } else if a.tradeoff {
        Mode::Tradeoff
    } else if a.full_duplex {
        Mode::FullDuplex
    } else if a.reverse {
        Mode::Reverse
    } else {
        Mode::Normal
    };
    if proto == Proto::Udp && mode != Mode::Normal {
        return Err(ArgError::Conflict("UDP supports plain client-to-server tests only in iperf 2 mode"));
    }
    let stop = match &a.num {
        Some(n) => Stop::Bytes(parse_binary(n)?),
        None => Stop::Time(Duration::from_secs_f64(a.time.unwrap_or(10.0).max(0.0))),
    };
    let rate = match &a.bandwidth {
        Some(b) => parse_binary(b)?,
        None => DEFAULT_UDP_RATE,
    };
    Ok(Lowered::Client(ClientConfig {
        host,
        port: a.port,
        listen_port: a.listenport,
        proto,
        mode,
        threads: a.parallel.unwrap_or(1).max(1),
        stop,
        interval: a.interval,
        len: size(&a.len)?,
        rate,
        window: size(&a.window)?,
        enhanced: a.enhanced,
    }))
}

/// Parses iperf2-style flags (the arguments after `--iperf2`) and runs; returns the exit code.
pub fn main_from_args(args: impl IntoIterator<Item = OsString>) -> i32 {
    let argv = std::iter::once(OsString::from("wireperf --iperf2")).chain(args);
    match Top::try_parse_from(argv) {
        Ok(t) => run(&t.args),
        Err(e) => {
            let _ = e.print();
            if e.use_stderr() { 1 } else { 0 }
        }
    }
}

/// Runs the test the flags describe.
pub fn run(a: &Iperf2Args) -> i32 {
    if a.version {
        println!("wireperf {} (iperf 2.1.8 protocol)", env!("CARGO_PKG_VERSION"));
        return 0;
    }
    let low = match lower(a) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("wireperf: parameter error - {e}");
            return 1;
        }
    };
    let format = if a.json {
        Format::Json
    } else if a.reportstyle.is_some() {
        Format::Csv
    } else {
        Format::Text
    };
    let (role, udp) = match &low {
        Lowered::Client(c) => (Role::Client, c.proto == Proto::Udp),
        Lowered::Server(s) => (Role::Server, s.proto == Proto::Udp),
    };
    let mut out = match format {
        Format::Json => Output::Json(Box::new(JsonCollector::new(role, json_start(&low), udp))),
        f => Output::Text(TextRenderer::new(f, role, a.enhanced)),
    };
    if format == Format::Text {
        print!("{}", banner(&low, a.enhanced));
    }
    let (tx, rx) = mpsc::channel::<Event>();
    let worker = std::thread::spawn(move || match &low {
        Lowered::Client(c) => engine::run_client(c, tx),
        Lowered::Server(s) => engine::run_server(s, tx),
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
            Ok(s) => println!("{s}"),
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
fn banner(low: &Lowered, enhanced: bool) -> String {
    let mut b = String::from(SEP);
    let pid = std::process::id();
    match low {
        Lowered::Client(c) => {
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
        Lowered::Server(s) => {
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
    let low = Lowered::Client(c.clone());
    let mut collector = JsonCollector::new(Role::Client, json_start(&low), c.proto == Proto::Udp);
    let (tx, rx) = mpsc::channel::<Event>();
    let cfg = c.clone();
    let worker = std::thread::spawn(move || engine::run_client(&cfg, tx));
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
fn json_start(low: &Lowered) -> Start {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs() as i64);
    let mut st = Start {
        version: format!("wireperf {} {}", env!("CARGO_PKG_VERSION"), wireperf_protocol::outcome::IPERF2_MODE),
        system_info: wireperf_sys::system_info(),
        timestamp: Some(Timestamp { time: rfc1123(now), timesecs: now }),
        ..Start::default()
    };
    if let Lowered::Client(c) = low {
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

/// `Sun, 29 Nov 2026 18:00:41 GMT` from Unix seconds (civil-from-days, proleptic Gregorian).
fn rfc1123(secs: i64) -> String {
    const DAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{}, {d:02} {} {y} {:02}:{:02}:{:02} GMT",
        DAYS[days.rem_euclid(7) as usize],
        MONTHS[(m - 1) as usize],
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc1123_matches_known_dates() {
        assert_eq!(rfc1123(1_795_975_249), "Sun, 29 Nov 2026 18:00:49 GMT");
        assert_eq!(rfc1123(0), "Thu, 01 Jan 1970 00:00:00 GMT");
    }

    #[test]
    fn lowers_a_dual_test() {
        let t = Top::try_parse_from(["x", "-c", "h", "-d", "-L", "6001", "-t", "2"]).unwrap();
        let Ok(Lowered::Client(c)) = lower(&t.args) else { panic!("not a client") };
        assert_eq!(c.mode, Mode::Dual);
        assert_eq!(c.listen_port, Some(6001));
        assert_eq!(c.port, 5001);
    }
}
