//! Which interface routes to an address: longest-prefix match over `/proc/net/route` and
//! `/proc/net/ipv6_route` (all routing tables as the kernel prints them; policy routing is
//! ignored, which is enough to find "the NIC a test to HOST will use").

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use crate::root::Root;

/// The interface the main routing table uses for `addr` on the live system.
pub fn interface_for(addr: IpAddr) -> Option<String> {
    interface_for_in(&Root::live(), addr)
}

/// Like [`interface_for`] with the route tables read under `root`.
pub fn interface_for_in(root: &Root, addr: IpAddr) -> Option<String> {
    if addr.is_loopback() {
        return Some("lo".into());
    }
    match addr {
        IpAddr::V4(a) => parse_route_v4(&root.opt("proc/net/route")?, a),
        IpAddr::V6(a) => parse_route_v6(&root.opt("proc/net/ipv6_route")?, a),
    }
}

/// Longest-prefix match in `/proc/net/route` text; ties go to the lowest metric.
pub fn parse_route_v4(text: &str, addr: Ipv4Addr) -> Option<String> {
    let want = u32::from(addr);
    let mut best: Option<(u32, u32, String)> = None; // (prefix len, metric, iface)
    for l in text.lines().skip(1) {
        let f: Vec<&str> = l.split_whitespace().collect();
        if f.len() < 8 {
            continue;
        }
        let hex = |s: &str| u32::from_str_radix(s, 16).ok().map(|v| u32::from_be_bytes(v.to_ne_bytes()));
        let (Some(dest), Some(mask), Ok(flags), Ok(metric)) =
            (hex(f[1]), hex(f[7]), u32::from_str_radix(f[3], 16), f[6].parse::<u32>())
        else {
            continue;
        };
        // RTF_UP = 1; RTF_REJECT = 0x200.
        if flags & 1 == 0 || flags & 0x200 != 0 || want & mask != dest & mask {
            continue;
        }
        let len = mask.count_ones();
        let better = match &best {
            None => true,
            Some((bl, bm, _)) => len > *bl || (len == *bl && metric < *bm),
        };
        if better {
            best = Some((len, metric, f[0].to_string()));
        }
    }
    best.map(|b| b.2)
}

/// Longest-prefix match in `/proc/net/ipv6_route` text.
pub fn parse_route_v6(text: &str, addr: Ipv6Addr) -> Option<String> {
    let want = u128::from(addr);
    let mut best: Option<(u32, u32, String)> = None;
    for l in text.lines() {
        let f: Vec<&str> = l.split_whitespace().collect();
        if f.len() < 10 {
            continue;
        }
        let (Ok(dest), Ok(plen), Ok(metric), Ok(flags)) = (
            u128::from_str_radix(f[0], 16),
            u32::from_str_radix(f[1], 16),
            u32::from_str_radix(f[5], 16),
            u32::from_str_radix(f[8], 16),
        ) else {
            continue;
        };
        if plen > 128 || flags & 1 == 0 || flags & 0x200 != 0 {
            continue;
        }
        let mask = if plen == 0 { 0 } else { u128::MAX << (128 - plen) };
        if want & mask != dest & mask {
            continue;
        }
        let better = match &best {
            None => true,
            Some((bl, bm, _)) => plen > *bl || (plen == *bl && metric < *bm),
        };
        if better {
            best = Some((plen, metric, f[9].to_string()));
        }
    }
    best.map(|b| b.2)
}

#[cfg(test)]
mod tests {
    use super::*;

    const V4: &str = "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT
eth0\t00000000\t010200C0\t0003\t0\t0\t0\t00000000\t0\t0\t0
eth0\t000200C0\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0
enx1\t0002A8C0\t00000000\t0001\t0\t0\t100\t00FFFFFF\t0\t0\t0
";

    #[test]
    fn v4_longest_prefix() {
        assert_eq!(parse_route_v4(V4, "192.168.2.7".parse().unwrap()).as_deref(), Some("enx1"));
        assert_eq!(parse_route_v4(V4, "192.0.2.9".parse().unwrap()).as_deref(), Some("eth0"));
        assert_eq!(parse_route_v4(V4, "8.8.8.8".parse().unwrap()).as_deref(), Some("eth0"));
        assert_eq!(parse_route_v4("junk\nx y", "8.8.8.8".parse().unwrap()), None);
    }

    #[test]
    fn v6_longest_prefix() {
        let t = "fd000000000000000000000000000000 08 00000000000000000000000000000000 00 00000000000000000000000000000000 00000100 00000001 00000000 00000001  enx1
00000000000000000000000000000000 00 00000000000000000000000000000000 00 fe800000000000000000000000000001 00000400 00000001 00000000 00000003  eth0
00000000000000000000000000000000 00 00000000000000000000000000000000 00 00000000000000000000000000000000 ffffffff 00000001 00000000 00200200  lo
";
        assert_eq!(parse_route_v6(t, "fd00::5".parse().unwrap()).as_deref(), Some("enx1"));
        assert_eq!(parse_route_v6(t, "2001:db8::1".parse().unwrap()).as_deref(), Some("eth0"));
        assert_eq!(interface_for("::1".parse().unwrap()).as_deref(), Some("lo"));
    }
}
