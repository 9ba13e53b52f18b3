//! The UDP server's final report, sent back to the client in answer to its FIN datagram.
//!
//! It follows a 16-byte (zeroed) datagram header: ten words of totals, fifteen of transit
//! (latency) statistics, and three high words that make the counters 64-bit. Fractions are
//! carried as a whole part and a millionths part in two words. The client prints it as the
//! "Server Report" — the only place a UDP sender learns about loss and jitter.

use super::{UDP_HDR_LEN, WireError, be32, flags::*, need};

/// Bytes of the report datagram including its 16-byte datagram header.
pub const SERVER_REPORT_LEN: usize = UDP_HDR_LEN + 112;

/// A number carried as whole units plus millionths, as iperf 2 puts doubles on the wire.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SecUsec {
    /// Whole part.
    pub whole: i32,
    /// Millionths.
    pub micros: i32,
}

impl SecUsec {
    /// Splits a value (truncating below a millionth).
    pub fn from_f64(v: f64) -> Self {
        let whole = v.trunc();
        SecUsec { whole: whole as i32, micros: ((v - whole) * 1e6) as i32 }
    }

    /// Joins the parts.
    pub fn to_f64(self) -> f64 {
        f64::from(self.whole) + f64::from(self.micros) / 1e6
    }
}

/// The report's fields, in wire order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ServerReport {
    /// `HEADER_VERSION1`, plus `SERVER_HEADER_EXTEND` when the transit block is meaningful and
    /// `HEADER_SEQNO64B` when the high words are.
    pub flags: u32,
    /// Bytes received.
    pub total_bytes: u64,
    /// Duration of the receive, seconds.
    pub stop: SecUsec,
    /// Datagrams lost.
    pub errors: i64,
    /// Datagrams out of order.
    pub out_of_order: i64,
    /// Datagrams expected (the highest sequence number seen).
    pub datagrams: i64,
    /// Jitter, seconds.
    pub jitter: SecUsec,
    /// Transit min/max/sum/mean/m2/vd, seconds (m2 scaled by 1e12 on the wire).
    pub transit: [SecUsec; 6],
    /// Transit samples.
    pub cnt_transit: i32,
    /// Packets per second (iperf 2 sends datagrams / seconds here).
    pub cnt_ipg: i32,
    /// Always 1 from 2.1.8.
    pub ipg_sum: i32,
}

impl ServerReport {
    /// Encodes the whole datagram (16 zero bytes, then the report).
    pub fn encode(&self) -> Vec<u8> {
        let mut out = vec![0u8; UDP_HDR_LEN];
        let mut w = |v: u32| out.extend_from_slice(&v.to_be_bytes());
        w(self.flags);
        w((self.total_bytes >> 32) as u32);
        w(self.total_bytes as u32);
        w(self.stop.whole as u32);
        w(self.stop.micros as u32);
        w(self.errors as u32);
        w(self.out_of_order as u32);
        w(self.datagrams as u32);
        w(self.jitter.whole as u32);
        w(self.jitter.micros as u32);
        for t in self.transit {
            w(t.whole as u32);
            w(t.micros as u32);
        }
        w(self.cnt_transit as u32);
        w(self.cnt_ipg as u32);
        w(self.ipg_sum as u32);
        w((self.errors >> 32) as u32);
        w((self.out_of_order >> 32) as u32);
        w((self.datagrams >> 32) as u32);
        out
    }

    /// Decodes a report datagram (including its 16-byte header). Shorter 2.0-era reports
    /// without the extensions are accepted: missing words read as zero.
    pub fn decode(b: &[u8]) -> Result<Self, WireError> {
        need("server report", b, UDP_HDR_LEN + 40)?;
        let r = &b[UDP_HDR_LEN..];
        let word = |i: usize| {
            if r.len() >= i * 4 + 4 { be32(r, i * 4) } else { 0 }
        };
        let flags = word(0);
        let wide = flags & HEADER_SEQNO64B != 0;
        let join = |lo: u32, hi: u32| -> i64 {
            if wide { ((u64::from(hi) << 32) | u64::from(lo)) as i64 } else { i64::from(lo) }
        };
        let su = |i: usize| SecUsec { whole: word(i) as i32, micros: word(i + 1) as i32 };
        let mut transit = [SecUsec::default(); 6];
        for (k, t) in transit.iter_mut().enumerate() {
            *t = su(10 + 2 * k);
        }
        Ok(ServerReport {
            flags,
            total_bytes: (u64::from(word(1)) << 32) | u64::from(word(2)),
            stop: su(3),
            errors: join(word(5), word(25)),
            out_of_order: join(word(6), word(26)),
            datagrams: join(word(7), word(27)),
            jitter: su(8),
            transit,
            cnt_transit: word(22) as i32,
            cnt_ipg: word(23) as i32,
            ipg_sum: word(24) as i32,
        })
    }

    /// Loss percentage as iperf 2 computes it.
    pub fn lost_percent(&self) -> f64 {
        if self.datagrams > 0 { 100.0 * self.errors as f64 / self.datagrams as f64 } else { 0.0 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn decodes_a_captured_2_1_8_report() {
        // 134 datagrams of 200 bytes in 0.201648 s, jitter 2 us (tcpdump on loopback).
        let hex = "000000000000000000000000000000008800000000000000000068b000000000000313b0\
                   00000000000000000000008600000000000000020000000000000002000000000000003000\
                   000000000004dd0000000000000009000010cc0000e93500000000fffffffa000000860000\
                   029800000001000000000000000000000000";
        let hex: String = hex.chars().filter(|c| !c.is_whitespace()).collect();
        let b: Vec<u8> = (0..hex.len() / 2).map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap()).collect();
        assert_eq!(b.len(), SERVER_REPORT_LEN);
        let r = ServerReport::decode(&b).unwrap();
        assert_eq!(r.total_bytes, 26_800);
        assert_eq!(r.datagrams, 134);
        assert_eq!(r.errors, 0);
        assert!((r.stop.to_f64() - 0.201_648).abs() < 1e-9);
        assert!((r.jitter.to_f64() - 0.000_002).abs() < 1e-9);
        assert_eq!(r.encode(), b);
    }

    fn su() -> impl Strategy<Value = SecUsec> {
        (any::<i32>(), any::<i32>()).prop_map(|(whole, micros)| SecUsec { whole, micros })
    }

    proptest! {
        #[test]
        fn report_round_trips(
            bytes in any::<u64>(), e in any::<i64>(), o in any::<i64>(), d in any::<i64>(),
            stop in su(), jit in su(), t in proptest::array::uniform6(su()),
            c in any::<i32>(), ipg in any::<i32>(), sum in any::<i32>(), ext in any::<bool>()
        ) {
            let flags = HEADER_VERSION1 | HEADER_SEQNO64B | if ext { SERVER_HEADER_EXTEND } else { 0 };
            let r = ServerReport { flags, total_bytes: bytes, stop, errors: e, out_of_order: o,
                datagrams: d, jitter: jit, transit: t, cnt_transit: c, cnt_ipg: ipg, ipg_sum: sum };
            prop_assert_eq!(ServerReport::decode(&r.encode()).unwrap(), r);
        }

        #[test]
        fn decode_never_panics(b in proptest::collection::vec(any::<u8>(), 0..160)) {
            let _ = ServerReport::decode(&b);
        }
    }
}
