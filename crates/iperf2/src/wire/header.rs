//! The client's test header: the first bytes of a TCP stream, or bytes 16.. of every UDP
//! datagram (after the sequence number and timestamp).
//!
//! It has grown by appending: a 24-byte v1 block (1.7), a 36-byte extension (2.0.13: version,
//! rate, upper flags) and optional blocks after that. A server learns how much to read from the
//! first word: since 2.0.14 the length is carried in it (`HEADER_LEN_BIT`), before that it is
//! implied by which version bits are set.

use super::{WireError, be16, be32, flags::*, need};

/// Bytes of the v1 block (flags, threads, port, buffer length, window, amount).
pub const V1_LEN: usize = 24;
/// Bytes of the 2.0.13 extension block.
pub const EXT_LEN: usize = 36;
/// A TCP header as 2.1.x clients send it: v1 + extension.
pub const TCP_EXT_HEADER_LEN: usize = V1_LEN + EXT_LEN;
/// A UDP first datagram's header: sequence/timestamp + v1 + extension.
pub const UDP_EXT_HEADER_LEN: usize = super::UDP_HDR_LEN + V1_LEN + EXT_LEN;

/// How much the client will send: `-t` or `-n`.
///
/// On the wire a negative word is a time in units of 10 ms and a positive one a byte count
/// (masked to 31 bits, so `-n` beyond 2 GiB cannot be expressed to the server).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Amount {
    /// Test time in hundredths of a second.
    Centis(u32),
    /// Byte count.
    Bytes(u32),
}

impl Amount {
    fn encode(self) -> u32 {
        match self {
            // Negating in two's complement; 0 stays 0, which the peer reads as 0 bytes.
            Amount::Centis(c) => (c & 0x7FFF_FFFF).wrapping_neg(),
            Amount::Bytes(b) => b & 0x7FFF_FFFF,
        }
    }

    fn decode(w: u32) -> Self {
        if w & 0x8000_0000 != 0 { Amount::Centis(w.wrapping_neg()) } else { Amount::Bytes(w) }
    }

    /// The time in seconds, when this is a time.
    pub fn seconds(self) -> Option<f64> {
        match self {
            Amount::Centis(c) => Some(f64::from(c) / 100.0),
            Amount::Bytes(_) => None,
        }
    }
}

/// The 2.0.13+ extension block.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct HeaderExt {
    /// Feature flags (`UPPER_*`).
    pub upper_flags: u16,
    /// Reserved low flags.
    pub lower_flags: u16,
    /// Sender's version, major in the high 16 bits, minor in the low.
    pub version_u: u32,
    /// Patch in the high 16 bits, release kind in the low (3 = final).
    pub version_l: u32,
    /// IP TOS byte.
    pub tos: u16,
    /// `-b` in bits per second (UDP: the paced rate; TCP: 0 unless set).
    pub rate: u64,
    /// `TCP_NOTSENT_LOWAT` for reverse tests.
    pub write_prefetch: u32,
}

/// A decoded client test header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClientHeader {
    /// First-word flags, without the length bits (those are derived when encoding).
    pub flags: u32,
    /// `-P` of the client.
    pub num_threads: i32,
    /// The port the server should connect back to for `-d`/`-r` (`-L`, else `-p`).
    pub port: u16,
    /// `-l` when given, else 0.
    pub buf_len: i32,
    /// `-w` (unused by 2.1 servers; kept for round trips).
    pub win_band: i32,
    /// `-t` or `-n`.
    pub amount: Amount,
    /// The extension block, when `HEADER_EXTEND` is set.
    pub ext: Option<HeaderExt>,
}

/// What the first word says about the header that follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HeaderLen {
    /// Not a test header: count the bytes as payload (pre-2.0 clients send none).
    NoHeader,
    /// A header of this many bytes (including the first word).
    Bytes(usize),
}

impl ClientHeader {
    /// The version words wireperf announces: it speaks the 2.1.8 protocol.
    pub const VERSION_U: u32 = 0x0002_0001;
    /// Patch 8, release kind 3 (final).
    pub const VERSION_L: u32 = 0x0008_0003;

    /// True when the header asks for `-d` or `-r` (the server connects back).
    pub fn is_v1_bidir(&self) -> bool {
        self.flags & HEADER_VERSION1 != 0 && self.flags & HEADER_VERSION2 == 0
    }

