//! UDP datagram header and the UDP "connect" handshake.
//!
//! Every datagram starts with the sender's CLOCK_MONOTONIC time (seconds, microseconds) and a
//! sequence number starting at 1, all big-endian; the number is 32 bits unless both sides agreed
//! on `udp_counters_64bit`. Each UDP stream is set up by one 4-byte datagram from the client,
//! answered by 4 bytes from the server.

/// What the client sends to set up a UDP stream (ASCII "9876").
pub const CONNECT_MSG: [u8; 4] = *b"9876";
/// What the server answers (ASCII "6789").
pub const CONNECT_REPLY: [u8; 4] = *b"6789";
/// The answer of servers older than 3.12 (987654321 in little-endian order).
pub const LEGACY_CONNECT_REPLY: [u8; 4] = [0xb1, 0x68, 0xde, 0x3a];

/// A decoded datagram header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UdpHeader {
    /// Sender timestamp, seconds.
    pub sec: u32,
    /// Sender timestamp, microseconds (0..1_000_000).
    pub usec: u32,
    /// Sequence number (first datagram = 1).
    pub seq: u64,
}

impl UdpHeader {
    /// Header length for the counter width.
    pub fn len(counters_64bit: bool) -> usize {
        if counters_64bit { 16 } else { 12 }
    }

    /// Writes the header at the start of `buf`; returns false if `buf` is too short.
    pub fn write(&self, buf: &mut [u8], counters_64bit: bool) -> bool {
        if buf.len() < Self::len(counters_64bit) {
            return false;
        }
        buf[0..4].copy_from_slice(&self.sec.to_be_bytes());
        buf[4..8].copy_from_slice(&self.usec.to_be_bytes());
        if counters_64bit {
            buf[8..16].copy_from_slice(&self.seq.to_be_bytes());
        } else {
            buf[8..12].copy_from_slice(&(self.seq as u32).to_be_bytes());
        }
        true
    }

    /// Reads a header; `None` if the datagram is shorter than a header.
    pub fn read(buf: &[u8], counters_64bit: bool) -> Option<Self> {
        if buf.len() < Self::len(counters_64bit) {
            return None;
        }
        let u32_at = |i: usize| u32::from_be_bytes([buf[i], buf[i + 1], buf[i + 2], buf[i + 3]]);
        let seq = if counters_64bit {
            let mut b = [0u8; 8];
            b.copy_from_slice(&buf[8..16]);
            u64::from_be_bytes(b)
        } else {
            u64::from(u32_at(8))
        };
        Some(Self { sec: u32_at(0), usec: u32_at(4), seq })
    }

    /// The timestamp as seconds.
    pub fn time_secs(&self) -> f64 {
        f64::from(self.sec) + f64::from(self.usec) / 1e6
    }
}

/// Whether a client should accept these 4 bytes as the server's handshake reply.
pub fn is_connect_reply(b: &[u8]) -> bool {
    b.len() >= 4 && (b[..4] == CONNECT_REPLY || b[..4] == LEGACY_CONNECT_REPLY)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn matches_a_captured_64bit_datagram() {
        let wire = [0, 0, 0x08, 0x8b, 0, 0x02, 0xb2, 0x84, 0, 0, 0, 0, 0, 0, 0, 1];
        let h = UdpHeader::read(&wire, true).unwrap();
        assert_eq!(h, UdpHeader { sec: 0x88b, usec: 0x2b284, seq: 1 });
    }

    #[test]
    fn short_datagrams_have_no_header() {
        assert_eq!(UdpHeader::read(&[0; 11], false), None);
        assert!(!UdpHeader { sec: 0, usec: 0, seq: 0 }.write(&mut [0; 15], true));
    }

    proptest! {
        #[test]
        fn round_trips(sec in any::<u32>(), usec in 0u32..1_000_000, seq in any::<u64>(), wide in any::<bool>()) {
            let seq = if wide { seq } else { seq & 0xffff_ffff };
            let h = UdpHeader { sec, usec, seq };
            let mut buf = [0u8; 64];
            prop_assert!(h.write(&mut buf, wide));
            prop_assert_eq!(UdpHeader::read(&buf, wide), Some(h));
        }
    }
}
