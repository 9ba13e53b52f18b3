//! Lowering the server's flags into a [`ServerRun`]: iperf3's server flags into the engine's
//! [`ServerConfig`] (built in [`lower`]), then the public-server limits and queue, then what
//! authentication needs, then the process around the server.

use crate::iperf::args::IperfArgs;
use crate::iperf::auth::ServerAuth;
use crate::iperf::files::Pending;
use crate::iperf::lower_common::{Common, interval, keepalive, port, unit};
use crate::iperf::run_spec::{Mode, ParamError, ServerProcess, ServerRun};
use crate::shared::endpoint::family;
use std::time::Duration;
use wireperf_engine::ServerConfig;
use wireperf_protocol::IperfErrno;
use wireperf_protocol::params::limits;
use wireperf_report::units::parse_rate;

/// Lowers a server's flags (`a.server` is set).
pub(super) fn lower(a: &IperfArgs, common: Common) -> Result<(Mode, Pending), ParamError> {
    let (bitrate_limit, window) = match &a.server_bitrate_limit {
        None => (None, 5),
        Some(s) => {
            let (rate, secs) = s.split_once('/').unwrap_or((s.as_str(), "5"));
            let secs = secs.parse::<u64>().ok().filter(|&w| (1..=3600).contains(&w)).ok_or_else(|| {
                ParamError::Msg(format!("invalid averaging interval in --server-bitrate-limit '{s}'"))
            })?;
            (Some(unit(parse_rate(rate))?).filter(|&r| r > 0), secs)
        }
    };
    let mut cfg = ServerConfig {
        file: a.file.as_ref().map(std::path::PathBuf::from),
        port: port(a)?,
        bind: common.bind,
        bind_dev: common.bind_dev,
        family: family(a.version4, a.version6),
        interval: interval(a)?,
        one_off: a.one_off,
        idle_timeout: a.idle_timeout.map(Duration::from_secs),
        rcv_timeout: common.rcv_timeout,
        snd_timeout: common.snd_timeout,
        bitrate_limit,
        bitrate_limit_window: Duration::from_secs(window),
        cntl_ka: keepalive(a)?,
        affinity: common.affinity,
        ..Default::default()
    };
    public_limits(a, &mut cfg)?;
    let hold = cfg.queue.unwrap_or_default() + cfg.ctrl_timeout;
    let pending = Pending {
        server_auth: ServerAuth::from_flags(
            a.rsa_private_key_path.as_deref(),
            a.authorized_users_path.as_deref(),
            a.time_skew_threshold,
            hold.as_secs(),
        )?,
        ..Pending::default()
    };
    let proc = ServerProcess {
        daemon: a.daemon,
        pidfile: a.pidfile.clone(),
        metrics: a.metrics.clone(),
        log_format: a.public.log_format.unwrap_or_default(),
        share: if a.public.no_share_host {
            wireperf_bottleneck::engine_watch::HostSharing::Nothing
        } else {
            wireperf_bottleneck::engine_watch::HostSharing::Host(wireperf_doctor::share::ShareSource {
                root: a.public.host_root.clone(),
                kernel_log: a.public.host_kernel_log.clone(),
            })
        },
        allow_fix: a
            .public
            .allow_fix
            .then(|| wireperf_fix::serve::ServeConfig { journal: a.public.fix_journal.clone() }),
    };
    Ok((Mode::Server(ServerRun { config: Box::new(cfg), output: common.out, process: proc }), pending))
}

/// Fills the concurrency and limit fields of `cfg` from the public-server flags.
fn public_limits(a: &IperfArgs, cfg: &mut ServerConfig) -> Result<(), ParamError> {
    let p = &a.public;
    let positive = |v: Option<usize>, flag: &str| match v {
        Some(0) => Err(ParamError::Msg(format!("{flag} must be at least 1"))),
        other => Ok(other),
    };
    if let Some(n) = positive(p.max_tests, "--max-tests")? {
        cfg.max_tests = n;
    }
    cfg.max_tests_per_client = positive(p.max_tests_per_client, "--max-tests-per-client")?;
    if let Some(n) = positive(p.queue_max, "--queue-max")? {
        cfg.queue_max = n;
    }
    if let Some(n) = positive(p.max_half_open, "--max-half-open")? {
        cfg.max_half_open = n;
    }
    cfg.queue = p.queue.filter(|&s| s > 0).map(Duration::from_secs);
    // 3.22: 0 means no limit; below 0 or above a day is its duration error.
    match p.server_max_duration {
        Some(s) if !(0..=i64::from(limits::MAX_TIME)).contains(&s) => return Err(IperfErrno::DURATION.into()),
        s => cfg.max_duration = s.and_then(|s| u64::try_from(s).ok()).filter(|&s| s > 0).map(Duration::from_secs),
    }
    match p.max_parallel {
        Some(0) => return Err(ParamError::Msg("--max-parallel must be at least 1".into())),
        n => cfg.max_parallel = n,
    }
    Ok(())
}
