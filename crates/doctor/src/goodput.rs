//! Theoretical goodput of a negotiated link: what iperf3 can show at best, so a measurement can
//! be judged ("measured < 90 % of this" is worth a look).
//!
//! Ethernet puts `MTU + 38` bytes on the wire per full frame: 14 bytes of MAC header, 4 of
//! FCS, 8 of preamble and SFD, 12 of inter-frame gap. The payload is `MTU − 52` for TCP/IPv4
//! with timestamps (Linux's default, MSS 1448 at MTU 1500) and `MTU − 28` for UDP/IPv4.
//!
//! A USB adapter is further capped by its bus. USB 2 high-speed carries at most 426 Mbit/s of
//! bulk data (13 × 512 B per 125 µs microframe), shared by both directions. USB 3 Gen1 delivers
//! about 3.5 Gbit/s at best (8b/10b leaves 4 Gbit/s, protocol overhead takes the rest; 3.3–3.5
//! was measured with an RTL8157). Gen2 leaves 9.7 Gbit/s after 128b/132b coding.

use serde::Serialize;

use crate::link_parts::Duplex;

/// Bytes of Ethernet overhead per frame on the wire (header, FCS, preamble, IFG).
pub const ETH_WIRE_OVERHEAD: u64 = 38;
/// IPv4 (20) + TCP (20) + timestamps option (12).
pub const TCP4_TS_HEADERS: u64 = 52;
/// IPv4 (20) + UDP (8).
pub const UDP4_HEADERS: u64 = 28;

/// The USB link under an adapter, for the bus ceiling.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UsbLink {
    /// Negotiated USB speed in Mbit/s (480, 5000, 10000, 20000).
    pub speed_mbps: u32,
}

impl UsbLink {
    /// Best-case payload rate of the bus per direction, bit/s.
    pub fn ceiling_bps(self) -> u64 {
        match self.speed_mbps {
            0..=12 => 12_000_000 * 8 / 10,
            13..=480 => 426_000_000,
            481..=5000 => 3_500_000_000,
            5001..=10000 => 9_700_000_000,
            _ => 19_400_000_000,
        }
    }
}

/// What limits the result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Limit {
    /// The Ethernet line rate.
    Ethernet,
    /// The USB bus under the adapter.
    UsbBus,
}

/// Theoretical best goodput, bit/s, one direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Goodput {
    /// TCP/IPv4 with timestamps.
    pub tcp_bps: u64,
    /// UDP/IPv4.
    pub udp_bps: u64,
    /// The narrower of Ethernet and the USB bus.
    pub limited_by: Limit,
    /// True when both directions share this rate (half duplex, or USB 2 which is half duplex).
    pub shared_between_directions: bool,
}

/// Theoretical goodput of a link at `speed_mbps` and `mtu`, capped by the USB bus when given.
///
/// `duplex` does not change the one-direction number; it only marks whether a bidirectional
/// test must share it. An MTU too small to carry a TCP segment gives 0.
pub fn theoretical_goodput(speed_mbps: u32, duplex: Option<Duplex>, mtu: u32, usb: Option<UsbLink>) -> Goodput {
    let mtu = u64::from(mtu);
    let wire = mtu + ETH_WIRE_OVERHEAD;
    let line = u64::from(speed_mbps) * 1_000_000;
    let tcp_eth = line * mtu.saturating_sub(TCP4_TS_HEADERS) / wire;
    let udp_eth = line * mtu.saturating_sub(UDP4_HEADERS) / wire;
    let (mut tcp, mut udp, mut limited_by) = (tcp_eth, udp_eth, Limit::Ethernet);
    if let Some(u) = usb {
        // The bus carries Ethernet frames (plus small NTB/aggregation headers, ignored here):
        // scale the frame payload efficiency onto the bus ceiling.
        let cap = u.ceiling_bps();
        if cap < line {
            limited_by = Limit::UsbBus;
            tcp = cap * mtu.saturating_sub(TCP4_TS_HEADERS) / (mtu + 18);
            udp = cap * mtu.saturating_sub(UDP4_HEADERS) / (mtu + 18);
        }
    }
    let shared = duplex == Some(Duplex::Half) || usb.is_some_and(|u| u.speed_mbps <= 480);
    Goodput { tcp_bps: tcp, udp_bps: udp, limited_by, shared_between_directions: shared }
}

