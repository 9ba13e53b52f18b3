//! Run configuration beyond the wire parameters.
//!
//! [`TestParams`] is what travels to the server; these structs hold what only the local side
//! needs: where to connect, how to bind, socket options and timeouts. The small choice types
//! they carry ([`Family`], [`SendMode`]) and the data path's tuning ([`EngineTuning`]) live here
//! too, so the modules that act on them (`net`, `stream`) depend on this one and never the
//! other way round.

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

/// The unsent queue a host-local TCP sender keeps when the test's threads share CPUs (more
/// streams than half the CPUs, or one CPU): [`NotsentMark::Auto`]'s mark there
/// (`stream::notsent`, where the reason is).
pub const HOST_LOCAL_NOTSENT: usize = 32 * 1024;

/// The unsent queue a host-local TCP sender keeps when every sender and receiver of the test
/// has a CPU of its own (twice the streams at most the CPUs): one full 64 KiB GSO packet may
/// wait, so the sender is woken once per packet, not twice.
pub const HOST_LOCAL_NOTSENT_OWN_CPUS: usize = 64 * 1024;

/// Which `TCP_NOTSENT_LOWAT` a TCP sender sets once its path proves host-local
/// ([`EngineTuning::notsent_lowat`], the cli's `WIREPERF_NOTSENT_LOWAT`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum NotsentMark {
    /// Never set it (`off`, `0`, `no`, `false`).
    Off,
    /// [`HOST_LOCAL_NOTSENT_OWN_CPUS`] when twice the test's streams are at most the CPUs the
    /// process may run on, else [`HOST_LOCAL_NOTSENT`].
    #[default]
    Auto,
    /// This many bytes (for measuring), still only on host-local paths.
    Bytes(usize),
}

impl NotsentMark {
    /// The mark for a test of `streams` streams (both directions) on a process that may run
    /// on `cpus` CPUs; `None` when it is off.
    pub(crate) fn for_test(self, streams: usize, cpus: usize) -> Option<usize> {
        match self {
            NotsentMark::Off => None,
            NotsentMark::Bytes(n) => Some(n),
            NotsentMark::Auto if 2 * streams.max(1) <= cpus => Some(HOST_LOCAL_NOTSENT_OWN_CPUS),
            NotsentMark::Auto => Some(HOST_LOCAL_NOTSENT),
        }
    }
}

/// How the data path is tuned beyond the flags: settings for diagnosis and measuring that
/// iperf3 has no flag for. The engine reads no environment: the cli fills this once from the
/// environment variables named on each field (docs/performance.md, "Environment variables"),
/// and a library user sets the fields. Each side of a test uses its own (set them on the server
/// too for `-R`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EngineTuning {
    /// UDP streams use GSO (sender) and GRO (receiver) when the kernel offers them. `false`
    /// (`WIREPERF_UDP_OFFLOAD=off`, or `0`, `no`, `false`): a sender uses `sendmmsg` and a
    /// receiver `recvmmsg`, so every datagram is its own packet in the stack and has its own
    /// receive time. Default `true`.
    pub udp_offload: bool,
    /// The `TCP_NOTSENT_LOWAT` a TCP sender sets once its path proves host-local
    /// (`WIREPERF_NOTSENT_LOWAT`): off, chosen by how the test's threads share the CPUs
    /// (the default, [`NotsentMark::Auto`]), or a number of bytes for measuring.
    pub notsent_lowat: NotsentMark,
    /// How many shared workers a direction's TCP streams may use (`WIREPERF_STREAM_WORKERS`).
    pub stream_workers: StreamWorkers,
    /// Hooks for the tests; none unless the engine is built with feature `test-hooks`.
    pub hooks: TestHooks,
}

impl Default for EngineTuning {
    fn default() -> Self {
        Self {
            udp_offload: true,
            notsent_lowat: NotsentMark::Auto,
            stream_workers: StreamWorkers::PerCpu,
            hooks: TestHooks::default(),
        }
    }
}

/// The shared workers a direction may use (`stream::schedule` places the streams).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum StreamWorkers {
    /// One per CPU the process may run on (the default: up to that many streams, a thread each
    /// already has a CPU each; past it one epoll loop per CPU keeps every CPU busy).
    #[default]
    PerCpu,
    /// This many (`WIREPERF_STREAM_WORKERS=N`, N > 0).
    Fixed(usize),
    /// None: every stream keeps a thread of its own, the engine before the shared workers, kept
    /// for diagnosis (`WIREPERF_STREAM_WORKERS=0` or `off`).
    Off,
}

