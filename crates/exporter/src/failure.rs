//! Why a probe failed, as a short machine-readable reason and a message for people.
//!
//! The reason is a label value (`/metrics` counts failures by it, `/probe` shows it), so the
//! set is small and fixed: [`REASONS`]. A test of a series (`repeat=N`) fails the probe with
//! its own reason; only the message says which round it was.

use std::io::ErrorKind;
use wireperf_engine::EngineError;

/// Every reason a probe can fail for.
pub const REASONS: [&str; 10] = [
    "resolve",
    "refused",
    "connect",
    "timeout",
    "busy",
    "server_error",
    "unsupported",
    "test_failed",
    "overloaded",
    "internal",
];

/// A failed probe.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    /// One of [`REASONS`].
    pub reason: &'static str,
    /// What happened, in words.
    pub message: String,
}

impl Failure {
    /// A failure with `reason` (one of [`REASONS`]).
    pub fn new(reason: &'static str, message: impl Into<String>) -> Self {
        Self { reason, message: message.into() }
    }

    /// The same failure, said of round `round` of a series of `of` tests ("round 2 of 3: …").
    /// A single test (`of` = 1) keeps its message as it is.
    pub fn in_round(self, round: u32, of: u32) -> Self {
        if of < 2 {
            return self;
        }
        Self { reason: self.reason, message: format!("round {round} of {of}: {}", self.message) }
    }

    /// Classifies an engine error.
    pub fn from_engine(e: &EngineError) -> Self {
        let reason = match e {
            EngineError::Resolve { .. } => "resolve",
            EngineError::Connect(io) | EngineError::StreamConnect(io) => match io.kind() {
                ErrorKind::ConnectionRefused => "refused",
                ErrorKind::TimedOut | ErrorKind::WouldBlock => "timeout",
                _ => "connect",
            },
            EngineError::Timeout(_) | EngineError::RecvTimeout => "timeout",
            EngineError::AccessDenied => "busy",
            EngineError::ServerReported { .. } | EngineError::ServerTerminated | EngineError::Refused(_) => {
                "server_error"
            }
            EngineError::Unsupported(_) => "unsupported",
            _ => "test_failed",
        };
        Self::new(reason, e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io;

    #[test]
    fn engine_errors_map_to_known_reasons() {
        let cases = [
            (EngineError::Resolve { host: "nx".into(), reason: "no such host".into() }, "resolve"),
            (EngineError::Connect(io::Error::from(ErrorKind::ConnectionRefused)), "refused"),
            (EngineError::Connect(io::Error::from(ErrorKind::TimedOut)), "timeout"),
            (EngineError::Connect(io::Error::from(ErrorKind::PermissionDenied)), "connect"),
            (EngineError::AccessDenied, "busy"),
            (EngineError::Unsupported("UDP (-u)"), "unsupported"),
            (EngineError::RecvTimeout, "timeout"),
            (EngineError::ClientTerminated, "test_failed"),
        ];
        for (e, want) in cases {
            let f = Failure::from_engine(&e);
            assert_eq!(f.reason, want, "{e}");
            assert!(REASONS.contains(&f.reason));
            assert_eq!(f.message, e.to_string());
        }
    }

    #[test]
    fn a_failed_round_keeps_its_reason_and_says_which_round() {
        let f = Failure::from_engine(&EngineError::AccessDenied);
        let r = f.clone().in_round(2, 3);
        assert_eq!((r.reason, r.message.as_str()), ("busy", format!("round 2 of 3: {}", f.message).as_str()));
        assert_eq!(f.clone().in_round(1, 1), f, "a single test's message is unchanged");
    }
}
