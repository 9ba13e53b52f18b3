//! Incremental reading of what arrives on the control connection.
//!
//! The control stream carries four kinds of item: the 37-byte cookie, one-byte states,
//! JSON messages behind a 4-byte big-endian length, and the two big-endian `int32`s that follow
//! SERVER_ERROR. The stream itself does not say which comes next; the reader is told what the
//! session expects. Lengths are checked against a limit before any byte of the body is
//! buffered, so a hostile 4 GiB length prefix costs nothing.

use crate::cookie::{COOKIE_SIZE, Cookie};
use serde_json::Value;

/// What the session expects next on the control connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expect {
    /// The 37-byte cookie (server side, first bytes of a connection).
    Cookie,
    /// One state byte.
    State,
    /// A length-prefixed JSON object of at most `max_len` bytes.
    Json {
        /// The largest body accepted.
        max_len: u32,
    },
    /// The `i_errno` and `errno` after SERVER_ERROR (the second may never come).
    ErrorCodes,
}

/// One complete item read from the control connection.
#[derive(Clone, Debug, PartialEq)]
pub enum Item {
    /// A cookie.
    Cookie(Cookie),
    /// A raw state byte (not yet validated).
    State(u8),
    /// A JSON object.
    Json(Value),
    /// SERVER_ERROR's payload.
    ErrorCodes {
        /// iperf3's error number.
        i_errno: i32,
        /// The server's OS errno, when it sent one.
        errno: Option<i32>,
    },
}

/// Why bytes on the control connection could not be read as what was expected.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum FrameError {
    /// The JSON length prefix is larger than the limit for this message.
    #[error("JSON message of {len} bytes is larger than the limit of {max} bytes")]
    TooLong {
        /// Length announced by the peer.
        len: u32,
        /// The limit.
        max: u32,
    },
    /// A JSON message of length zero.
    #[error("empty JSON message")]
    Empty,
    /// The body is not a JSON object.
    #[error("malformed JSON message: {0}")]
    BadJson(String),
}

/// A buffer of received control bytes, parsed on demand.
#[derive(Debug, Default)]
pub struct FrameReader {
    buf: Vec<u8>,
}

impl FrameReader {
    /// Creates an empty reader.
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends received bytes.
    pub fn push(&mut self, data: &[u8]) {
        self.buf.extend_from_slice(data);
    }

    /// Bytes received but not consumed yet.
    pub fn buffered(&self) -> usize {
        self.buf.len()
    }

    /// Takes the next item if it is complete.
    ///
    /// `Ok(None)` means more bytes are needed. For [`Expect::Json`] the limit is enforced as
    /// soon as the 4-byte length is known.
    pub fn next(&mut self, expect: Expect) -> Result<Option<Item>, FrameError> {
        match expect {
            Expect::Cookie => {
                if self.buf.len() < COOKIE_SIZE {
                    return Ok(None);
                }
                let mut raw = [0u8; COOKIE_SIZE];
                raw.copy_from_slice(&self.buf[..COOKIE_SIZE]);
                self.buf.drain(..COOKIE_SIZE);
                Ok(Some(Item::Cookie(Cookie::from_wire(raw))))
            }
            Expect::State => {
                if self.buf.is_empty() {
                    return Ok(None);
                }
                let b = self.buf.remove(0);
                Ok(Some(Item::State(b)))
            }
            Expect::Json { max_len } => {
                if self.buf.len() < 4 {
                    return Ok(None);
                }
                let len = u32::from_be_bytes([self.buf[0], self.buf[1], self.buf[2], self.buf[3]]);
                if len == 0 {
                    return Err(FrameError::Empty);
                }
                if len > max_len {
                    return Err(FrameError::TooLong { len, max: max_len });
                }
                let total = 4 + len as usize;
                if self.buf.len() < total {
                    return Ok(None);
                }
                let parsed = serde_json::from_slice::<Value>(&self.buf[4..total]);
                self.buf.drain(..total);
                match parsed {
                    Ok(v @ Value::Object(_)) => Ok(Some(Item::Json(v))),
                    Ok(_) => Err(FrameError::BadJson("not a JSON object".into())),
                    Err(e) => Err(FrameError::BadJson(e.to_string())),
                }
            }
            Expect::ErrorCodes => {
                if self.buf.len() < 8 {
                    return Ok(None);
                }
                let i_errno = i32::from_be_bytes([self.buf[0], self.buf[1], self.buf[2], self.buf[3]]);
                let errno = i32::from_be_bytes([self.buf[4], self.buf[5], self.buf[6], self.buf[7]]);
                self.buf.drain(..8);
                Ok(Some(Item::ErrorCodes { i_errno, errno: Some(errno) }))
            }
        }
    }