    /// The extension's upper flags, or 0.
    pub fn upper(&self) -> u16 {
        if self.flags & HEADER_VERSION2 == 0 {
            return 0;
        }
        self.ext.as_ref().map_or(0, |e| e.upper_flags)
    }

    /// Length of the encoded header (v1, plus the extension when present).
    pub fn encoded_len(&self) -> usize {
        if self.ext.is_some() { TCP_EXT_HEADER_LEN } else { V1_LEN }
    }

    /// Encodes the header; the length bits are added when an extension is present.
    /// `extra` is the length of whatever precedes the header in the same message (16 for
    /// UDP), which iperf 2 includes in the announced length.
    pub fn encode(&self, extra: usize) -> Vec<u8> {
        let mut out = Vec::with_capacity(TCP_EXT_HEADER_LEN);
        let mut flags = self.flags & !(HEADER_LEN_BIT | HEADER_LEN_MASK);
        if self.ext.is_some() {
            let len = (self.encoded_len() + extra) as u32;
            flags |= HEADER_LEN_BIT | ((len << 1) & HEADER_LEN_MASK);
        }
        for w in [
            flags,
            self.num_threads as u32,
            u32::from(self.port),
            self.buf_len as u32,
            self.win_band as u32,
            self.amount.encode(),
        ] {
            out.extend_from_slice(&w.to_be_bytes());
        }
        if let Some(e) = &self.ext {
            out.extend_from_slice(&0u32.to_be_bytes()); // type
            out.extend_from_slice(&0u32.to_be_bytes()); // length
            out.extend_from_slice(&e.upper_flags.to_be_bytes());
            out.extend_from_slice(&e.lower_flags.to_be_bytes());
            out.extend_from_slice(&e.version_u.to_be_bytes());
            out.extend_from_slice(&e.version_l.to_be_bytes());
            out.extend_from_slice(&0u16.to_be_bytes());
            out.extend_from_slice(&e.tos.to_be_bytes());
            out.extend_from_slice(&((e.rate & 0xFFFF_FFFF) as u32).to_be_bytes());
            // The upper 32 bits of the rate are stored shifted left by 8 (iperf 2 keeps the
            // low byte for rate units).
            out.extend_from_slice(&(((e.rate >> 32) as u32) << 8).to_be_bytes());
            out.extend_from_slice(&e.write_prefetch.to_be_bytes());
        }
        out
    }

    /// How long the TCP header is, judging by its first word (the rules of
    /// `Settings_ClientTestHdrLen` in iperf 2).
    pub fn tcp_len(first_word: u32) -> Result<HeaderLen, WireError> {
        let f = first_word;
        if f & (HEADER_VERSION1 | HEADER_VERSION2 | HEADER_EXTEND) == 0 {
            return Ok(HeaderLen::NoHeader);
        }
        if f & HEADER_LEN_BIT != 0 {
            let len = ((f & HEADER_LEN_MASK) >> 1) as usize;
            if len > MAX_HEADER_LEN {
                return Err(WireError::HeaderTooLong(len));
            }
            return Ok(HeaderLen::Bytes(len.max(4)));
        }
        let mut len = 0;
        if f & (HEADER_VERSION1 | HEADER_EXTEND) != 0 {
            len += V1_LEN;
        }
        if f & (HEADER_VERSION2 | HEADER_EXTEND) != 0 {
            len += EXT_LEN;
        }
        Ok(HeaderLen::Bytes(len))
    }

    /// Decodes a header from `b` (starting at the flags word). The extension is read when
    /// `HEADER_EXTEND` is set and the bytes are there; longer headers' later blocks are
    /// ignored.
    pub fn decode(b: &[u8]) -> Result<Self, WireError> {
        need("client header", b, V1_LEN)?;
        let flags = be32(b, 0) & !(HEADER_LEN_BIT | HEADER_LEN_MASK);
        let ext = if flags & (HEADER_EXTEND | HEADER_VERSION2) != 0 && b.len() >= TCP_EXT_HEADER_LEN {
            let x = &b[V1_LEN..];
            let rate = u64::from(be32(x, 24)) | (u64::from(be32(x, 28) >> 8) << 32);
            Some(HeaderExt {
                upper_flags: be16(x, 8),
                lower_flags: be16(x, 10),
                version_u: be32(x, 12),
                version_l: be32(x, 16),
                tos: be16(x, 22),
                rate,
                write_prefetch: be32(x, 32),
            })
        } else {
            None
        };
        Ok(ClientHeader {
            flags,
            num_threads: be32(b, 4) as i32,
            port: (be32(b, 8) & 0xFFFF) as u16,
            buf_len: be32(b, 12) as i32,
            win_band: be32(b, 16) as i32,
            amount: Amount::decode(be32(b, 20)),
            ext,
        })
    }

