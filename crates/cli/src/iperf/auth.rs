//! iperf3 authentication, wired to files and the terminal.
//!
//! Server: the private key is read once at start; the authorized-users file is read again for
//! every test, as iperf3 does, so users can be added without a restart. Accepted tokens are
//! remembered so that a captured token cannot be replayed. Client: the token is made from
//! `--username`, the password (`IPERF3_PASSWORD`, else asked on the terminal without echo) and
//! the server's public key.
//!
//! Each side has a checked request built by the lowering without I/O ([`ServerAuth`],
//! [`ClientAuth`]) and a method that reads the files and the terminal
//! ([`ServerAuth::load`], [`ClientAuth::token`]).

use crate::iperf::run_spec::ParamError;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};
use wireperf_engine::server::{AuthContext, AuthHook, Authorizer};
use wireperf_protocol::auth::{self, CheckTime, Padding, ReplayGuard, Verifier};

/// iperf3's default `--time-skew-threshold`.
pub const DEFAULT_SKEW: u64 = 10;

fn unix(t: SystemTime) -> i64 {
    t.duration_since(UNIX_EPOCH).map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

/// The server's checker.
struct FileAuthorizer {
    verifier: Verifier,
    users: PathBuf,
    replay: Mutex<ReplayGuard>,
}

impl Authorizer for FileAuthorizer {
    fn authorize(&self, token: Option<&str>, ctx: &AuthContext) -> Result<String, String> {
        let users = std::fs::read_to_string(&self.users)
            .map_err(|e| format!("cannot read the authorized users file {}: {e}", self.users.display()))?;
        let at = CheckTime { now: unix(SystemTime::now()), arrived: unix(ctx.arrived) };
        let mut replay = self.replay.lock().map_err(|_| "internal lock poisoned".to_string())?;
        self.verifier.verify(token, &users, at, &mut replay).map(|(user, _)| user).map_err(|e| e.to_string())
    }
}

/// The server's authentication flags, checked: both `--rsa-private-key-path` and
/// `--authorized-users-path`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerAuth {
    key: String,
    users: String,
    skew: Option<u64>,
    /// The longest a connection can wait before its check (queue + timeout), seconds.
    hold: u64,
}

impl ServerAuth {
    /// `None` when no authentication flag is given; an error when only some are.
    pub fn from_flags(
        key: Option<&str>,
        users: Option<&str>,
        skew: Option<u64>,
        hold: u64,
    ) -> Result<Option<Self>, ParamError> {
        match (key, users) {
            (None, None) if skew.is_none() => Ok(None),
            (Some(k), Some(u)) => Ok(Some(ServerAuth { key: k.into(), users: u.into(), skew, hold })),
            _ => Err(ParamError::Msg(
                "authentication needs both --rsa-private-key-path and --authorized-users-path".into(),
            )),
        }
    }

    /// Reads the private key (and checks the users file is there): the server's authorizer.
    pub fn load(&self) -> Result<AuthHook, ParamError> {
        let (key, users) = (&self.key, &self.users);
        let pem = std::fs::read_to_string(key).map_err(|e| ParamError::Msg(format!("cannot read {key}: {e}")))?;
        let private = auth::private_key_from_pem(&pem).map_err(|e| ParamError::Msg(format!("{key}: {e}")))?;
        std::fs::metadata(users).map_err(|e| ParamError::Msg(format!("cannot read {users}: {e}")))?;
        let verifier = Verifier::new(private, self.skew.unwrap_or(DEFAULT_SKEW), self.hold);
        let check = FileAuthorizer { verifier, users: PathBuf::from(users), replay: Mutex::new(ReplayGuard::new()) };
        Ok(AuthHook::new(Arc::new(check)))
    }
}

/// The client's authentication flags, checked: `--username` and `--rsa-public-key-path`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientAuth {
    user: String,
    key: String,
    padding: Padding,
}

impl ClientAuth {
    /// `None` when neither flag is given; an error when one is missing or the name is bad.
    pub fn from_flags(user: Option<&str>, key: Option<&str>, pkcs1: bool) -> Result<Option<Self>, ParamError> {
        let (user, key) = match (user, key) {
            (None, None) => return Ok(None),
            (Some(u), Some(k)) => (u, k),
            _ => {
                return Err(ParamError::Msg(
                    "you must specify a username, password, and path to a valid RSA public key".into(),
                ));
            }
        };
        if user.is_empty() || user.chars().any(char::is_whitespace) {
            return Err(ParamError::Msg("the username must not be empty or contain spaces".into()));
        }
        let padding = if pkcs1 { Padding::Pkcs1v15 } else { Padding::Oaep };
        Ok(Some(ClientAuth { user: user.into(), key: key.into(), padding }))
    }

    /// Asks for the password and reads the public key: the token to send.
    pub fn token(&self) -> Result<String, ParamError> {
        let password = password()?;
        let key = &self.key;
        let pem = std::fs::read_to_string(key).map_err(|e| ParamError::Msg(format!("cannot read {key}: {e}")))?;
        let public = auth::public_key_from_pem(&pem).map_err(|e| ParamError::Msg(format!("{key}: {e}")))?;
        auth::make_token(&public, &self.user, &password, unix(SystemTime::now()), self.padding)
            .map_err(|e| ParamError::Msg(e.to_string()))
    }
}

/// `IPERF3_PASSWORD`, else a no-echo prompt on the terminal.
fn password() -> Result<String, ParamError> {
    let pw = match std::env::var("IPERF3_PASSWORD") {
        Ok(p) => p,
        Err(_) if std::io::stdin().is_terminal() => rpassword::prompt_password("Password: ")
            .map_err(|e| ParamError::Msg(format!("cannot read the password: {e}")))?,
        Err(_) => {
            return Err(ParamError::Msg("no password: set IPERF3_PASSWORD (stdin is not a terminal to ask on)".into()));
        }
    };
    if pw.is_empty() || pw.chars().any(char::is_whitespace) {
        return Err(ParamError::Msg("the password must not be empty or contain spaces".into()));
    }
    Ok(pw)
}
