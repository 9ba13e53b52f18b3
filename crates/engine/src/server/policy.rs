//! What a public server may refuse, decided per test: authentication and size limits.
//!
//! The engine does not know how tokens are checked (RSA lives in the protocol crate behind a
//! feature, the users file on disk): the owner of the server supplies an [`Authorizer`]. The
//! serve loop stamps each test's copy of the hook with when and from where its control
//! connection arrived, so that a client that waited in the queue is judged by its arrival.

use std::fmt;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::SystemTime;

/// Checks the `authtoken` of a test's parameters.
pub trait Authorizer: Send + Sync {
    /// `Ok(user)` to let the test run, `Err(reason)` to refuse it with IEAUTHTEST (142).
    fn authorize(&self, token: Option<&str>, ctx: &AuthContext) -> Result<String, String>;
}

/// Where and when the control connection of the test being checked arrived.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AuthContext {
    /// The client's address.
    pub client: Option<SocketAddr>,
    /// When its control connection was accepted (before any time spent in the queue).
    pub arrived: SystemTime,
}

/// An [`Authorizer`] in a [`crate::ServerConfig`], with this test's [`AuthContext`].
#[derive(Clone)]
pub struct AuthHook {
    check: Arc<dyn Authorizer>,
    ctx: Option<AuthContext>,
}

impl AuthHook {
    /// Wraps an authorizer.
    pub fn new(check: Arc<dyn Authorizer>) -> Self {
        Self { check, ctx: None }
    }

    /// The same authorizer for one test whose control connection arrived as `ctx` says.
    pub(crate) fn for_test(&self, ctx: AuthContext) -> Self {
        Self { check: Arc::clone(&self.check), ctx: Some(ctx) }
    }

    /// Runs the check (arrival = now when the serve loop did not stamp this copy).
    pub fn authorize(&self, token: Option<&str>) -> Result<String, String> {
        let ctx = self.ctx.unwrap_or(AuthContext { client: None, arrived: SystemTime::now() });
        self.check.authorize(token, &ctx)
    }
}

impl fmt::Debug for AuthHook {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AuthHook").field("ctx", &self.ctx).finish_non_exhaustive()
    }
}

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
