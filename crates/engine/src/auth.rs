//! The authentication hook a server owner plugs into [`crate::ServerConfig`].
//!
//! The engine does not know how tokens are checked (RSA lives in the protocol crate behind a
//! feature, the users file on disk): the owner of the server supplies an [`Authorizer`]. The
//! serve loop stamps each test's copy of the hook with when and from where its control
//! connection arrived, so that a client that waited in the queue is judged by its arrival.
//!
//! A leaf: `config` holds the hook and `server` runs it, so it depends on neither.

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