    /// A readable version string from the extension, e.g. `2.1.8`.
    pub fn peer_version(&self) -> Option<String> {
        let e = self.ext.as_ref()?;
        if e.version_u == 0 {
            return None;
        }
        Some(format!("{}.{}.{}", e.version_u >> 16, e.version_u & 0xFFFF, e.version_l >> 16))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The 60 bytes Debian's iperf 2.1.8 sent for `-c 127.0.0.1 -p 15006 -n 1000`
    /// (captured with tcpdump on loopback).
    const CAPTURED_N1000: [u8; 60] = [
        0x40, 0x01, 0x00, 0x78, 0, 0, 0, 1, 0, 0, 0x3a, 0x9e, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x03, 0xe8, 0, 0, 0, 0, 0,
        0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 1, 0, 8, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    ];

    #[test]
    fn decodes_a_captured_2_1_8_header() {
        let h = ClientHeader::decode(&CAPTURED_N1000).unwrap();
        assert_eq!(h.flags, HEADER_EXTEND);
        assert_eq!(h.port, 15006);
        assert_eq!(h.amount, Amount::Bytes(1000));
        assert_eq!(h.peer_version().as_deref(), Some("2.1.8"));
        assert_eq!(ClientHeader::tcp_len(be32(&CAPTURED_N1000, 0)), Ok(HeaderLen::Bytes(60)));
        assert_eq!(h.encode(0), CAPTURED_N1000.to_vec());
    }

    #[test]
    fn time_is_negative_centiseconds() {
        assert_eq!(Amount::Centis(30).encode(), 0xFFFF_FFE2);
        assert_eq!(Amount::decode(0xFFFF_FFE2), Amount::Centis(30));
    }

    #[test]
    fn plain_payload_is_not_a_header() {
        assert_eq!(ClientHeader::tcp_len(u32::from_be_bytes(*b"0123")), Ok(HeaderLen::NoHeader));
    }

    #[test]
    fn short_input_is_an_error_not_a_panic() {
        assert!(ClientHeader::decode(&[0x40, 0, 0]).is_err());
    }

    fn arb_header() -> impl Strategy<Value = ClientHeader> {
        let ext = proptest::option::of(
            (any::<u16>(), any::<u16>(), any::<u32>(), any::<u32>(), any::<u16>(), 0u64..(1 << 56), any::<u32>())
                .prop_map(|(u, l, vu, vl, tos, rate, wp)| HeaderExt {
                    upper_flags: u,
                    lower_flags: l,
                    version_u: vu,
                    version_l: vl,
                    tos,
                    rate,
                    write_prefetch: wp,
                }),
        );
        let amount =
            prop_oneof![(1u32..0x7FFF_FFFF).prop_map(Amount::Centis), (0u32..0x7FFF_FFFF).prop_map(Amount::Bytes)];
        (any::<u32>(), any::<i32>(), any::<u16>(), any::<i32>(), any::<i32>(), amount, ext).prop_map(
            |(f, n, p, bl, w, a, ext)| {
                let mut flags = f & !(HEADER_LEN_BIT | HEADER_LEN_MASK);
                // The decoder reads the extension exactly when one of these bits is set.
                if ext.is_some() {
                    flags |= HEADER_EXTEND;
                } else {
                    flags &= !(HEADER_EXTEND | HEADER_VERSION2);
                }
                ClientHeader { flags, num_threads: n, port: p, buf_len: bl, win_band: w, amount: a, ext }
            },
        )
    }

    proptest! {
        #[test]
        fn header_round_trips(h in arb_header(), extra in 0usize..32) {
            let bytes = h.encode(extra);
            prop_assert_eq!(ClientHeader::decode(&bytes).unwrap(), h.clone());
            if h.ext.is_some() {
                let len = ClientHeader::tcp_len(be32(&bytes, 0)).unwrap();
                prop_assert_eq!(len, HeaderLen::Bytes(bytes.len() + extra));
            }
        }

        #[test]
        fn decode_never_panics(b in proptest::collection::vec(any::<u8>(), 0..128)) {
            let _ = ClientHeader::decode(&b);
            if b.len() >= 4 { let _ = ClientHeader::tcp_len(be32(&b, 0)); }
        }
    }
}
