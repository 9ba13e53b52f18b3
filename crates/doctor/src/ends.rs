//! The two ends of a test compared: what neither host's doctor can see alone.
//!
//! Each host's doctor judges its own interface. Some causes live in the pair: an MTU of 9000
//! on one end and 1500 on the other, a 2.5 GbE NIC talking to a 1 GbE one (the slower one is
//! the ceiling, whatever the faster one promises), half duplex at either end, a receiver whose
//! buffer sysctls cannot hold what the path keeps in flight. This module takes both hosts'
//! shared facts ([`SharedHost`]: the client's own, and what a wireperf server sent) and says
//! so, naming both values, so a user does not have to read two doctor reports side by side.

use serde::{Deserialize, Serialize};

use crate::remedy;
use crate::share::SharedHost;

/// What a direction of the test moved, for the receive-buffer check.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct DirectionLoad {
    /// The rate the path carries in this direction, bit/s (a ceiling, or the best measured).
    pub rate_bps: f64,
    /// The round trip under that load, ms.
    pub rtt_ms: f64,
}

/// The path's load per direction; `None` where a direction was not measured.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PathLoad {
    /// Client to server: the server receives.
    pub upload: Option<DirectionLoad>,
    /// Server to client: the client receives.
    pub download: Option<DirectionLoad>,
}

/// One finding about the pair of hosts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EndsFinding {
    /// Stable id (`mtu-mismatch`, `line-rates-differ`, `half-duplex-end`, `receive-buffer-bdp`).
    pub id: String,
    /// `info`, `warn` or `crit`.
    pub severity: String,
    /// One sentence naming both hosts' values.
    pub summary: String,
    /// The client's value.
    pub client: String,
    /// The server's value.
    pub server: String,
    /// What to do, each line prefixed with the host it is run on.
    pub fix: Vec<String>,
}

/// Compares the two ends. `client` is this host's interface toward the server, `server` what
/// the server shared; `load` what the test measured (for the receive buffers).
pub fn compare(client: &SharedHost, server: &SharedHost, load: &PathLoad) -> Vec<EndsFinding> {
    let ends = Ends { client, server };
    let mut out: Vec<EndsFinding> =
        [ends.half_duplex(), ends.mtu_mismatch(), ends.line_rates()].into_iter().flatten().collect();
    out.extend(ends.receive_buffer("upload", server, "server", load.upload));
    out.extend(ends.receive_buffer("download", client, "client", load.download));
    out
}

struct Ends<'a> {
    client: &'a SharedHost,
    server: &'a SharedHost,
}

/// A virtual interface (veth, bridge, tun) reports a nominal speed: no line rate to compare.
fn line_rate(h: &SharedHost) -> Option<u32> {
    h.link.speed_mbps.filter(|_| h.link.bus.as_deref() != Some("virtual"))
}

fn mbps(v: Option<u32>) -> String {
    v.map_or("speed not reported".into(), |s| format!("{s} Mbit/s"))
}