/// Goodput (TCP, UDP) in bit/s of a flow through a shaper of `rate_bps` at `mtu`.
///
/// A shaper (tbf, htb, cake, …) counts whole frames with their 14-byte Ethernet header but
/// not preamble, FCS or gap, so its payload share is `(MTU − headers) / (MTU + 14)`. This is
/// the ceiling a shaped test can reach: both the suite's grade and the bottleneck rules judge
/// a rate against it (not the shaper's raw rate, which no payload ever reaches).
pub fn shaped_goodput(rate_bps: u64, mtu: u32) -> (u64, u64) {
    let mtu = u64::from(mtu.max(576));
    let frame = mtu + 14;
    (rate_bps * (mtu - TCP4_TS_HEADERS) / frame, rate_bps * (mtu - UDP4_HEADERS) / frame)
}

/// Formats bit/s the iperf3 way (decimal units): `2.35 Gbits/sec`.
pub fn format_bps(bps: u64) -> String {
    let b = bps as f64;
    if b >= 1e9 {
        format!("{:.2} Gbits/sec", b / 1e9)
    } else if b >= 1e6 {
        format!("{:.0} Mbits/sec", b / 1e6)
    } else {
        format!("{:.0} Kbits/sec", b / 1e3)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_reference_table() {
        // link-facts §4.1: 2.5G at 1500 → TCP 2.354, UDP 2.393 Gbit/s; 1G at 9000 → 0.990/0.993.
        let g = theoretical_goodput(2500, Some(Duplex::Full), 1500, None);
        assert_eq!(g.tcp_bps / 1_000_000, 2353);
        assert_eq!(g.udp_bps / 1_000_000, 2392);
        let g = theoretical_goodput(1000, Some(Duplex::Full), 9000, None);
        assert_eq!(g.tcp_bps / 1_000_000, 990);
        assert_eq!(g.udp_bps / 1_000_000, 992);
        assert_eq!(g.limited_by, Limit::Ethernet);
    }

    #[test]
    fn usb_bus_caps_fast_links() {
        let g = theoretical_goodput(2500, None, 1500, Some(UsbLink { speed_mbps: 480 }));
        assert_eq!(g.limited_by, Limit::UsbBus);
        assert!(g.tcp_bps < 426_000_000 && g.tcp_bps > 400_000_000);
        assert!(g.shared_between_directions);
        let g = theoretical_goodput(5000, None, 1500, Some(UsbLink { speed_mbps: 5000 }));
        assert_eq!(g.limited_by, Limit::UsbBus);
        assert!(g.tcp_bps < 3_500_000_000);
        let g = theoretical_goodput(2500, None, 1500, Some(UsbLink { speed_mbps: 5000 }));
        assert_eq!(g.limited_by, Limit::Ethernet);
    }

    #[test]
    fn shaped_goodput_counts_the_frame_header() {
        assert_eq!(shaped_goodput(600_000_000, 1500), (600_000_000 * 1448 / 1514, 600_000_000 * 1472 / 1514));
        // A jumbo MTU leaves more of the rate for payload; an absurd MTU is clamped, not wrapped.
        assert!(shaped_goodput(600_000_000, 9000).0 > shaped_goodput(600_000_000, 1500).0);
        assert!(shaped_goodput(600_000_000, 10).0 > 0);
    }

    #[test]
    fn tiny_mtu_does_not_underflow() {
        let g = theoretical_goodput(1000, None, 40, None);
        assert_eq!(g.tcp_bps, 0);
        assert!(g.udp_bps > 0);
    }

    #[test]
    fn formats_like_iperf3() {
        assert_eq!(format_bps(2_354_000_000), "2.35 Gbits/sec");
        assert_eq!(format_bps(941_000_000), "941 Mbits/sec");
    }
}
