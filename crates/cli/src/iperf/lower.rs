//! Lowering flags into engine configurations ("high args"), with iperf3's parameter checks.
//!
//! Errors here are parameter errors: printed as `wireperf: parameter error - <msg>` and
//! exit status 1, as iperf3 does. The messages are iperf3's where iperf3 has one.
//!
//! The lowering is pure: it reads no file and asks nothing on the terminal. What needs I/O
//! (the size of a `-F` file, the RSA keys and the password) is returned as [`Pending`] for
//! [`crate::iperf::files`] to finish. This file holds the flags both roles share and the role
//! check; [`crate::iperf::lower_client`] and [`crate::iperf::lower_server`] the rest.

use crate::iperf::args::IperfArgs;
use crate::iperf::cnum;
use crate::iperf::files::Pending;
use crate::iperf::roles::RoleFlags;
use crate::shared::endpoint::split_bind;
use std::net::IpAddr;
use std::time::Duration;
use wireperf_engine::{ClientConfig, ServerConfig};
use wireperf_protocol::IperfErrno;
use wireperf_protocol::params::limits;
use wireperf_suite::series::RepeatConfig;
use wireperf_sys::sockopt::Keepalive;

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
    Client(Box<ClientConfig>, OutputOpts, Option<RepeatConfig>),
    /// `-s`.
    Server(Box<ServerConfig>, OutputOpts, ServerProcess),
    /// `-v`.
    Version,
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
    pub log_format: crate::iperf::args_server::LogFormat,
    /// What of this host a client that asks is told (`--no-share-host`, `--host-root`).
    pub share: wireperf_bottleneck::engine_watch::HostSharing,
}

/// Why `--sctp`, `-X` and `--nstreams` are refused.
pub const SCTP_REFUSED: &str =
    "SCTP (--sctp, -X, --nstreams) is not supported by wireperf: it has TCP, MPTCP (-m) and UDP streams only";

fn refuse_unsupported(a: &IperfArgs) -> Result<(), ParamError> {
    if a.sctp || a.xbind.is_some() || a.nstreams.is_some() {
        return Err(ParamError::Refused(SCTP_REFUSED));
    }
    Ok(())
}

pub(super) fn output_opts(a: &IperfArgs) -> Result<OutputOpts, ParamError> {
    let format = match &a.format {
        None => 'a',
        Some(f) => match f.chars().next() {
            Some(c) if "kmgtKMGT".contains(c) => c,
            _ => return Err(IperfErrno::BADFORMAT.into()),
        },
    };
    Ok(OutputOpts {
        json: a.json || a.json_stream,
        json_stream: a.json_stream,
        json_stream_full: a.json_stream && a.json_stream_full_output,
        verbose: a.verbose,
        format,
        title: a.title.clone(),
        timestamps: a.timestamps.clone(),
        logfile: a.logfile.clone(),
        forceflush: a.forceflush,
        debug: a.debug.is_some(),
    })
}

pub(super) fn interval(a: &IperfArgs) -> Result<Option<Duration>, ParamError> {
    match a.interval {
        None => Ok(Some(Duration::from_secs(1))),
        Some(0.0) => Ok(None),
        Some(i) if (0.1..=60.0).contains(&i) => Ok(Some(Duration::from_secs_f64(i))),
        Some(_) => Err(IperfErrno::INTERVAL.into()),
    }
}

pub(super) fn port(a: &IperfArgs) -> Result<u16, ParamError> {
    match a.port {
        None => Ok(wireperf_protocol::DEFAULT_PORT),
        Some(p) => u16::try_from(p).ok().filter(|&p| p > 0).ok_or(ParamError::Iperf(IperfErrno::BADPORT)),
    }
}

pub(super) fn keepalive(a: &IperfArgs) -> Result<Option<Keepalive>, ParamError> {
    let Some(spec) = &a.cntl_ka else { return Ok(None) };
    // iperf3: each part read with atoi, an empty or missing part keeps the system's default.
    let mut parts = spec.splitn(3, '/').map(|s| {
        let n = cnum::atoi(s).unwrap_or(0);
        (!s.is_empty()).then(|| u32::try_from(n).unwrap_or(0))
    });
    let mut next = || parts.next().flatten();
    let ka = Keepalive { idle_secs: next(), interval_secs: next(), count: next() };
    // 3.22: an idle period not longer than the whole retry period is refused.
    let idle = ka.idle_secs.unwrap_or(0);
    if idle > 0 && u64::from(idle) <= u64::from(ka.interval_secs.unwrap_or(0)) * u64::from(ka.count.unwrap_or(0)) {
        return Err(IperfErrno::CNTLKA.into());
    }
    Ok(Some(ka))
}

