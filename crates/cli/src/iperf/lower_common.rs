//! The flags both roles share, lowered once for [`crate::iperf::lower_client`] and
//! [`crate::iperf::lower_server`]: how to print, where to bind, the timeouts and CPU affinity,
//! and the per-value readers (`-i`, `-p`, `--cntl-ka`, sizes and rates) both use.

use crate::iperf::args::IperfArgs;
use crate::iperf::cnum;
use crate::iperf::run_spec::{OutputOpts, ParamError};
use crate::shared::endpoint::split_bind;
use std::net::IpAddr;
use std::time::Duration;
use wireperf_protocol::IperfErrno;
use wireperf_protocol::params::limits;
use wireperf_sys::sockopt::Keepalive;

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

pub(super) fn common(a: &IperfArgs) -> Result<Common, ParamError> {
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
