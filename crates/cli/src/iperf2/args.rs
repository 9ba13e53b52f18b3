//! `wireperf --iperf2` flags: iperf 2's, kept as typed (ripgrep's "low args").

use clap::{Args, Parser};
use wireperf_iperf2::config::DEFAULT_PORT;

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

/// The `--iperf2` command line (its own parser: iperf 2 reuses letters iperf3 gives other
/// meanings).
#[derive(Parser, Debug)]
#[command(name = "wireperf --iperf2", disable_version_flag = true, about = "iperf 2 compatible mode")]
pub struct Top {
    /// The flags.
    #[command(flatten)]
    pub args: Iperf2Args,
}