pub(super) fn unit<T>(r: Result<T, wireperf_report::units::UnitError>) -> Result<T, ParamError> {
    r.map_err(|e| ParamError::Msg(e.to_string()))
}

/// `-A N[,M]` as iperf3 reads it: `strtol` for N (something must be read), `atoi` for the
/// server's M (`-A 1,` is M = 0); both 0..=1024. Returns (N, M).
fn affinity(s: &str) -> Result<(usize, Option<u32>), ParamError> {
    let bad = || ParamError::Iperf(IperfErrno::AFFINITY);
    let cpu = |n: i64| u32::try_from(n).ok().filter(|&n| n <= limits::MAX_CPU).ok_or_else(bad);
    let (n, _) = cnum::strtol(s).ok_or_else(bad)?;
    let n = cpu(n)?;
    let server = match s.split_once(',') {
        Some((_, m)) => Some(cpu(cnum::atoi(m).unwrap_or(0))?),
        None => None,
    };
    Ok((n as usize, server))
}

/// What both roles take from the flags they share.
pub(super) struct Common {
    /// How to print.
    pub out: OutputOpts,
    /// `-B` address.
    pub bind: Option<IpAddr>,
    /// `-B addr%dev` device.
    pub bind_dev: Option<String>,
    /// `--rcv-timeout` (default 120 s).
    pub rcv_timeout: Duration,
    /// `--snd-timeout`.
    pub snd_timeout: Option<Duration>,
    /// `-A N`.
    pub affinity: Option<usize>,
    /// `-A N,M`: M, the CPU the client asks the server to pin the test to.
    pub server_affinity: Option<u32>,
}

fn common(a: &IperfArgs) -> Result<Common, ParamError> {
    let out = output_opts(a)?;
    let (bind, bind_dev) = match &a.bind {
        None => (None, None),
        Some(b) => split_bind(b).map_err(ParamError::Msg)?,
    };
    let bind_dev = a.bind_dev.clone().or(bind_dev);
    if a.rcv_timeout.is_some_and(|t| !(1..=86_400_000).contains(&t)) {
        return Err(IperfErrno::RCVTIMEOUT.into());
    }
    let (affinity, server_affinity) = match a.affinity.as_deref().map(affinity).transpose()? {
        Some((n, m)) => (Some(n), m),
        None => (None, None),
    };
    Ok(Common {
        out,
        bind,
        bind_dev,
        rcv_timeout: Duration::from_millis(a.rcv_timeout.unwrap_or(120_000)),
        snd_timeout: a.snd_timeout.map(Duration::from_millis),
        affinity,
        server_affinity,
    })
}

/// Lowers the flags into what to run, and what is left to read from files.
pub fn lower(a: &IperfArgs, roles: &RoleFlags) -> Result<(Mode, Pending), ParamError> {
    if a.version {
        return Ok((Mode::Version, Pending::default()));
    }
    match (a.server, &a.client) {
        (true, Some(_)) => return Err(IperfErrno::SERVCLIENT.into()),
        (false, None) => return Err(IperfErrno::NOROLE.into()),
        _ => {}
    }
    // The role check comes first, as in iperf3 (`-s --sctp` is "client only" there too).
    if a.server && !roles.client_only.is_empty() {
        // wireperf's series flags are named: iperf3's words would leave the user guessing.
        return Err(crate::iperf::repeat::refused_by_server(&roles.client_only)
            .unwrap_or(ParamError::Iperf(IperfErrno::CLIENTONLY)));
    }
    if !a.server && !roles.server_only.is_empty() {
        return Err(IperfErrno::SERVERONLY.into());
    }
    refuse_unsupported(a)?;
    let common = common(a)?;
    // `-A N,M` asks the server for CPU M: a client's flag (iperf3's `client_flag`).
    if a.server && common.server_affinity.is_some() {
        return Err(IperfErrno::CLIENTONLY.into());
    }
    if a.server {
        return crate::iperf::lower_server::lower(a, common);
    }
    crate::iperf::lower_client::lower(a, common)
}

