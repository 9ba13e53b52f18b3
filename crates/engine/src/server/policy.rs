//! What a public server may refuse, decided per test: authentication (through the owner's
//! [`crate::auth::AuthHook`]) and size limits.

/// Grace after `time + omit` before a server with `--server-max-duration` ends a test the
/// client did not end: enough for TEST_END to cross a slow path, short enough to hold the limit.
pub(crate) const MAX_DURATION_GRACE: std::time::Duration = std::time::Duration::from_secs(5);

/// The control-connection limits of one test under this configuration.
pub(crate) fn session_limits(cfg: &crate::ServerConfig) -> wireperf_protocol::server::ServerLimits {
    let mut l = wireperf_protocol::server::ServerLimits { ctrl_timeout: cfg.ctrl_timeout, ..Default::default() };
    if cfg.max_duration.is_some() {
        l.safety_margin = l.safety_margin.min(MAX_DURATION_GRACE);
    }
    l
}

/// The server's own limits on a test's parameters (before bit rates, which the test checks),
/// and then authentication. Each refusal carries the code a stock client understands.
pub(crate) fn check_params(
    cfg: &crate::ServerConfig,
    p: &wireperf_protocol::TestParams,
) -> Result<(), crate::EngineError> {
    use wireperf_protocol::IperfErrno;
    let refuse = |i_errno, reason: String| Err(crate::EngineError::Policy { i_errno, reason });
    if let Some(max) = cfg.max_parallel
        && p.parallel > max
    {
        return refuse(IperfErrno::NUMSTREAMS, format!("-P {} is above --max-parallel {max}", p.parallel));
    }
    if let Some(max) = cfg.max_duration {
        let len = u64::from(p.time) + u64::from(p.omit);
        if p.time == 0 {
            let why = format!("a test without a time limit (-n/-k) exceeds --server-max-duration {}", max.as_secs());
            return refuse(IperfErrno::MAXSERVERTESTDURATIONEXCEEDED, why);
        }
        if len > max.as_secs() {
            let why = format!("time+omit {len}s exceeds --server-max-duration {}", max.as_secs());
            return refuse(IperfErrno::MAXSERVERTESTDURATIONEXCEEDED, why);
        }
    }
    if let Some(auth) = &cfg.auth
        && let Err(why) = auth.authorize(p.authtoken.as_deref())
    {
        return refuse(IperfErrno::AUTHTEST, format!("authentication failed: {why}"));
    }
    Ok(())
}
