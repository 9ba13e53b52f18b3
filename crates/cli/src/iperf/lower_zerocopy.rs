//! Lowering `-Z` / `--zerocopy[=z]` into the engine's send mode.
//!
//! iperf3's `-Z` means sendfile(); iperf3's open MSG_ZEROCOPY work (esnet/iperf#1720) spells
//! the other method `--zerocopy=z`, so wireperf accepts the same spelling.

use crate::iperf::run_spec::ParamError;
use wireperf_engine::SendMode;

/// `None` without `-Z`; `Some(Sendfile)` for `-Z`/`--zerocopy`/`--zerocopy=sendfile`;
/// `Some(MsgZerocopy)` for `--zerocopy=z` (or `=msg_zerocopy`).
pub fn send_mode(arg: Option<&str>) -> Result<Option<SendMode>, ParamError> {
    match arg {
        None => Ok(None),
        Some("" | "sendfile" | "s") => Ok(Some(SendMode::Sendfile)),
        Some("z" | "msg_zerocopy") => Ok(Some(SendMode::MsgZerocopy)),
        Some(other) => Err(ParamError::Msg(format!(
            "unknown zerocopy method '{other}' (use -Z for sendfile or --zerocopy=z for MSG_ZEROCOPY)"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spellings() {
        assert_eq!(send_mode(None).unwrap(), None);
        assert_eq!(send_mode(Some("sendfile")).unwrap(), Some(SendMode::Sendfile));
        assert_eq!(send_mode(Some("z")).unwrap(), Some(SendMode::MsgZerocopy));
        assert!(send_mode(Some("q")).is_err());
    }
}