#[cfg(test)]
mod tests {
    use super::*;
    use wireperf_protocol::Protocol;

    fn parse(cmd: &str) -> Result<Mode, ParamError> {
        let (cli, roles) = crate::cli::parse_from(cmd.split_whitespace()).unwrap();
        lower(&cli.iperf, &roles).map(|(mode, _)| mode)
    }

    #[test]
    fn a_fractional_time_is_read_as_iperf3_reads_it_and_said_so() {
        let warn = |c: &str| {
            let (cli, _) = crate::cli::parse_from(c.split_whitespace()).unwrap();
            super::super::lower_client::fractional_time_warning(&cli.iperf)
        };
        let Ok(Mode::Client(half, ..)) = parse("wireperf -c h -t 0.5") else { panic!("-t 0.5 refused") };
        assert_eq!(half.params.time, 0, "iperf3's atoi reads -t 0.5 as 0");
        assert!(warn("wireperf -c h -t 0.5").is_some_and(|w| w.contains("runs until interrupted")));
        assert_eq!(warn("wireperf -c h -t 1.5").as_deref(), Some("-t 1.5 reads as 1 s (whole seconds, as in iperf3)"));
        assert_eq!(warn("wireperf -c h -t 2"), None);
        assert_eq!(warn("wireperf -c h -t 0"), None);
        assert_eq!(warn("wireperf -c h"), None);
    }

    #[test]
    fn iperf3_parameter_errors() {
        let msg = |c: &str| parse(c).unwrap_err().to_string();
        assert_eq!(msg("wireperf"), "must either be a client (-c) or server (-s)");
        assert_eq!(msg("wireperf -s -c h"), "cannot be both server and client");
        assert_eq!(msg("wireperf -c h -f x"), "bad format specifier (valid formats are in the set [kmgtKMGT])");
        assert_eq!(msg("wireperf -c h -P 200"), "invalid number of parallel streams (min = 1, max = 128)");
        assert_eq!(msg("wireperf -c h -R --bidir"), "cannot be both reverse and bidirectional");
        assert_eq!(msg("wireperf -c h -t 2 -n 1M"), "only one test end condition (-t, -n, -k) may be specified");
        assert_eq!(msg("wireperf -c h --sctp"), SCTP_REFUSED);
        assert_eq!(msg("wireperf -c h -P 0"), "invalid number of parallel streams (min = 1, max = 128)");
        assert_eq!(msg("wireperf -c h -M 32768"), "TCP MSS too large (maximum = 32767 bytes)");
        assert_eq!(msg("wireperf -c h -u -F Cargo.toml"), "cannot transfer file using UDP");
        assert_eq!(msg("wireperf -c h -A x"), "unable to set CPU affinity");
        assert_eq!(msg("wireperf -c h -A 1,2000"), "unable to set CPU affinity");
        assert_eq!(msg("wireperf -s -A 1,1"), "some option you are trying to set is client only");
        assert_eq!(msg("wireperf -c h -L 0"), "unable to set IPv6 flow label");
        assert_eq!(msg("wireperf -c h -L 0x100000"), "unable to set IPv6 flow label");
        assert_eq!(msg("wireperf -c h -L x"), "unable to set IPv6 flow label");
        assert_eq!(msg("wireperf -s -L 1"), "some option you are trying to set is client only");
        assert_eq!(
            msg("wireperf -c h --cntl-ka=10/5/3"),
            "control connection Keepalive period should be larger than the full retry period (interval * count)"
        );
        assert_eq!(msg("wireperf -s --gsro"), "some option you are trying to set is client only");
        assert_eq!(msg("wireperf -s --skip-rx-copy"), "some option you are trying to set is client only");
        assert_eq!(msg("wireperf -c h -u -l 8"), "block size invalid (minimum = 16 bytes, maximum = 65507 bytes)");
        assert_eq!(msg("wireperf -s -t 3"), "some option you are trying to set is client only");
    }

