//! Lowering the public-server flags (limits, queue, authentication) into a [`ServerConfig`].

use crate::args::IperfArgs;
use crate::lower::ParamError;
use std::time::Duration;
use wireperf_engine::ServerConfig;
use wireperf_protocol::params::limits;

/// Fills the concurrency, limit and authentication fields of `cfg` from the flags.
pub fn apply(a: &IperfArgs, cfg: &mut ServerConfig) -> Result<(), ParamError> {
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
    match p.server_max_duration {
        Some(0) => return Err(ParamError::Msg("--server-max-duration must be at least 1 second".into())),
        Some(s) if s > u64::from(limits::MAX_TIME) => {
            return Err(ParamError::Msg(format!("--server-max-duration is at most {} seconds", limits::MAX_TIME)));
        }
        s => cfg.max_duration = s.map(Duration::from_secs),
    }
    match p.max_parallel {
        Some(0) => return Err(ParamError::Msg("--max-parallel must be at least 1".into())),
        n => cfg.max_parallel = n,
    }
    let hold = cfg.queue.unwrap_or_default() + cfg.ctrl_timeout;
    cfg.auth = crate::auth_cmd::server(
        a.rsa_private_key_path.as_deref(),
        a.authorized_users_path.as_deref(),
        a.time_skew_threshold,
        hold.as_secs(),
    )?;
    Ok(())
}

/// True when a server-only flag of this family was given to a client.
pub fn server_only_given(a: &IperfArgs) -> bool {
    a.public.any()
        || a.rsa_private_key_path.is_some()
        || a.authorized_users_path.is_some()
        || a.time_skew_threshold.is_some()
}
