//! Command-line flags, as close to iperf3's as clap allows ("low args").
//!
//! Every iperf3 3.12 option is declared here with its meaning, so any iperf3 command line
//! parses. Values stay strings or plain numbers; [`crate::lower`] turns them into engine
//! configurations and reports iperf3-style parameter errors. Options wireperf cannot honour
//! yet are accepted by the parser and refused by the lowering with a clear message.

use clap::{Args, Parser, Subcommand};

/// wireperf: an iperf3-compatible network throughput tester with a link doctor.
///
/// Any iperf3 command line works with `iperf3` replaced by `wireperf` (`wireperf -s`,
/// `wireperf -c HOST -R -P 4 -J`). New abilities are subcommands.
#[derive(Debug, Parser)]
#[command(
    name = "wireperf",
    disable_version_flag = true,
    args_conflicts_with_subcommands = true,
    max_term_width = 100,
    after_help = "Sizes (-l, -n, -w) take binary K/M/G/T suffixes (K = 1024); rates (-b) take decimal ones (K = 1000), as in iperf3."
)]
pub struct Cli {
    /// iperf3-compatible client/server flags.
    #[command(flatten)]
    pub iperf: IperfArgs,
    /// wireperf's own commands.
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// Subcommands beyond iperf3.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run a server in-process on 127.0.0.1 and test upload, download and bidir against it.
    Selftest(SelftestArgs),
    /// Upload, download and bidir (and UDP) against a server, judged against the link.
    Suite(crate::suite_cmd::SuiteArgs),
    /// Explain why a network link is slow, and how to fix it.
    Doctor(wireperf_doctor::cli::DoctorArgs),
    /// Prometheus exporter: /probe runs one test per scrape, /metrics has its own counters.
    Exporter(wireperf_exporter::cli::ExporterArgs),
    /// Past runs: list, show, compare, export, import iperf3 -J files, delete.
    History(wireperf_store::cli::HistoryArgs),
    /// Draw stored runs as one self-contained HTML page (--html) or SVG charts (--svg).
    Report(crate::report_cmd::ReportArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell) to stdout.
    Completions(crate::manual::CompletionsArgs),
    /// Write man pages for wireperf and each subcommand into a directory.
    Man(crate::manual::ManArgs),
}

/// `wireperf selftest`.
#[derive(Debug, Args)]
pub struct SelftestArgs {
    /// Seconds per phase.
    #[arg(short = 't', long = "time", default_value_t = 2)]
    pub time: u32,
    /// Parallel streams per phase.
    #[arg(short = 'P', long = "parallel", default_value_t = 1)]
    pub parallel: u32,
    /// Print the results (suite and doctor) as one JSON document.
    #[arg(long)]
    pub json: bool,
    /// Do not store the run in the history database.
    #[arg(long)]
    pub no_save: bool,
    /// History database (default: $WIREPERF_DB, else ~/.local/share/wireperf/history.sqlite).
    #[arg(long, value_name = "PATH")]
    pub db: Option<std::path::PathBuf>,
}

