//! The fix channel: how a `wireperf suite --fix` client asks a wireperf server started with
//! `--allow-fix` to change its own host, and to keep or undo that change once it is proven.
//!
//! It is a connection of its own to the server's port, opened with [`FIX_COOKIE`] where a
//! test's control connection sends its cookie (an iperf3 cookie is 36 characters from
//! `a-z2-7`, so the upper-case [`FIX_COOKIE`] can never be a test's). The connection lives as
//! long as the fix loop: the server undoes every change not yet kept when it closes, so a
//! client that crashes or loses the path leaves nothing behind. Tests run beside it on their
//! own connections as usual.
//!
//! After the cookie, each side sends iperf3-framed JSON ([`crate::frame::encode_json`], at
//! most [`MAX_MESSAGE`] bytes): the server speaks first ([`FixAnswer::Offer`] or
//! [`FixAnswer::Refused`]); then the client sends one [`FixRequest`] at a time and reads one
//! [`FixAnswer`] for it. A stock iperf3 server answers the cookie with a state byte instead
//! (PARAM_EXCHANGE, or ACCESS_DENIED), never with a frame, whose first byte is 0 for any
//! message under 16 MiB: [`first_byte_is_frame`] tells them apart before a request is sent.
//!
//! The client names what to fix only by a finding id: the server recomputes its own findings
//! and applies its own actions for that id, never a path, value or command from the wire.

use crate::cookie::COOKIE_SIZE;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The first 37 bytes of a fix channel (36 characters and a NUL, like a cookie).
pub const FIX_COOKIE: [u8; COOKIE_SIZE] = *b"WIREPERF-FIX-CHANNEL-V1-------------\0";

/// The largest message either side accepts, bytes.
pub const MAX_MESSAGE: u32 = 64 * 1024;

/// A client's request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum FixRequest {
    /// The first request: who asks (iperf3's `authtoken`, when the server authenticates).
    Hello {
        /// The RSA token a test's parameters would carry.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        authtoken: Option<String>,
    },
    /// Apply the server's own fix for `finding` (a doctor finding id such as `rps-off`, or a
    /// bottleneck cause such as `receiver-window`).
    Apply {
        /// The finding or cause id.
        finding: String,
        /// For a buffer fix: the bytes in flight the client measured (rate × round trip),
        /// which the server sizes its buffer for, within its own bounds.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        need_bytes: Option<u64>,
    },
    /// The step proved itself: keep it (it stays in the server's journal).
    Keep {
        /// The step as the server numbered it in [`FixAnswer::Applied`].
        step: u32,
    },
    /// The step did not help: restore what it changed.
    Undo {
        /// The step.
        step: u32,
    },
    /// The loop is done (every step kept or undone); the server closes.
    Bye,
}

/// A server's answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "answer", rename_all = "snake_case")]
pub enum FixAnswer {
    /// The server's first message: it takes fix requests.
    Offer {
        /// It authenticates clients: the Hello must carry a valid token.
        auth_required: bool,
    },
    /// The Hello was accepted.
    Welcome {
        /// The server runs as root and can change its host.
        root: bool,
    },
    /// Nothing will be changed, and why (no `--allow-fix`, authentication failed, not root).
    Refused {
        /// One sentence for the user.
        reason: String,
    },
    /// The change was made and journaled on the server.
    Applied {
        /// The server's number for the step (for Keep and Undo).
        step: u32,
        /// What changed, old → new, one line each.
        changes: Vec<String>,
        /// How to make it permanent on that host.
        persist: Vec<String>,
    },
    /// The server made no change for this finding: why, and the commands to run there by
    /// hand (a finding it does not see, a change it refuses to make remotely).
    NotApplied {
        /// One sentence.
        reason: String,
        /// Commands for that host, when there are any.
        commands: Vec<String>,
    },
    /// The step is kept.
    Kept {
        /// The step.
        step: u32,
    },
    /// The step's changes were restored.
    Undone {
        /// The step.
        step: u32,
        /// What was restored, new → old, one line each.
        restored: Vec<String>,
    },
    /// The request could not be served (malformed, unknown step, a failed write).
    Error {
        /// One sentence.
        reason: String,
    },
}

