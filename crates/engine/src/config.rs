//! Run configuration beyond the wire parameters.
//!
//! [`TestParams`] is what travels to the server; these structs hold what only the local side
//! needs: where to connect, how to bind, socket options and timeouts. The small choice types
//! they carry ([`Family`], [`SendMode`]) live here too, so the modules that act on them (`net`,
//! `stream`) depend on this one and never the other way round.

use crate::auth::AuthHook;
use std::net::IpAddr;
use std::time::Duration;
use wireperf_protocol::TestParams;
use wireperf_sys::sockopt::Keepalive;

/// Address family restriction (`-4` / `-6`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Family {
    /// Either.
    #[default]
    Any,
    /// IPv4 only.
    V4,
    /// IPv6 only.
    V6,
}

/// The sender's system call for bulk TCP data.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SendMode {
    /// `write()` from a user buffer (iperf3's default).
    #[default]
    Write,
    /// `sendfile()` from a memory file holding the block (`-Z`).
    Sendfile,
    /// `send(MSG_ZEROCOPY)` with completion reaping (`--zerocopy=z`).
    MsgZerocopy,
}

impl SendMode {
    pub(crate) fn code(self) -> u8 {
        match self {
            SendMode::Write => 1,
            SendMode::Sendfile => 2,
            SendMode::MsgZerocopy => 3,
        }
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            SendMode::Write => "write",
            SendMode::Sendfile => "sendfile",
            SendMode::MsgZerocopy => "msg_zerocopy",
        }
    }

    pub(crate) fn from_code(c: u8) -> Option<SendMode> {
        [SendMode::Write, SendMode::Sendfile, SendMode::MsgZerocopy].into_iter().find(|m| m.code() == c)
    }
}

/// Everything a client run needs.
#[derive(Clone, Debug)]
pub struct ClientConfig {
    /// Server host name or address as the user typed it.
    pub host: String,
    /// Server port.
    pub port: u16,
    /// Wire parameters.
    pub params: TestParams,
    /// `-4` / `-6`.
    pub family: Family,
    /// `-B`: local address to bind.
    pub bind: Option<IpAddr>,
    /// `-B addr%dev` / `%dev`: device to bind to.
    pub bind_dev: Option<String>,
    /// `--cport`: first local data port.
    pub cport: Option<u16>,
    /// `--connect-timeout`.
    pub connect_timeout: Option<Duration>,
    /// `-i`: reporting interval; `None` = no interval reports.
    pub interval: Option<Duration>,
    /// `--rcv-timeout` (client: only meaningful when receiving).
    pub rcv_timeout: Duration,
    /// `--snd-timeout`: TCP_USER_TIMEOUT on data and control sockets.
    pub snd_timeout: Option<Duration>,
    /// `--cntl-ka`: keepalive on the control connection.
    pub cntl_ka: Option<Keepalive>,
    /// `-A`: CPU to pin stream threads to.
    pub affinity: Option<usize>,
    /// `-F`: send this file (or, with `-R`, write what arrives into it).
    pub file: Option<std::path::PathBuf>,
    /// How TCP senders of this client write: `-Z` = sendfile, `--zerocopy=z` = MSG_ZEROCOPY.
    /// Used only when `params.zerocopy` is set (which tells a server sending for `-R` to use
    /// sendfile).
    pub send_mode: SendMode,
}

impl ClientConfig {
    /// A configuration with iperf3's defaults for `host`.
    pub fn new(host: impl Into<String>, params: TestParams) -> Self {
        Self {
            host: host.into(),
            port: wireperf_protocol::DEFAULT_PORT,
            params,
            family: Family::Any,
            bind: None,
            bind_dev: None,
            cport: None,
            connect_timeout: None,
            interval: Some(Duration::from_secs(1)),
            rcv_timeout: Duration::from_secs(120),
            snd_timeout: None,
            cntl_ka: None,
            affinity: None,
            file: None,
            send_mode: SendMode::Sendfile,
        }
    }
}

/// Everything a server needs.
#[derive(Clone, Debug)]
pub struct ServerConfig {
    /// Port to listen on.
    pub port: u16,
    /// `-B`: address to listen on.
    pub bind: Option<IpAddr>,
    /// `-B %dev`: device to bind to.
    pub bind_dev: Option<String>,
    /// `-4` / `-6`.
    pub family: Family,
    /// `-i` for the server's own reports.
    pub interval: Option<Duration>,
    /// `-1`: serve one test, then exit.
    pub one_off: bool,
    /// `--idle-timeout`: give up waiting for a client after this long (then the caller decides).
    pub idle_timeout: Option<Duration>,
    /// `--rcv-timeout`: fail a test when a receiving stream is silent this long.
    pub rcv_timeout: Duration,
    /// `--snd-timeout`: TCP_USER_TIMEOUT on accepted sockets.
    pub snd_timeout: Option<Duration>,
    /// `--server-bitrate-limit`: refuse tests asking for more (bit/s, total).
    pub bitrate_limit: Option<u64>,
    /// `--server-bitrate-limit RATE/SECS`: the window the measured rate is averaged over.
    pub bitrate_limit_window: Duration,
    /// `--cntl-ka` on accepted control connections.
    pub cntl_ka: Option<Keepalive>,
    /// Control messages must complete within this.
    pub ctrl_timeout: Duration,
    /// `-A`: CPU to pin stream threads to.
    pub affinity: Option<usize>,
    /// `-F` on the server: write what arrives into this file (or send it with `-R`).
    pub file: Option<std::path::PathBuf>,
    /// `--max-tests`: tests run at once (iperf3: 1).
    pub max_tests: usize,
    /// `--queue`: how long a client may wait for a free slot (`None`: refused at once).
    pub queue: Option<Duration>,
    /// `--queue-max`: clients waiting at once; beyond it the busy answer.
    pub queue_max: usize,
    /// `--max-tests-per-client`: running tests per client IP address.
    pub max_tests_per_client: Option<usize>,
    /// `--server-max-duration`: longest `time + omit`; unbounded (`-n`/`-k`) tests are refused.
    pub max_duration: Option<Duration>,
    /// `--max-parallel`: largest `-P`.
    pub max_parallel: Option<u32>,
    /// Connections allowed between accept and a complete cookie at once.
    pub max_half_open: usize,
    /// Authentication (`--rsa-private-key-path` + `--authorized-users-path`).
    pub auth: Option<AuthHook>,
}

impl Default for ServerConfig {
    fn default() -> Self {
        Self {
            port: wireperf_protocol::DEFAULT_PORT,
            bind: None,
            bind_dev: None,
            family: Family::Any,
            interval: Some(Duration::from_secs(1)),
            one_off: false,
            idle_timeout: None,
            rcv_timeout: Duration::from_secs(120),
            snd_timeout: None,
            bitrate_limit: None,
            bitrate_limit_window: Duration::from_secs(5),
            cntl_ka: None,
            ctrl_timeout: Duration::from_secs(30),
            affinity: None,
            file: None,
            max_tests: 1,
            queue: None,
            queue_max: 16,
            max_tests_per_client: None,
            max_duration: None,
            max_parallel: None,
            max_half_open: 64,
            auth: None,
        }
    }
}