    #[test]
    fn affinity_and_flow_label_reach_the_parameters() {
        let client = |cmd: &str| match parse(cmd) {
            Ok(Mode::Client(c, ..)) => c,
            other => panic!("{cmd}: {other:?}"),
        };
        let c = client("wireperf -c h -A 1,0");
        assert_eq!((c.affinity, c.params.server_affinity), (Some(1), Some(0)));
        let c = client("wireperf -c h -A 0");
        assert_eq!((c.affinity, c.params.server_affinity), (Some(0), None));
        // atoi reads an empty M as 0, as in 3.22.
        assert_eq!(client("wireperf -c h -A 1,").params.server_affinity, Some(0));
        // strtol: hex, and trailing junk ignored (`-L 5x` runs in 3.22).
        assert_eq!(client("wireperf -c h -L 0x12345").params.flowlabel, Some(0x12345));
        assert_eq!(client("wireperf -c h -L 5x").params.flowlabel, Some(5));
        assert_eq!(client("wireperf -c h").params.flowlabel, None);
        let Ok(Mode::Server(s, ..)) = parse("wireperf -s -A 1") else { panic!() };
        assert_eq!(s.affinity, Some(1));
    }

    /// 3.22: the later of `-u` and `-m` sets the protocol.
    #[test]
    fn the_later_of_udp_and_mptcp_wins() {
        let params = |cmd: &str| match parse(cmd) {
            Ok(Mode::Client(c, ..)) => (c.params.protocol, c.params.mptcp),
            other => panic!("{cmd}: {other:?}"),
        };
        assert_eq!(params("wireperf -c h -u -m"), (Protocol::Tcp, true));
        assert_eq!(params("wireperf -c h --udp --mptcp"), (Protocol::Tcp, true));
        assert_eq!(params("wireperf -c h -m -u"), (Protocol::Udp, false));
        assert_eq!(params("wireperf -c h -um"), (Protocol::Tcp, true));
        assert_eq!(params("wireperf -c h -u"), (Protocol::Udp, false));
        assert_eq!(params("wireperf -c h -m"), (Protocol::Tcp, true));
    }

    #[test]
    fn sizes_and_rates_use_iperf3_bases() {
        let Ok(Mode::Client(c, ..)) = parse("wireperf -c h -n 20M -l 128K -w 1M -b 100M/10") else { panic!() };
        assert_eq!((c.params.num, c.params.len, c.params.window), (20 * 1024 * 1024, 131072, Some(1 << 20)));
        assert_eq!((c.params.bandwidth, c.params.burst, c.params.time), (Some(100_000_000), Some(10), 0));
    }

    #[test]
    fn udp_defaults_and_flags() {
        let Ok(Mode::Client(c, ..)) = parse("wireperf -c h -u") else { panic!() };
        let p = &c.params;
        assert_eq!((p.protocol, p.len, p.bandwidth), (Protocol::Udp, 0, Some(1_048_576)));
        let Ok(Mode::Client(c, ..)) = parse(
            "wireperf -c h -u -b 0 -l 1448 --udp-counters-64bit --dont-fragment --fq-rate 10M --repeating-payload",
        ) else {
            panic!()
        };
        let p = &c.params;
        assert_eq!((p.len, p.bandwidth, p.fqrate), (1448, None, Some(10_000_000)));
        assert!(p.udp_counters_64bit && p.dont_fragment && p.repeating_payload);
        let Ok(Mode::Client(c, ..)) = parse("wireperf -c h -u -b 200M/8") else { panic!() };
        assert_eq!((c.params.bandwidth, c.params.burst), (Some(200_000_000), Some(8)));
    }

    #[test]
    fn bind_with_device_and_dscp() {
        let Ok(Mode::Client(c, ..)) = parse("wireperf -c h -B 127.0.0.1%lo --dscp ef") else { panic!() };
        assert_eq!(c.bind_dev.as_deref(), Some("lo"));
        assert_eq!(c.params.tos, Some(46 << 2));
        let Ok(Mode::Client(c, ..)) = parse("wireperf -c h -S 0x10") else { panic!() };
        assert_eq!(c.params.tos, Some(16));
    }
}
