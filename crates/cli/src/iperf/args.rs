//! Command-line flags, as close to iperf3's as clap allows ("low args").
//!
//! Every iperf3 3.22 option is declared here with its meaning, so any iperf3 command line
//! parses. Values stay strings or plain numbers; [`crate::iperf::lower`] turns them into engine
//! configurations and reports iperf3-style parameter errors. Options wireperf cannot honour
//! yet are accepted by the parser and refused by the lowering with a clear message.
//!
//! A flag's help heading is its role ([`crate::iperf::roles`]): a flag under "Client specific"
//! is refused by a server and one under "Server specific" by a client, unless it is in the
//! `EITHER_ROLE` group (flags that iperf3 lists under one role and the other role accepts too).

use crate::iperf::cnum;
use crate::iperf::roles::{CLIENT, EITHER_ROLE, SERVER, SERVER_OR_CLIENT};
use clap::{ArgGroup, Args};

/// iperf3's options (the 3.22 set).
#[derive(Debug, Args, Default)]
#[command(group(ArgGroup::new(EITHER_ROLE).multiple(true)))]
pub struct IperfArgs {
    // ---- server or client
    /// Run in server mode.
    #[arg(short = 's', long = "server", help_heading = SERVER_OR_CLIENT)]
    pub server: bool,
    /// Run in client mode, connecting to HOST (`host%dev` binds to a device).
    #[arg(short = 'c', long = "client", value_name = "HOST", help_heading = SERVER_OR_CLIENT)]
    pub client: Option<String>,
    /// Server port to listen on / connect to.
    #[arg(short = 'p', long = "port", value_name = "PORT", value_parser = cnum::atoi, help_heading = SERVER_OR_CLIENT)]
    pub port: Option<i64>,
    /// Format to report: k(bits) m g t, K(Bytes) M G T.
    #[arg(short = 'f', long = "format", value_name = "FMT", help_heading = SERVER_OR_CLIENT)]
    pub format: Option<String>,
    /// Seconds between periodic reports (0 disables them).
    #[arg(short = 'i', long = "interval", value_name = "SECS", help_heading = SERVER_OR_CLIENT)]
    pub interval: Option<f64>,
    /// Send output to a log file.
    #[arg(long = "logfile", value_name = "FILE", help_heading = SERVER_OR_CLIENT)]
    pub logfile: Option<String>,
    /// Force flushing output at every interval.
    #[arg(long = "forceflush", help_heading = SERVER_OR_CLIENT)]
    pub forceflush: bool,
    /// Prefix every output line with a timestamp (strftime FORMAT, default "%c ").
    #[arg(long = "timestamps", value_name = "FORMAT", num_args = 0..=1, require_equals = true,
          default_missing_value = "%c ", help_heading = SERVER_OR_CLIENT)]
    pub timestamps: Option<String>,
    /// Idle timeout for receiving data, milliseconds (default 120000).
    #[arg(long = "rcv-timeout", value_name = "MS", help_heading = SERVER_OR_CLIENT)]
    pub rcv_timeout: Option<u64>,
    /// Timeout for unacknowledged TCP data, milliseconds (TCP_USER_TIMEOUT).
    #[arg(long = "snd-timeout", value_name = "MS", help_heading = SERVER_OR_CLIENT)]
    pub snd_timeout: Option<u64>,
    /// Bind to the interface with this address (`addr%dev` also binds to the device).
    #[arg(short = 'B', long = "bind", value_name = "HOST", help_heading = SERVER_OR_CLIENT)]
    pub bind: Option<String>,
    /// Bind to this network interface with SO_BINDTODEVICE (as `-B addr%DEV` / `-c host%DEV`).
    #[arg(long = "bind-dev", value_name = "DEV", help_heading = SERVER_OR_CLIENT)]
    pub bind_dev: Option<String>,
    /// Use TCP keepalive on the control connection: [KEEPIDLE/KEEPINTV/KEEPCNT].
    #[arg(long = "cntl-ka", value_name = "IDLE/INTV/CNT", num_args = 0..=1, require_equals = true,
          default_missing_value = "", help_heading = SERVER_OR_CLIENT)]
    pub cntl_ka: Option<String>,
    /// More detailed output.
    #[arg(short = 'V', long = "verbose", help_heading = SERVER_OR_CLIENT)]
    pub verbose: bool,
    /// Output in JSON format.
    #[arg(short = 'J', long = "json", help_heading = SERVER_OR_CLIENT)]
    pub json: bool,
    /// Output in line-delimited JSON format.
    #[arg(long = "json-stream", help_heading = SERVER_OR_CLIENT)]
    pub json_stream: bool,
    /// With --json-stream, also print the whole -J document after the last event (as iperf3
    /// 3.21+; alone it changes nothing).
    #[arg(long = "json-stream-full-output", alias = "json-stream-full", help_heading = SERVER_OR_CLIENT)]
    pub json_stream_full_output: bool,
    /// Use MPTCP rather than plain TCP for the data connections (IPPROTO_MPTCP). A server
    /// always accepts MPTCP data connections when the kernel has MPTCP; `-s -m` is accepted.
    #[arg(short = 'm', long = "mptcp", help_heading = SERVER_OR_CLIENT)]
    pub mptcp: bool,
    /// Emit debugging output.
    #[arg(short = 'd', long = "debug", value_name = "LEVEL", num_args = 0..=1, require_equals = true,
          default_missing_value = "4", help_heading = SERVER_OR_CLIENT)]
    pub debug: Option<u32>,
    /// Show version information and quit.
    #[arg(short = 'v', long = "version", help_heading = SERVER_OR_CLIENT)]
    pub version: bool,
    /// Set CPU affinity: pin this side's test to core N; a client's `,M` asks the server to pin
    /// its side of the test to core M. Read as iperf3 reads it: the leading number counts
    /// (`-A 2/2` is `-A 2`).
    #[arg(short = 'A', long = "affinity", value_name = "N[,M]", help_heading = SERVER_OR_CLIENT)]
    pub affinity: Option<String>,

    // ---- server
    /// Run the server as a daemon.
    #[arg(short = 'D', long = "daemon", help_heading = SERVER)]
    pub daemon: bool,
    /// Write the process ID to this file.
    #[arg(short = 'I', long = "pidfile", value_name = "FILE", help_heading = SERVER)]
    pub pidfile: Option<String>,
    /// Handle one client connection, then exit.
    #[arg(short = '1', long = "one-off", help_heading = SERVER)]
    pub one_off: bool,
    /// Server total bit rate limit (RATE[/AVERAGING-SECS]); 0 = none.
    #[arg(long = "server-bitrate-limit", value_name = "RATE", help_heading = SERVER)]
    pub server_bitrate_limit: Option<String>,
    /// Restart an idle server after this many seconds.
    #[arg(long = "idle-timeout", value_name = "SECS", help_heading = SERVER)]
    pub idle_timeout: Option<u64>,
    /// Path to the RSA private key (PEM) used to decrypt authentication tokens.
    #[arg(long = "rsa-private-key-path", value_name = "FILE", help_heading = SERVER)]
    pub rsa_private_key_path: Option<String>,
    /// Path to the authorized users file (`user,sha256hex("{user}password")` per line).
    #[arg(long = "authorized-users-path", value_name = "FILE", help_heading = SERVER)]
    pub authorized_users_path: Option<String>,
    /// Time skew threshold for authentication, seconds (default 10).
    #[arg(long = "time-skew-threshold", value_name = "SECS", help_heading = SERVER)]
    pub time_skew_threshold: Option<u64>,
    /// Client: make a PKCS#1 v1.5 token (for iperf3 3.12–3.16 servers). Server: accepted; OAEP and PKCS#1 v1.5 are always both accepted.
    #[arg(long = "use-pkcs1-padding", group = EITHER_ROLE, help_heading = SERVER)]
    pub use_pkcs1_padding: bool,
    /// Serve the server's counters for Prometheus on http://ADDR/metrics (wireperf only).
    #[arg(long = "metrics", value_name = "ADDR", help_heading = SERVER)]
    pub metrics: Option<String>,
    /// Concurrency, queueing, limits and log format of a public server (wireperf only).
    #[command(flatten)]
    pub public: crate::iperf::args_server::PublicServerArgs,

    // ---- client
    /// Use UDP rather than TCP.
    #[arg(short = 'u', long = "udp", help_heading = CLIENT)]
    pub udp: bool,
    /// Use SCTP rather than TCP (refused: wireperf has no SCTP streams).
    #[arg(long = "sctp", help_heading = CLIENT)]
    pub sctp: bool,
    /// Connect timeout for the control connection, milliseconds.
    #[arg(long = "connect-timeout", value_name = "MS", help_heading = CLIENT)]
    pub connect_timeout: Option<u64>,
    /// Target bitrate in bits/sec (0 = unlimited), RATE[/BURST].
    #[arg(short = 'b', long = "bitrate", alias = "bandwidth", value_name = "RATE", help_heading = CLIENT)]
    pub bitrate: Option<String>,
    /// Pacing timer in microseconds (accepted for compatibility; wireperf paces per block).
    #[arg(long = "pacing-timer", value_name = "USEC", help_heading = CLIENT)]
    pub pacing_timer: Option<String>,
    /// Fair-queuing based socket pacing in bits/sec (SO_MAX_PACING_RATE).
    #[arg(long = "fq-rate", value_name = "RATE", help_heading = CLIENT)]
    pub fq_rate: Option<String>,
    /// Time in seconds to transmit for (default 10).
    #[arg(short = 't', long = "time", value_name = "SECS", help_heading = CLIENT)]
    pub time: Option<f64>,
    /// Number of bytes to transmit (instead of -t).
    #[arg(short = 'n', long = "bytes", value_name = "BYTES", help_heading = CLIENT)]
    pub bytes: Option<String>,
    /// Number of blocks (packets) to transmit (instead of -t or -n).
    #[arg(short = 'k', long = "blockcount", value_name = "BLOCKS", help_heading = CLIENT)]
    pub blockcount: Option<String>,
    /// Length of buffer to read or write (default 128 KB for TCP, MSS or 1460 for UDP).
    /// The unit of -k and of -b pacing; unpaced TCP streams move several whole blocks per
    /// system call (up to 1 MiB).
    #[arg(short = 'l', long = "length", value_name = "BYTES", help_heading = CLIENT)]
    pub length: Option<String>,
    /// Bind the data streams to this client port (stream i uses PORT+i).
    #[arg(long = "cport", value_name = "PORT", value_parser = cnum::atoi, help_heading = CLIENT)]
    pub cport: Option<i64>,
    /// Number of parallel client streams to run (1..128).
    #[arg(short = 'P', long = "parallel", value_name = "N", value_parser = cnum::atoi, allow_negative_numbers = true, help_heading = CLIENT)]
    pub parallel: Option<i64>,
    /// Run in reverse mode (server sends, client receives).
    #[arg(short = 'R', long = "reverse", help_heading = CLIENT)]
    pub reverse: bool,
    /// Run in bidirectional mode (client and server send and receive).
    #[arg(long = "bidir", help_heading = CLIENT)]
    pub bidir: bool,
    /// Set socket buffer size / window size.
    #[arg(short = 'w', long = "window", value_name = "BYTES", help_heading = CLIENT)]
    pub window: Option<String>,
    /// Set TCP congestion control algorithm.
    #[arg(short = 'C', long = "congestion", alias = "linux-congestion", value_name = "ALGO", help_heading = CLIENT)]
    pub congestion: Option<String>,
    /// Set TCP maximum segment size (MTU - 40 bytes), up to 32767.
    #[arg(short = 'M', long = "set-mss", value_name = "BYTES", value_parser = cnum::atoi, allow_negative_numbers = true, help_heading = CLIENT)]
    pub set_mss: Option<i64>,
    /// Set TCP no delay, disabling Nagle's algorithm.
    #[arg(short = 'N', long = "no-delay", help_heading = CLIENT)]
    pub no_delay: bool,
    /// Only use IPv4.
    #[arg(short = '4', long = "version4", group = EITHER_ROLE, help_heading = CLIENT)]
    pub version4: bool,
    /// Only use IPv6.
    #[arg(short = '6', long = "version6", group = EITHER_ROLE, help_heading = CLIENT)]
    pub version6: bool,
    /// Set the IP type of service, 0-255 (decimal, 0x hex or 0 octal).
    #[arg(short = 'S', long = "tos", value_name = "N", help_heading = CLIENT)]
    pub tos: Option<String>,
    /// Set the IP DSCP value, 0-63 or a symbolic name (ef, af11, cs1, ...).
    #[arg(long = "dscp", value_name = "VAL", help_heading = CLIENT)]
    pub dscp: Option<String>,
    /// Set the IPv6 flow label of the TCP data connections (1 to 0xfffff; IPv6 servers only).
    #[arg(short = 'L', long = "flowlabel", value_name = "N", help_heading = CLIENT)]
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
        help_heading = CLIENT
    )]
    pub zerocopy: Option<String>,
    /// Omit the first N seconds of the test.
    #[arg(short = 'O', long = "omit", value_name = "SECS", help_heading = CLIENT)]
    pub omit: Option<f64>,
    /// Prefix every output line with this string.
    #[arg(short = 'T', long = "title", value_name = "STR", help_heading = CLIENT)]
    pub title: Option<String>,
    /// Data string to include in the client and server JSON.
    #[arg(long = "extra-data", value_name = "STR", help_heading = CLIENT)]
    pub extra_data: Option<String>,
    /// Get results from the server.
    #[arg(long = "get-server-output", help_heading = CLIENT)]
    pub get_server_output: bool,
    /// Use 64-bit counters in UDP test packets.
    #[arg(long = "udp-counters-64bit", help_heading = CLIENT)]
    pub udp_counters_64bit: bool,
    /// Use a repeating pattern as payload instead of random bytes.
    #[arg(long = "repeating-payload", help_heading = CLIENT)]
    pub repeating_payload: bool,
    /// Set IPv4 Don't Fragment flag.
    #[arg(long = "dont-fragment", help_heading = CLIENT)]
    pub dont_fragment: bool,
    /// Transmit / receive a file: the client sends it (the test ends when it is sent), a server
    /// writes what it receives to it.
    #[arg(short = 'F', long = "file", value_name = "NAME", group = EITHER_ROLE, help_heading = CLIENT)]
    pub file: Option<String>,
    /// Username for authentication (password from IPERF3_PASSWORD, else asked on the terminal).
    #[arg(long = "username", value_name = "USER", help_heading = CLIENT)]
    pub username: Option<String>,
    /// Path to the RSA public key (PEM) used to encrypt the authentication token.
    #[arg(long = "rsa-public-key-path", value_name = "FILE", help_heading = CLIENT)]
    pub rsa_public_key_path: Option<String>,
    /// Bind SCTP associations to this address (not supported).
    #[arg(short = 'X', long = "xbind", value_name = "NAME", group = EITHER_ROLE, help_heading = CLIENT)]
    pub xbind: Option<String>,
    /// Number of SCTP streams (not supported).
    #[arg(long = "nstreams", value_name = "N", help_heading = CLIENT)]
    pub nstreams: Option<String>,
    /// Ignore received payload without copying it (recv with MSG_TRUNC); asks the server too.
    #[arg(long = "skip-rx-copy", help_heading = CLIENT)]
    pub skip_rx_copy: bool,
    /// Ask for UDP GSO/GRO at both ends (iperf3 3.21+ servers honour it; wireperf's own UDP
    /// streams batch with GSO/GRO whenever the kernel allows, with or without this flag).
    #[arg(long = "gsro", help_heading = CLIENT)]
    pub gsro: bool,
    /// After the summary, name what limited each direction (link, shaper, window, CPU, loss,
    /// ...) with the evidence and the fix; asks a wireperf server for its samples too
    /// (wireperf only).
    #[arg(long = "why", help_heading = CLIENT)]
    pub why: bool,
    /// After the summary, print round trips idle and under the test's load (TCP connects to
    /// the server's port beside the test, and the load streams' RTT): percentiles, added
    /// latency, responsiveness (RPM) and a grade A-F; -J carries them under `wireperf_latency`
    /// (wireperf only).
    #[arg(long = "latency", help_heading = CLIENT)]
    pub latency: bool,
    /// Time between latency probes, ms (10-5000; wireperf only).
    #[arg(long = "latency-interval", value_name = "MS", default_value_t = 100, value_parser = crate::shared::latency::parse_interval, help_heading = CLIENT)]
    pub latency_interval: u64,
    /// Do not save this run in the history database (wireperf only).
    #[arg(long = "no-save", group = EITHER_ROLE, help_heading = CLIENT)]
    pub no_save: bool,
    /// History database to save the run in (default: $WIREPERF_DB, else
    /// ~/.local/share/wireperf/history.sqlite; wireperf only).
    #[arg(long = "db", value_name = "PATH", group = EITHER_ROLE, help_heading = CLIENT)]
    pub db: Option<std::path::PathBuf>,
    /// Full-screen live view (chart per stream, retransmits, RTT, cwnd, loss, CPU); p pauses the
    /// chart, q ends the test. Plain output when stdout is not a terminal or with -J (wireperf only).
    #[arg(long = "tui", help_heading = "Client specific")]
    pub tui: bool,
    /// Run N tests (1-100) back to back with the same options, each printed as usual, then
    /// per direction the median, mean, standard deviation, min-max and the 95% confidence
    /// interval of the mean of throughput and retransmits; -J: one document with every test
    /// (wireperf only). With --confidence: the most tests to run (default 10).
    #[arg(long = "repeat", value_name = "N", value_parser = crate::shared::repeat_args::rounds, help_heading = CLIENT)]
    pub repeat: Option<usize>,
    /// Leave the first K tests of --repeat out of the statistics (0-10, fewer than N): a
    /// warm-up for cold caches, ARP, a router's flow setup (wireperf only).
    #[arg(long = "warmup", value_name = "K", value_parser = crate::shared::repeat_args::warmup, help_heading = CLIENT)]
    pub warmup: Option<usize>,
    /// Repeat until every direction's LEVEL% confidence interval of the mean lies within
    /// WIDTH% of it (netperf's -I: 95,5 = within +-2.5%), judged from 3 counted tests on, at
    /// most --repeat tests (default 10); says whether it got there (wireperf only).
    #[arg(long = "confidence", value_name = "LEVEL,WIDTH", value_parser = crate::shared::repeat_args::confidence, help_heading = CLIENT)]
    pub confidence: Option<(f64, f64)>,
}

impl IperfArgs {
    /// iperf3 sets the protocol as it reads each flag: `-u` makes it UDP, `-m` makes it TCP
    /// over MPTCP. So of the two the later wins, as in 3.22: `-u -m` runs MPTCP, `-m -u` UDP.
    pub fn settle_protocol(&mut self, m: &clap::ArgMatches) {
        let given = |id: &str| {
            (m.value_source(id) == Some(clap::parser::ValueSource::CommandLine)).then(|| m.index_of(id)).flatten()
        };
        if let (Some(udp), Some(mptcp)) = (given("udp"), given("mptcp"))
            && mptcp > udp
        {
            self.udp = false;
        }
    }
}
