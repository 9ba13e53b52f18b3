//! The server's reply to a TCP test header: its version, so the client can print
//! `(peer 2.1.8)`.
//!
//! A 2.1 server sends it whenever the header has the extension but no `VERSION2` bit (plain
//! tests, `-d`, `-r`) or the client asked with `-X`. Clients that did not ask simply drain it
//! with the rest of the stream, so sending it is harmless and omitting it breaks `-X`.

use super::{WireError, be32, flags::MSG_CLIENT_HDR_ACK, need};

/// Bytes of the ack without the trip-time timestamps.
pub const ACK_LEN: usize = 28;

/// The header ack.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClientAck {
    /// Flags (0).
    pub flags: u32,
    /// Version, as in the client header.
    pub version_u: u32,
    /// Patch and release kind.
    pub version_l: u32,
}

impl ClientAck {
    /// Encodes the 28-byte form.
    pub fn encode(&self) -> [u8; ACK_LEN] {
        let mut b = [0u8; ACK_LEN];
        let words = [MSG_CLIENT_HDR_ACK, ACK_LEN as u32, self.flags, self.version_u, self.version_l, 0, 0];
        for (i, w) in words.iter().enumerate() {
            b[i * 4..i * 4 + 4].copy_from_slice(&w.to_be_bytes());
        }
        b
    }

    /// Decodes an ack; `None` when the type word is not the ack type.
    pub fn decode(b: &[u8]) -> Result<Option<Self>, WireError> {
        need("header ack", b, ACK_LEN)?;
        if be32(b, 0) != MSG_CLIENT_HDR_ACK {
            return Ok(None);
        }
        Ok(Some(ClientAck { flags: be32(b, 8), version_u: be32(b, 12), version_l: be32(b, 16) }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn matches_the_captured_2_1_8_ack() {
        let captured = [0, 0, 0, 2, 0, 0, 0, 0x1c, 0, 0, 0, 0, 0, 2, 0, 1, 0, 8, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0];
        let a = ClientAck::decode(&captured).unwrap().unwrap();
        assert_eq!(a.version_u, 0x0002_0001);
        assert_eq!(a.encode(), captured);
    }

    proptest! {
        #[test]
        fn ack_round_trips(f in any::<u32>(), u in any::<u32>(), l in any::<u32>()) {
            let a = ClientAck { flags: f, version_u: u, version_l: l };
            prop_assert_eq!(ClientAck::decode(&a.encode()).unwrap(), Some(a));
        }
    }
}