/// Why a fix-channel message could not be read.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum FixWireError {
    /// Not a message of this channel.
    #[error("not a fix-channel message: {0}")]
    Malformed(String),
}

/// A request, framed for the wire.
pub fn encode_request(r: &FixRequest) -> Vec<u8> {
    crate::frame::encode_json(&serde_json::to_value(r).unwrap_or(Value::Null))
}

/// An answer, framed for the wire.
pub fn encode_answer(a: &FixAnswer) -> Vec<u8> {
    crate::frame::encode_json(&serde_json::to_value(a).unwrap_or(Value::Null))
}

/// Reads a request from a received JSON object.
pub fn decode_request(v: Value) -> Result<FixRequest, FixWireError> {
    serde_json::from_value(v).map_err(|e| FixWireError::Malformed(e.to_string()))
}

/// Reads an answer from a received JSON object.
pub fn decode_answer(v: Value) -> Result<FixAnswer, FixWireError> {
    serde_json::from_value(v).map_err(|e| FixWireError::Malformed(e.to_string()))
}

/// True when the first byte a server sent after [`FIX_COOKIE`] starts a frame (a length
/// below 16 MiB begins with 0), false for a stock server's state byte (PARAM_EXCHANGE is 9,
/// ACCESS_DENIED is 0xFF).
pub fn first_byte_is_frame(b: u8) -> bool {
    b == 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frame::{Expect, FrameReader, Item};

    #[test]
    fn the_cookie_is_37_bytes_ending_in_nul_and_never_a_stock_cookie() {
        assert_eq!(FIX_COOKIE.len(), COOKIE_SIZE);
        assert_eq!(FIX_COOKIE[COOKIE_SIZE - 1], 0);
        assert!(FIX_COOKIE[..COOKIE_SIZE - 1].iter().all(u8::is_ascii_graphic));
        let stock = crate::Cookie::random();
        assert_ne!(stock.as_bytes(), &FIX_COOKIE);
        assert!(FIX_COOKIE.iter().any(u8::is_ascii_uppercase), "stock cookies are lower case");
    }

    #[test]
    fn requests_and_answers_round_trip_through_frames() {
        let reqs = [
            FixRequest::Hello { authtoken: None },
            FixRequest::Hello { authtoken: Some("tok".into()) },
            FixRequest::Apply { finding: "receiver-window".into(), need_bytes: Some(123_456) },
            FixRequest::Keep { step: 2 },
            FixRequest::Undo { step: 3 },
            FixRequest::Bye,
        ];
        for r in reqs {
            let mut rd = FrameReader::new();
            rd.push(&encode_request(&r));
            let Ok(Some(Item::Json(v))) = rd.next(Expect::Json { max_len: MAX_MESSAGE }) else { panic!("{r:?}") };
            assert_eq!(decode_request(v), Ok(r));
        }
        let a = FixAnswer::Applied { step: 1, changes: vec!["a → b".into()], persist: vec![] };
        let bytes = encode_answer(&a);
        assert!(first_byte_is_frame(bytes[0]));
        let mut rd = FrameReader::new();
        rd.push(&bytes);
        let Ok(Some(Item::Json(v))) = rd.next(Expect::Json { max_len: MAX_MESSAGE }) else { panic!() };
        assert_eq!(decode_answer(v), Ok(a));
    }

    #[test]
    fn foreign_json_and_state_bytes_are_not_messages() {
        assert!(decode_request(serde_json::json!({"op": "format_disk"})).is_err());
        assert!(decode_request(serde_json::json!({"tcp": true, "time": 10})).is_err());
        assert!(decode_answer(serde_json::json!({"answer": 5})).is_err());
        assert!(!first_byte_is_frame(9), "PARAM_EXCHANGE");
        assert!(!first_byte_is_frame(0xFF), "ACCESS_DENIED");
    }
}