impl Ends<'_> {
    fn finding(
        &self,
        id: &str,
        severity: &str,
        summary: String,
        values: (String, String),
        fix: Vec<String>,
    ) -> EndsFinding {
        EndsFinding { id: id.into(), severity: severity.into(), summary, client: values.0, server: values.1, fix }
    }

    fn half_duplex(&self) -> Option<EndsFinding> {
        let half = |h: &SharedHost| h.link.duplex.as_deref() == Some("half");
        if !half(self.client) && !half(self.server) {
            return None;
        }
        let value = |h: &SharedHost| {
            let d = h.link.duplex.as_deref().unwrap_or("unknown");
            format!("{} {d} duplex ({})", h.iface, h.link.driver.as_deref().unwrap_or("driver unknown"))
        };
        let (c, s) = (value(self.client), value(self.server));
        // The host's own doctor knows why (a generic USB driver, a forced speed): its fix.
        let mut fix = Vec::new();
        for (h, name) in [(self.client, "client"), (self.server, "server")] {
            if !half(h) {
                continue;
            }
            let own = h.findings.iter().find(|f| f.id == "generic-usb-driver" || f.id == "half-duplex");
            match own.and_then(|f| f.fix.first().map(|x| (f, x))) {
                Some((f, x)) => fix.push(format!("on the {name}: {x}   # its doctor's {}", f.id)),
                None => fix.push(format!("on the {name}: sudo ethtool -s {} autoneg on", h.iface)),
            }
        }
        Some(self.finding(
            "half-duplex-end",
            "crit",
            format!(
                "One end runs half duplex (client {c}, server {s}): it cannot send and receive at once, so a bidir test halves and every ACK waits for the wire"
            ),
            (c, s),
            fix,
        ))
    }

    fn mtu_mismatch(&self) -> Option<EndsFinding> {
        let (a, b) = (self.client.link.mtu?, self.server.link.mtu?);
        if a == b {
            return None;
        }
        let (small, big) = (a.min(b), a.max(b));
        let (big_name, big_host) = if a > b { ("client", self.client) } else { ("server", self.server) };
        let (c, s) = (format!("{} MTU {a}", self.client.iface), format!("{} MTU {b}", self.server.iface));
        Some(self.finding(
            "mtu-mismatch",
            "warn",
            format!(
                "The ends' MTUs differ (client {c}, server {s}): TCP settles on the smaller segment, so the {big_name}'s MTU {big} gains nothing, and UDP datagrams or tunnels sized for {big} are fragmented or dropped on the way to the {small} end"
            ),
            (c, s),
            vec![format!(
                "on the {big_name}: sudo ip link set {} mtu {small}   # or raise the other end, and every switch and router between, to {big}",
                big_host.iface
            )],
        ))
    }

    fn line_rates(&self) -> Option<EndsFinding> {
        let (a, b) = (line_rate(self.client)?, line_rate(self.server)?);
        if a == b {
            return None;
        }
        let (slow_name, slow_host, slow) = if a < b { ("client", self.client, a) } else { ("server", self.server, b) };
        let (c, s) =
            (format!("{} {}", self.client.iface, mbps(Some(a))), format!("{} {}", self.server.iface, mbps(Some(b))));
        Some(self.finding(
            "line-rates-differ",
            "info",
            format!(
                "The ends' line rates differ (client {c}, server {s}): no test between them goes faster than the {slow_name}'s {slow} Mbit/s"
            ),
            (c, s),
            vec![format!(
                "on the {slow_name}: ethtool {}   # do its supported link modes go higher? a faster port or NIC there lifts the ceiling",
                slow_host.iface
            )],
        ))
    }

    /// The receiver of `direction` (`host`, named `name`) must hold the path's bandwidth-delay
    /// product; autotuning grows the buffer to `tcp_rmem`'s maximum, of which about half holds
    /// data (the rest is the kernel's per-skb overhead at the default `tcp_adv_win_scale`).
    fn receive_buffer(
        &self,
        direction: &str,
        host: &SharedHost,
        name: &str,
        load: Option<DirectionLoad>,
    ) -> Option<EndsFinding> {
        let load = load?;
        let max = host.tcp_rmem_max?;
        let bdp = load.rate_bps / 8.0 * load.rtt_ms / 1e3;
        let usable = max as f64 / 2.0;
        if !(load.rate_bps > 0.0 && load.rtt_ms > 0.0) || usable >= bdp {
            return None;
        }
        let value = |h: &SharedHost| {
            h.tcp_rmem_max.map_or("tcp_rmem max not read".into(), |m| format!("tcp_rmem max {m} bytes"))
        };
        let fix = buffer_fix(host, name, remedy::in_flight(load.rate_bps, load.rtt_ms));
        Some(self.finding(
            "receive-buffer-bdp",
            "warn",
            format!(
                "The {name}'s receive buffer cannot hold the {direction}'s bandwidth-delay product: {:.0} Mbit/s × {:.1} ms = {:.0} kB in flight, and its tcp_rmem max of {max} bytes holds about {:.0} kB of data",
                load.rate_bps / 1e6,
                load.rtt_ms,
                bdp / 1e3,
                usable / 1e3
            ),
            (value(self.client), value(self.server)),
            vec![fix],
        ))
    }
}

