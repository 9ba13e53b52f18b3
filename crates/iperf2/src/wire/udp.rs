//! The 16 bytes at the start of every UDP datagram: sequence number and send time.
//!
//! The sequence number is a signed 64-bit value split into a low word (first) and a high word
//! (fourth), so a pre-64-bit peer reading only the first word still sees a valid 31-bit number.
//! A negative number marks the client's final datagram ("FIN"); the client repeats it, each
//! time one further from zero, until the server's report arrives.

use super::{WireError, be32, need};

/// Bytes of the datagram header.
pub const UDP_HDR_LEN: usize = 16;

/// Sequence number and send time of one datagram.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UdpHeader {
    /// Sequence number; negative on the final datagram(s).
    pub id: i64,
    /// Send time, seconds (wall clock, truncated to 32 bits).
    pub sec: u32,
    /// Send time, microseconds.
    pub usec: u32,
}

impl UdpHeader {
    /// Writes the header into the first 16 bytes of `buf` (which must be that long).
    pub fn write(&self, buf: &mut [u8]) -> Result<(), WireError> {
        need("UDP datagram header", buf, UDP_HDR_LEN)?;
        let id = self.id as u64;
        buf[0..4].copy_from_slice(&((id & 0xFFFF_FFFF) as u32).to_be_bytes());
        buf[4..8].copy_from_slice(&self.sec.to_be_bytes());
        buf[8..12].copy_from_slice(&self.usec.to_be_bytes());
        buf[12..16].copy_from_slice(&((id >> 32) as u32).to_be_bytes());
        Ok(())
    }

    /// Reads a header; `seq64` says whether the high word is meaningful (the client set
    /// `HEADER_SEQNO64B`); otherwise the low word is a signed 32-bit number.
    pub fn read(buf: &[u8], seq64: bool) -> Result<Self, WireError> {
        need("UDP datagram header", buf, UDP_HDR_LEN)?;
        let lo = be32(buf, 0);
        let id = if seq64 { (u64::from(lo) | (u64::from(be32(buf, 12)) << 32)) as i64 } else { i64::from(lo as i32) };
        Ok(UdpHeader { id, sec: be32(buf, 4), usec: be32(buf, 8) })
    }

    /// The send time in seconds.
    pub fn sent_secs(&self) -> f64 {
        f64::from(self.sec) + f64::from(self.usec) / 1e6
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn captured_fin_is_negative() {
        // The final datagram of a 134-datagram run by iperf 2.1.8.
        let b = [0xff, 0xff, 0xff, 0x7a, 0x6b, 0x0c, 0x7e, 0xd6, 0, 7, 0x81, 0xe4, 0xff, 0xff, 0xff, 0xff];
        assert_eq!(UdpHeader::read(&b, true).unwrap().id, -134);
        assert_eq!(UdpHeader::read(&b, false).unwrap().id, -134);
    }

    proptest! {
        #[test]
        fn udp_header_round_trips(id in any::<i64>(), sec in any::<u32>(), usec in any::<u32>()) {
            let h = UdpHeader { id, sec, usec };
            let mut b = [0u8; 16];
            h.write(&mut b).unwrap();
            prop_assert_eq!(UdpHeader::read(&b, true).unwrap(), h);
        }

        #[test]
        fn read_never_panics(b in proptest::collection::vec(any::<u8>(), 0..20), s in any::<bool>()) {
            let _ = UdpHeader::read(&b, s);
        }
    }
}