    /// Called when the peer closed the connection: yields what can still be made of the
    /// remaining bytes. Only SERVER_ERROR's payload may legitimately be short (3.12 servers
    /// send `i_errno` alone after an authentication failure).
    pub fn at_eof(&mut self, expect: Expect) -> Option<Item> {
        if expect == Expect::ErrorCodes && self.buf.len() >= 4 {
            let i_errno = i32::from_be_bytes([self.buf[0], self.buf[1], self.buf[2], self.buf[3]]);
            self.buf.clear();
            return Some(Item::ErrorCodes { i_errno, errno: None });
        }
        None
    }
}

/// Frames a JSON value the way iperf3 does: 4-byte big-endian length, then compact JSON.
pub fn encode_json(value: &Value) -> Vec<u8> {
    let body = value.to_string();
    let mut out = Vec::with_capacity(4 + body.len());
    out.extend_from_slice(&(body.len() as u32).to_be_bytes());
    out.extend_from_slice(body.as_bytes());
    out
}

/// SERVER_ERROR with its two codes, as 3.19+ servers send it.
pub fn encode_server_error(i_errno: i32, errno: i32) -> Vec<u8> {
    let mut out = vec![crate::State::ServerError.to_byte()];
    out.extend_from_slice(&i_errno.to_be_bytes());
    out.extend_from_slice(&errno.to_be_bytes());
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    #[test]
    fn json_arrives_in_pieces() {
        let bytes = encode_json(&json!({"tcp": true, "time": 10}));
        let mut r = FrameReader::new();
        for chunk in bytes.chunks(3) {
            assert_eq!(r.next(Expect::Json { max_len: 100 }).unwrap(), None);
            r.push(chunk);
        }
        let item = r.next(Expect::Json { max_len: 100 }).unwrap();
        assert_eq!(item, Some(Item::Json(json!({"tcp": true, "time": 10}))));
        assert_eq!(r.buffered(), 0);
    }

    #[test]
    fn absurd_length_is_refused_before_the_body() {
        let mut r = FrameReader::new();
        r.push(&[0x80, 0, 0, 0]);
        assert_eq!(r.next(Expect::Json { max_len: 8192 }), Err(FrameError::TooLong { len: 0x8000_0000, max: 8192 }));
    }

    #[test]
    fn non_object_json_is_an_error() {
        let mut r = FrameReader::new();
        r.push(&encode_json(&json!([1, 2])));
        assert!(matches!(r.next(Expect::Json { max_len: 100 }), Err(FrameError::BadJson(_))));
        let mut r = FrameReader::new();
        r.push(&[0, 0, 0, 3, b'{', b'x', b'}']);
        assert!(matches!(r.next(Expect::Json { max_len: 100 }), Err(FrameError::BadJson(_))));
    }

    #[test]
    fn server_error_without_errno_is_tolerated_at_eof() {
        let mut r = FrameReader::new();
        r.push(&142i32.to_be_bytes());
        assert_eq!(r.next(Expect::ErrorCodes).unwrap(), None);
        assert_eq!(r.at_eof(Expect::ErrorCodes), Some(Item::ErrorCodes { i_errno: 142, errno: None }));
    }

    #[test]
    fn state_bytes_coalesced_in_one_segment() {
        let mut r = FrameReader::new();
        r.push(&[1, 2]);
        assert_eq!(r.next(Expect::State).unwrap(), Some(Item::State(1)));
        assert_eq!(r.next(Expect::State).unwrap(), Some(Item::State(2)));
        assert_eq!(r.next(Expect::State).unwrap(), None);
    }

    proptest! {
        #[test]
        fn json_frames_round_trip(s in ".{0,200}", n in any::<i64>()) {
            let v = json!({"title": s, "n": n});
            let mut r = FrameReader::new();
            r.push(&encode_json(&v));
            prop_assert_eq!(r.next(Expect::Json { max_len: 1 << 20 }).unwrap(), Some(Item::Json(v)));
        }

        #[test]
        fn garbage_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
            for e in [Expect::Cookie, Expect::State, Expect::Json { max_len: 64 }, Expect::ErrorCodes] {
                let mut r = FrameReader::new();
                r.push(&bytes);
                while let Ok(Some(_)) = r.next(e) {}
                let _ = r.at_eof(e);
            }
        }
    }
}