/// iperf3's options (3.12 set).
#[derive(Debug, Args, Default)]
pub struct IperfArgs {
    // ---- server or client
    /// Run in server mode.
    #[arg(short = 's', long = "server", help_heading = "Server or client")]
    pub server: bool,
    /// Run in client mode, connecting to HOST (`host%dev` binds to a device).
    #[arg(short = 'c', long = "client", value_name = "HOST", help_heading = "Server or client")]
    pub client: Option<String>,
    /// Server port to listen on / connect to.
    #[arg(short = 'p', long = "port", value_name = "PORT", help_heading = "Server or client")]
    pub port: Option<u32>,
    /// Format to report: k(bits) m g t, K(Bytes) M G T.
    #[arg(short = 'f', long = "format", value_name = "FMT", help_heading = "Server or client")]
    pub format: Option<String>,
    /// Seconds between periodic reports (0 disables them).
    #[arg(short = 'i', long = "interval", value_name = "SECS", help_heading = "Server or client")]
    pub interval: Option<f64>,
    /// Send output to a log file.
    #[arg(long = "logfile", value_name = "FILE", help_heading = "Server or client")]
    pub logfile: Option<String>,
    /// Force flushing output at every interval.
    #[arg(long = "forceflush", help_heading = "Server or client")]
    pub forceflush: bool,
    /// Prefix every output line with a timestamp (strftime FORMAT, default "%c ").
    #[arg(long = "timestamps", value_name = "FORMAT", num_args = 0..=1, require_equals = true,
          default_missing_value = "%c ", help_heading = "Server or client")]
    pub timestamps: Option<String>,
    /// Idle timeout for receiving data, milliseconds (default 120000).
    #[arg(long = "rcv-timeout", value_name = "MS", help_heading = "Server or client")]
    pub rcv_timeout: Option<u64>,
    /// Timeout for unacknowledged TCP data, milliseconds (TCP_USER_TIMEOUT).
    #[arg(long = "snd-timeout", value_name = "MS", help_heading = "Server or client")]
    pub snd_timeout: Option<u64>,
    /// Bind to the interface with this address (`addr%dev` also binds to the device).
    #[arg(short = 'B', long = "bind", value_name = "HOST", help_heading = "Server or client")]
    pub bind: Option<String>,
    /// Use TCP keepalive on the control connection: [KEEPIDLE/KEEPINTV/KEEPCNT].
    #[arg(long = "cntl-ka", value_name = "IDLE/INTV/CNT", num_args = 0..=1, require_equals = true,
          default_missing_value = "", help_heading = "Server or client")]
    pub cntl_ka: Option<String>,
    /// More detailed output.
    #[arg(short = 'V', long = "verbose", help_heading = "Server or client")]
    pub verbose: bool,
    /// Output in JSON format.
    #[arg(short = 'J', long = "json", help_heading = "Server or client")]
    pub json: bool,
    /// Output in line-delimited JSON format.
    #[arg(long = "json-stream", help_heading = "Server or client")]
    pub json_stream: bool,
    /// Emit debugging output.
    #[arg(short = 'd', long = "debug", value_name = "LEVEL", num_args = 0..=1, require_equals = true,
          default_missing_value = "4", help_heading = "Server or client")]
    pub debug: Option<u32>,
    /// Show version information and quit.
    #[arg(short = 'v', long = "version", help_heading = "Server or client")]
    pub version: bool,
    /// Set CPU affinity (core number to pin stream threads to).
    #[arg(short = 'A', long = "affinity", value_name = "N[,M]", help_heading = "Server or client")]
    pub affinity: Option<String>,

    // ---- server
    /// Run the server as a daemon.
    #[arg(short = 'D', long = "daemon", help_heading = "Server specific")]
    pub daemon: bool,
    /// Write the process ID to this file.
    #[arg(short = 'I', long = "pidfile", value_name = "FILE", help_heading = "Server specific")]
    pub pidfile: Option<String>,
    /// Handle one client connection, then exit.
    #[arg(short = '1', long = "one-off", help_heading = "Server specific")]
    pub one_off: bool,
    /// Server total bit rate limit (RATE[/AVERAGING-SECS]); 0 = none.
    #[arg(long = "server-bitrate-limit", value_name = "RATE", help_heading = "Server specific")]
    pub server_bitrate_limit: Option<String>,
    /// Restart an idle server after this many seconds.
    #[arg(long = "idle-timeout", value_name = "SECS", help_heading = "Server specific")]
    pub idle_timeout: Option<u64>,
    /// Path to the RSA private key (PEM) used to decrypt authentication tokens.
    #[arg(long = "rsa-private-key-path", value_name = "FILE", help_heading = "Server specific")]
    pub rsa_private_key_path: Option<String>,
    /// Path to the authorized users file (`user,sha256hex("{user}password")` per line).
    #[arg(long = "authorized-users-path", value_name = "FILE", help_heading = "Server specific")]
    pub authorized_users_path: Option<String>,
    /// Time skew threshold for authentication, seconds (default 10).
    #[arg(long = "time-skew-threshold", value_name = "SECS", help_heading = "Server specific")]
    pub time_skew_threshold: Option<u64>,
    /// Client: make a PKCS#1 v1.5 token (for iperf3 3.12–3.16 servers). Server: accepted; OAEP and PKCS#1 v1.5 are always both accepted.
    #[arg(long = "use-pkcs1-padding", help_heading = "Server specific")]
    pub use_pkcs1_padding: bool,
    /// Serve the server's counters for Prometheus on http://ADDR/metrics (wireperf only).
    #[arg(long = "metrics", value_name = "ADDR", help_heading = "Server specific")]
    pub metrics: Option<String>,
    /// Concurrency, queueing, limits and log format of a public server (wireperf only).
    #[command(flatten)]
    pub public: crate::args_server::PublicServerArgs,

    // ---- client
    /// Use UDP rather than TCP.
    #[arg(short = 'u', long = "udp", help_heading = "Client specific")]
    pub udp: bool,
    /// Use SCTP rather than TCP (not supported).
    #[arg(long = "sctp", help_heading = "Client specific")]
    pub sctp: bool,
    /// Connect timeout for the control connection, milliseconds.
    #[arg(long = "connect-timeout", value_name = "MS", help_heading = "Client specific")]
    pub connect_timeout: Option<u64>,
    /// Target bitrate in bits/sec (0 = unlimited), RATE[/BURST].
    #[arg(short = 'b', long = "bitrate", alias = "bandwidth", value_name = "RATE", help_heading = "Client specific")]
    pub bitrate: Option<String>,
    /// Pacing timer in microseconds (accepted for compatibility; wireperf paces per block).
    #[arg(long = "pacing-timer", value_name = "USEC", help_heading = "Client specific")]
    pub pacing_timer: Option<String>,
    /// Fair-queuing based socket pacing in bits/sec (SO_MAX_PACING_RATE).
    #[arg(long = "fq-rate", value_name = "RATE", help_heading = "Client specific")]
    pub fq_rate: Option<String>,
    /// Time in seconds to transmit for (default 10).
    #[arg(short = 't', long = "time", value_name = "SECS", help_heading = "Client specific")]
    pub time: Option<f64>,
    /// Number of bytes to transmit (instead of -t).
    #[arg(short = 'n', long = "bytes", value_name = "BYTES", help_heading = "Client specific")]
    pub bytes: Option<String>,
    /// Number of blocks (packets) to transmit (instead of -t or -n).
    #[arg(short = 'k', long = "blockcount", value_name = "BLOCKS", help_heading = "Client specific")]
    pub blockcount: Option<String>,
    /// Length of buffer to read or write (default 128 KB for TCP, MSS or 1460 for UDP).
    /// The unit of -k and of -b pacing; unpaced TCP streams move several whole blocks per
    /// system call (up to 1 MiB).
    #[arg(short = 'l', long = "length", value_name = "BYTES", help_heading = "Client specific")]
    pub length: Option<String>,
    /// Bind the data streams to this client port (stream i uses PORT+i).
    #[arg(long = "cport", value_name = "PORT", help_heading = "Client specific")]
    pub cport: Option<u32>,
    /// Number of parallel client streams to run (1..128).
    #[arg(short = 'P', long = "parallel", value_name = "N", help_heading = "Client specific")]
    pub parallel: Option<i64>,
    /// Run in reverse mode (server sends, client receives).
    #[arg(short = 'R', long = "reverse", help_heading = "Client specific")]
    pub reverse: bool,
    /// Run in bidirectional mode (client and server send and receive).
    #[arg(long = "bidir", help_heading = "Client specific")]
    pub bidir: bool,
    /// Set socket buffer size / window size.
    #[arg(short = 'w', long = "window", value_name = "BYTES", help_heading = "Client specific")]
    pub window: Option<String>,
    /// Set TCP congestion control algorithm.
    #[arg(short = 'C', long = "congestion", value_name = "ALGO", help_heading = "Client specific")]
    pub congestion: Option<String>,
    /// Set TCP maximum segment size (MTU - 40 bytes).
    #[arg(short = 'M', long = "set-mss", value_name = "BYTES", help_heading = "Client specific")]
    pub set_mss: Option<i64>,
    /// Set TCP no delay, disabling Nagle's algorithm.
    #[arg(short = 'N', long = "no-delay", help_heading = "Client specific")]
    pub no_delay: bool,
    /// Only use IPv4.
    #[arg(short = '4', long = "version4", help_heading = "Client specific")]
    pub version4: bool,
    /// Only use IPv6.
    #[arg(short = '6', long = "version6", help_heading = "Client specific")]
    pub version6: bool,
    /// Set the IP type of service, 0-255 (decimal, 0x hex or 0 octal).
    #[arg(short = 'S', long = "tos", value_name = "N", help_heading = "Client specific")]
    pub tos: Option<String>,
    /// Set the IP DSCP value, 0-63 or a symbolic name (ef, af11, cs1, ...).
    #[arg(long = "dscp", value_name = "VAL", help_heading = "Client specific")]
    pub dscp: Option<String>,
    /// Set the IPv6 flow label (not supported yet).
    #[arg(short = 'L', long = "flowlabel", value_name = "N", help_heading = "Client specific")]
    pub flowlabel: Option<String>,
    /// Use a 'zero copy' method of sending data: sendfile() from a memory file; `--zerocopy=z`
    /// uses MSG_ZEROCOPY instead. Falls back to write() when refused.
    #[arg(
        short = 'Z',
        long = "zerocopy",
        value_name = "z",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "sendfile",
        help_heading = "Client specific"
    )]
    pub zerocopy: Option<String>,
    /// Omit the first N seconds of the test.
    #[arg(short = 'O', long = "omit", value_name = "SECS", help_heading = "Client specific")]
    pub omit: Option<f64>,
    /// Prefix every output line with this string.
    #[arg(short = 'T', long = "title", value_name = "STR", help_heading = "Client specific")]
    pub title: Option<String>,
    /// Data string to include in the client and server JSON.
    #[arg(long = "extra-data", value_name = "STR", help_heading = "Client specific")]
    pub extra_data: Option<String>,
    /// Get results from the server.
    #[arg(long = "get-server-output", help_heading = "Client specific")]
    pub get_server_output: bool,
    /// Use 64-bit counters in UDP test packets.
    #[arg(long = "udp-counters-64bit", help_heading = "Client specific")]
    pub udp_counters_64bit: bool,
    /// Use a repeating pattern as payload instead of random bytes.
    #[arg(long = "repeating-payload", help_heading = "Client specific")]
    pub repeating_payload: bool,
    /// Set IPv4 Don't Fragment flag.
    #[arg(long = "dont-fragment", help_heading = "Client specific")]
    pub dont_fragment: bool,
    /// Transmit / receive a file (not supported yet).
    #[arg(short = 'F', long = "file", value_name = "NAME", help_heading = "Client specific")]
    pub file: Option<String>,
    /// Username for authentication (password from IPERF3_PASSWORD, else asked on the terminal).
    #[arg(long = "username", value_name = "USER", help_heading = "Client specific")]
    pub username: Option<String>,
    /// Path to the RSA public key (PEM) used to encrypt the authentication token.
    #[arg(long = "rsa-public-key-path", value_name = "FILE", help_heading = "Client specific")]
    pub rsa_public_key_path: Option<String>,
    /// Bind SCTP associations to this address (not supported).
    #[arg(short = 'X', long = "xbind", value_name = "NAME", help_heading = "Client specific")]
    pub xbind: Option<String>,
    /// Number of SCTP streams (not supported).
    #[arg(long = "nstreams", value_name = "N", help_heading = "Client specific")]
    pub nstreams: Option<String>,
    /// Use MPTCP rather than plain TCP (not supported yet).
    #[arg(short = 'm', long = "mptcp", help_heading = "Client specific")]
    pub mptcp: bool,
    /// Ignore received payload without copying it (recv with MSG_TRUNC).
    #[arg(long = "skip-rx-copy", help_heading = "Client specific")]
    pub skip_rx_copy: bool,
    /// Do not save this run in the history database (wireperf only).
    #[arg(long = "no-save", help_heading = "Client specific")]
    pub no_save: bool,
    /// History database to save the run in (default: $WIREPERF_DB, else
    /// ~/.local/share/wireperf/history.sqlite; wireperf only).
    #[arg(long = "db", value_name = "PATH", help_heading = "Client specific")]
    pub db: Option<std::path::PathBuf>,
}