/// The fix line for `host` (named `name`) to hold `need` bytes in flight: the one remedy
/// for a small receive buffer. An older wireperf server sends only the maximum: its min and
/// default are then taken as the kernel's.
fn buffer_fix(host: &SharedHost, name: &str, need: Option<u64>) -> String {
    let current = host
        .tcp_rmem
        .or_else(|| host.tcp_rmem_max.map(|max| [remedy::KERNEL_TCP_RMEM[0], remedy::KERNEL_TCP_RMEM[1], max]));
    match remedy::receive_buffer(current, need).and_then(|r| r.commands.into_iter().next()) {
        Some(command) => format!("on the {name}: {command}"),
        // The maximum is at the remedy's cap already: one window cannot grow further.
        None => format!(
            "on the {name}: its tcp_rmem maximum is as large as wireperf advises; more streams (-P 4) each bring their own window"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::share::{SharedFinding, SharedLink};

    fn host(iface: &str, speed: u32, duplex: &str, mtu: u32, bus: &str) -> SharedHost {
        SharedHost {
            iface: iface.into(),
            link: SharedLink {
                driver: Some("r8152".into()),
                speed_mbps: Some(speed),
                duplex: Some(duplex.into()),
                mtu: Some(mtu),
                bus: Some(bus.into()),
                ..Default::default()
            },
            tcp_rmem_max: Some(6_291_456),
            ..Default::default()
        }
    }

    fn ids(f: &[EndsFinding]) -> Vec<&str> {
        f.iter().map(|f| f.id.as_str()).collect()
    }

    #[test]
    fn matching_ends_have_nothing_to_say() {
        let a = host("eth0", 2500, "full", 1500, "pci");
        let b = host("eth1", 2500, "full", 1500, "usb");
        let load = PathLoad { upload: Some(DirectionLoad { rate_bps: 2.3e9, rtt_ms: 1.0 }), download: None };
        assert!(compare(&a, &b, &load).is_empty());
    }

    #[test]
    fn an_mtu_mismatch_names_both_values_and_the_larger_end() {
        let a = host("eth0", 10000, "full", 9000, "pci");
        let b = host("eth1", 10000, "full", 1500, "pci");
        let f = compare(&a, &b, &PathLoad::default());
        assert_eq!(ids(&f), ["mtu-mismatch"]);
        assert_eq!((f[0].client.as_str(), f[0].server.as_str()), ("eth0 MTU 9000", "eth1 MTU 1500"));
        assert!(f[0].summary.contains("client eth0 MTU 9000, server eth1 MTU 1500"), "{}", f[0].summary);
        assert!(f[0].fix[0].starts_with("on the client: sudo ip link set eth0 mtu 1500"), "{:?}", f[0].fix);
    }

    #[test]
    fn the_slower_line_rate_is_the_ceiling_and_virtual_links_are_not_compared() {
        let a = host("eth0", 2500, "full", 1500, "pci");
        let b = host("eth1", 1000, "full", 1500, "usb");
        let f = compare(&a, &b, &PathLoad::default());
        assert_eq!(ids(&f), ["line-rates-differ"]);
        assert!(f[0].summary.ends_with("the server's 1000 Mbit/s"), "{}", f[0].summary);
        assert!(f[0].fix[0].starts_with("on the server: ethtool eth1"));
        // A veth says 10000 whatever carries it.
        let v = host("veth0", 10000, "full", 1500, "virtual");
        assert!(compare(&v, &b, &PathLoad::default()).is_empty());
    }

    #[test]
    fn half_duplex_on_the_server_takes_the_fix_of_its_own_doctor() {
        let a = host("eth0", 2500, "full", 1500, "pci");
        let mut b = host("eth1", 2500, "half", 1500, "usb");
        b.link.driver = Some("cdc_ncm".into());
        b.findings.push(SharedFinding {
            id: "generic-usb-driver".into(),
            severity: "crit".into(),
            fix: vec!["sudo modprobe r8152".into()],
            ..Default::default()
        });
        let f = compare(&a, &b, &PathLoad::default());
        assert_eq!(ids(&f), ["half-duplex-end"]);
        assert_eq!(f[0].server, "eth1 half duplex (cdc_ncm)");
        assert_eq!(f[0].fix, ["on the server: sudo modprobe r8152   # its doctor's generic-usb-driver"]);
    }

    #[test]
    fn a_receiver_too_small_for_the_bdp_is_named_per_direction() {
        let a = host("eth0", 1000, "full", 1500, "pci");
        let mut b = host("eth1", 1000, "full", 1500, "pci");
        // 1 Gbit/s × 40 ms = 5 MB in flight; 4 MiB max holds about 2.1 MB.
        b.tcp_rmem_max = Some(4 << 20);
        let load = PathLoad {
            upload: Some(DirectionLoad { rate_bps: 1e9, rtt_ms: 40.0 }),
            download: Some(DirectionLoad { rate_bps: 1e9, rtt_ms: 40.0 }),
        };
        let f = compare(&a, &b, &load);
        assert_eq!(ids(&f), ["receive-buffer-bdp", "receive-buffer-bdp"]);
        assert!(f[0].summary.starts_with("The server's receive buffer cannot hold the upload's"), "{}", f[0].summary);
        assert!(f[0].summary.contains("1000 Mbit/s × 40.0 ms = 5000 kB"), "{}", f[0].summary);
        assert_eq!(f[0].server, "tcp_rmem max 4194304 bytes");
        assert_eq!(f[0].fix, ["on the server: sudo sysctl -w net.ipv4.tcp_rmem='4096 131072 33554432'"]);
        // The client's 6 MiB holds 3.1 MB: still short of 5 MB.
        assert!(f[1].summary.starts_with("The client's receive buffer"), "{}", f[1].summary);
        // On a LAN the same buffers are ample.
        let lan = PathLoad { upload: Some(DirectionLoad { rate_bps: 1e9, rtt_ms: 0.5 }), download: None };
        assert!(compare(&a, &b, &lan).is_empty());
    }

    #[test]
    fn a_receivers_fix_keeps_its_own_min_and_default_and_leaves_rmem_max_alone() {
        let a = host("eth0", 1000, "full", 1500, "pci");
        let mut b = host("eth1", 1000, "full", 1500, "pci");
        b.tcp_rmem = Some([8192, 262_144, 4 << 20]);
        b.tcp_rmem_max = Some(4 << 20);
        let load = PathLoad { upload: Some(DirectionLoad { rate_bps: 1e9, rtt_ms: 40.0 }), download: None };
        let f = compare(&a, &b, &load);
        assert_eq!(f[0].fix, ["on the server: sudo sysctl -w net.ipv4.tcp_rmem='8192 262144 33554432'"]);
        // Already at the cap (64 MiB) and still short: no sysctl to offer, more streams instead.
        b.tcp_rmem = Some([4096, 131_072, 64 << 20]);
        b.tcp_rmem_max = Some(64 << 20);
        let far = PathLoad { upload: Some(DirectionLoad { rate_bps: 10e9, rtt_ms: 100.0 }), download: None };
        let f = compare(&a, &b, &far);
        assert!(f[0].fix[0].starts_with("on the server: ") && f[0].fix[0].contains("-P 4"), "{:?}", f[0].fix);
    }
}