impl StreamWorkers {
    /// The workers per direction on a host with `cpus` CPUs; `None` = a thread per stream.
    pub(crate) fn per_direction(self, cpus: usize) -> Option<usize> {
        match self {
            StreamWorkers::PerCpu => Some(cpus.max(1)),
            StreamWorkers::Fixed(n) => Some(n.max(1)),
            StreamWorkers::Off => None,
        }
    }
}

/// The environment variable of the zero-copy refusal hook ([`TestHooks::from_vars`]): when set
/// (to anything), the first `sendfile` or `MSG_ZEROCOPY` send of every stream is treated as
/// refused with `EINVAL`, so the fallback path can be exercised end to end on a kernel that
/// would accept the call. Exists only in a build with feature `test-hooks`.
#[cfg(feature = "test-hooks")]
pub const REFUSE_ZEROCOPY_ENV: &str = "WIREPERF_TEST_REFUSE_ZEROCOPY";

/// Test hooks of the data path. Empty, and without effect, unless the engine is built with
/// feature `test-hooks` (the cli's integration tests enable it through a dev-dependency; the
/// release build does not, so no hook and no hook's name is in the shipped binary).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TestHooks {
    /// The first zero-copy send of every stream is refused ([`REFUSE_ZEROCOPY_ENV`]).
    #[cfg(feature = "test-hooks")]
    pub refuse_zerocopy: bool,
}

impl TestHooks {
    /// The hooks armed by their environment variables, as `is_set` (the caller's look at its
    /// environment) reports them; none in a build without feature `test-hooks`.
    #[cfg(feature = "test-hooks")]
    pub fn from_vars(is_set: impl Fn(&str) -> bool) -> Self {
        TestHooks { refuse_zerocopy: is_set(REFUSE_ZEROCOPY_ENV) }
    }

    /// The hooks armed by their environment variables: none in this build (no `test-hooks`).
    #[cfg(not(feature = "test-hooks"))]
    pub fn from_vars(_is_set: impl Fn(&str) -> bool) -> Self {
        TestHooks {}
    }

    /// The first zero-copy send of each stream is to be refused.
    #[cfg(feature = "test-hooks")]
    pub(crate) fn refuse_zerocopy(self) -> bool {
        self.refuse_zerocopy
    }

    /// The first zero-copy send of each stream is to be refused: never in this build.
    #[cfg(not(feature = "test-hooks"))]
    pub(crate) fn refuse_zerocopy(self) -> bool {
        false
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
    /// The data path's tuning (the cli fills it from the environment).
    pub tuning: EngineTuning,
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
            tuning: EngineTuning::default(),
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
    /// The data path's tuning for the tests it serves (the cli fills it from the environment).
    pub tuning: EngineTuning,
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
            tuning: EngineTuning::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_automatic_unsent_mark_is_larger_only_when_every_thread_has_a_cpu() {
        let auto = NotsentMark::Auto;
        assert_eq!(auto.for_test(1, 2), Some(HOST_LOCAL_NOTSENT_OWN_CPUS), "one stream, two CPUs");
        assert_eq!(auto.for_test(2, 4), Some(HOST_LOCAL_NOTSENT_OWN_CPUS), "-P 2 on four CPUs");
        assert_eq!(auto.for_test(1, 1), Some(HOST_LOCAL_NOTSENT), "one CPU: sender and receiver share it");
        assert_eq!(auto.for_test(2, 2), Some(HOST_LOCAL_NOTSENT), "-P 2 (or --bidir) on two CPUs");
        assert_eq!(auto.for_test(128, 2), Some(HOST_LOCAL_NOTSENT));
        assert_eq!(auto.for_test(0, 2), Some(HOST_LOCAL_NOTSENT_OWN_CPUS), "no stream counts as one");
        assert_eq!(auto.for_test(1, 0), Some(HOST_LOCAL_NOTSENT), "no CPU count known");
        assert_eq!(NotsentMark::Off.for_test(1, 64), None);
        assert_eq!(NotsentMark::Bytes(4096).for_test(128, 1), Some(4096), "a set mark is kept");
        assert_eq!(EngineTuning::default().notsent_lowat, NotsentMark::Auto);
    }
}
