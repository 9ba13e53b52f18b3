//! What the iperf-mode lowering produces: one typed description of the run ([`Mode`]), and
//! its [`ParamError`]. After [`crate::iperf::load`] nothing reads the flags again: the client
//! and the server run from a [`ClientRun`] or a [`ServerRun`] alone.
//!
//! A leaf: it imports no other module of `iperf/`, so the lowering, the file reads and the
//! runners can all depend on it without depending on each other.

use clap::ValueEnum;
use std::path::{Path, PathBuf};
use wireperf_engine::{ClientConfig, ServerConfig};
use wireperf_latency::engine_probe::LatencyConfig;
use wireperf_protocol::IperfErrno;
use wireperf_suite::series::RepeatConfig;

/// A parameter error.
#[derive(Debug, thiserror::Error)]
pub enum ParamError {
    /// One of iperf3's parameter errors.
    #[error("{0}")]
    Iperf(IperfErrno),
    /// A message of our own.
    #[error("{0}")]
    Msg(String),
    /// An accepted iperf3 flag that wireperf refuses by design.
    #[error("{0}")]
    Refused(&'static str),
}

impl From<IperfErrno> for ParamError {
    fn from(e: IperfErrno) -> Self {
        ParamError::Iperf(e)
    }
}

/// How to print.
#[derive(Clone, Debug, Default)]
pub struct OutputOpts {
    /// `-J`.
    pub json: bool,
    /// `--json-stream`.
    pub json_stream: bool,
    /// `--json-stream-full-output` with `--json-stream`: the whole document after the events.
    pub json_stream_full: bool,
    /// `-V`.
    pub verbose: bool,
    /// `-f` letter; `a` = adaptive bits.
    pub format: char,
    /// `-T`.
    pub title: Option<String>,
    /// `--timestamps` format.
    pub timestamps: Option<String>,
    /// `--logfile`.
    pub logfile: Option<String>,
    /// `--forceflush`.
    pub forceflush: bool,
    /// `-d`.
    pub debug: bool,
}

/// What to run.
#[derive(Debug)]
pub enum Mode {
    /// `-c`; with `--repeat`/`--confidence` a series of such tests.
    Client(ClientRun),
    /// `-s`.
    Server(ServerRun),
    /// `-v`.
    Version,
}

/// Where a client's run is saved in the history (`--no-save`, `--db`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum SaveTo {
    /// `--no-save`.
    No,
    /// The default database (`$WIREPERF_DB`, else the user's data directory).
    #[default]
    Default,
    /// `--db PATH`.
    At(PathBuf),
}

impl SaveTo {
    /// The database file named on the command line (`None` for the default one).
    pub fn path(&self) -> Option<&Path> {
        match self {
            SaveTo::At(p) => Some(p),
            SaveTo::No | SaveTo::Default => None,
        }
    }
}

/// `wireperf -c HOST …`: everything a client test (or a series of them) runs from.
#[derive(Debug)]
pub struct ClientRun {
    /// The engine's client configuration: the test parameters and where to connect.
    pub config: Box<ClientConfig>,
    /// How to print.
    pub output: OutputOpts,
    /// Where to save the run.
    pub save: SaveTo,
    /// `--why`: watch the hosts and print the bottleneck of each direction after the summary.
    pub why: bool,
    /// `--tui`: the live view (when the terminal allows it).
    pub tui: bool,
    /// `--latency`: probe round trips beside the test and print them after that.
    pub latency: Option<LatencyConfig>,
    /// `--repeat`/`--confidence`: a series of such tests.
    pub repeat: Option<RepeatConfig>,
    /// What the lowering noticed and the user should hear before the test (on stderr).
    pub warnings: Vec<String>,
}

/// `wireperf -s …`: the engine's server configuration and the process around it.
#[derive(Debug)]
pub struct ServerRun {
    /// The engine's server configuration.
    pub config: Box<ServerConfig>,
    /// How to print.
    pub output: OutputOpts,
    /// Daemon, PID file, metrics, log format, what is shared with clients.
    pub process: ServerProcess,
}

/// Format of the operator's log records (one line per accepted/finished/refused/failed test).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    /// `wireperf: finished test=3 client=192.0.2.7:50412 duration=10.02s bytes=1234 ...`
    #[default]
    Text,
    /// One JSON object per line.
    Json,
}

/// Process-level server options.
#[derive(Debug, Default)]
pub struct ServerProcess {
    /// `-D`.
    pub daemon: bool,
    /// `-I`.
    pub pidfile: Option<String>,
    /// `--metrics ADDR`: serve the server's counters for Prometheus.
    pub metrics: Option<String>,
    /// `--log-format`: the operator's log records as text or JSON lines.
    pub log_format: LogFormat,
    /// What of this host a client that asks is told (`--no-share-host`, `--host-root`).
    pub share: wireperf_bottleneck::engine_watch::HostSharing,
    /// `--allow-fix`: serve `suite --fix` clients' fix channels.
    pub allow_fix: Option<wireperf_fix::serve::ServeConfig>,
}
