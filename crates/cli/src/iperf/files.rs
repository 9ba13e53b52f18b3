//! The part of lowering that touches the outside: the size of a `-F` file the client sends,
//! the server's RSA key and users file, the client's key and password, and the engine's
//! tuning from the environment (`shared::tuning`). Kept apart so that
//! [`crate::iperf::lower`] stays a pure function of the flags. It depends on the leaf types
//! (`run_spec.rs`) and `auth.rs`, never on the lowering, so the lowering can name [`Pending`].

use crate::iperf::auth::{ClientAuth, ServerAuth};
use crate::iperf::run_spec::{Mode, ParamError};

/// What the pure lowering left to read.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Pending {
    /// `-F FILE` on a sending client without `-t`/`-n`/`-k`: the test sends the file's size.
    pub send_file_size: Option<String>,
    /// The client's token to make.
    pub client_auth: Option<ClientAuth>,
    /// The server's authorizer to load.
    pub server_auth: Option<ServerAuth>,
}

/// Reads what `pending` names into `mode`.
pub fn finish(mut mode: Mode, pending: &Pending) -> Result<Mode, ParamError> {
    let tuning = crate::shared::tuning::from_env();
    match &mut mode {
        Mode::Client(run) => {
            let cfg = &mut run.config;
            cfg.tuning = tuning;
            if let Some(auth) = &pending.client_auth {
                cfg.params.authtoken = Some(auth.token()?);
            }
            if let Some(f) = &pending.send_file_size {
                let size = std::fs::metadata(f)
                    .map_err(|e| ParamError::Msg(format!("unable to open -F file {f}: {e}")))?
                    .len();
                cfg.params.num = size.max(1);
                cfg.params.time = 0;
            }
        }
        Mode::Server(run) => {
            run.config.tuning = tuning;
            if let Some(auth) = &pending.server_auth {
                run.config.auth = Some(auth.load()?);
            }
        }
        Mode::Version => {}
    }
    Ok(mode)
}
