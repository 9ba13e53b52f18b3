//! The static part of a watch: the interface's line rate, USB cap and shaper, and the buffer
//! sysctls, read once when the watch starts (the doctor's own readers, without the kernel log).

use std::collections::BTreeMap;

use crate::host_sample::HostFacts;
use wireperf_doctor::goodput::Limit;
use wireperf_doctor::read::KernelLogSource;
use wireperf_doctor::root::Root;
use wireperf_doctor::snapshot::{BusKind, LinkSnapshot};

/// The sysctls a fix for a window or socket-buffer limit would change.
pub const SYSCTLS: &[&str] = &[
    "net/ipv4/tcp_rmem",
    "net/ipv4/tcp_wmem",
    "net/core/rmem_max",
    "net/core/wmem_max",
    "net/core/netdev_max_backlog",
];

/// Reads the facts of `iface` on the live host (the doctor's readers for the link; `tc` is
/// asked for the shaper when the root qdisc may be one).
pub fn read_live(iface: Option<&str>) -> HostFacts {
    let link = iface.and_then(|iface| {
        let opts = wireperf_doctor::InspectOptions {
            interfaces: vec![iface.to_string()],
            kernel_log: KernelLogSource::Off,
            ..Default::default()
        };
        wireperf_doctor::inspect(&opts).ok()?.interfaces.into_iter().next().map(|i| i.link)
    });
    from_link(iface, link.as_ref())
}

/// The facts of `iface` on the live host from its `link` as the doctor already read it (a
/// server's watch shares the inspection it sends the client: `share::inspect_for_peer_and_link`).
pub fn from_link(iface: Option<&str>, link: Option<&LinkSnapshot>) -> HostFacts {
    let mut f = HostFacts { sysctls: read_sysctls(&Root::live()), ..Default::default() };
    let Some(iface) = iface else { return f };
    if let Some(link) = link {
        link_facts(link, &mut f);
    }
    if root_may_shape(link)
        && let Ok(Some(r)) = wireperf_doctor::root_rate_limit(iface)
    {
        f.shaper = Some((r.kind, r.rate_bps));
    }
    f
}

/// Whether `tc` must be asked for a shaper: the inspection read the root qdisc's kind
/// already, and only a tbf or htb root carries a rate `root_rate_limit` reads, so any other
/// kind needs no second `tc` child. An unknown kind asks.
fn root_may_shape(link: Option<&LinkSnapshot>) -> bool {
    link.and_then(|l| l.qdisc.as_ref()).is_none_or(|q| q.kind == "tbf" || q.kind == "htb")
}

/// The line rate, MTU and goodput ceiling of `link`. A virtual interface (veth, bridge, tun)
/// reports a nominal speed (a veth says 10000 Mbit/s) that limits nothing: a veth pair on a
/// fast host carries more than that, so it is no ceiling and the link rule must not cite it.
fn link_facts(link: &LinkSnapshot, f: &mut HostFacts) {
    f.link_mbps = link.speed_mbps;
    f.mtu = link.mtu;
    if link.bus == Some(BusKind::Virtual) {
        return;
    }
    if let Some(g) = link.goodput {
        f.goodput_tcp_bps = Some(g.tcp_bps);
        f.goodput_udp_bps = Some(g.udp_bps);
        f.usb_limited = g.limited_by == Limit::UsbBus;
    }
}

/// The [`SYSCTLS`] under `root`, keyed with dots (`net.ipv4.tcp_rmem`).
pub fn read_sysctls(root: &Root) -> BTreeMap<String, String> {
    SYSCTLS
        .iter()
        .filter_map(|k| {
            let v = root.opt(format!("proc/sys/{k}"))?;
            Some((k.replace('/', "."), v.split_whitespace().collect::<Vec<_>>().join(" ")))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_root_that_can_shape_costs_a_tc_child() {
        let with = |kind: &str| LinkSnapshot {
            qdisc: Some(wireperf_doctor::snapshot::QdiscInfo { kind: kind.into(), drops: None }),
            ..Default::default()
        };
        assert!(root_may_shape(Some(&with("tbf"))) && root_may_shape(Some(&with("htb"))));
        assert!(!root_may_shape(Some(&with("noqueue"))) && !root_may_shape(Some(&with("fq_codel"))));
        assert!(root_may_shape(Some(&LinkSnapshot::default())), "no qdisc read: ask tc");
        assert!(root_may_shape(None));
    }
    use wireperf_doctor::snapshot::Duplex;

    fn link(bus: BusKind) -> LinkSnapshot {
        LinkSnapshot {
            speed_mbps: Some(10_000),
            mtu: Some(1500),
            bus: Some(bus),
            goodput: Some(wireperf_doctor::theoretical_goodput(10_000, Some(Duplex::Full), 1500, None)),
            ..Default::default()
        }
    }

    #[test]
    fn a_veths_nominal_speed_is_no_ceiling() {
        let mut f = HostFacts::default();
        link_facts(&link(BusKind::Virtual), &mut f);
        assert_eq!(f.link_mbps, Some(10_000));
        assert_eq!(f.goodput_tcp_bps, None);
        assert_eq!(f.goodput_udp_bps, None);
    }

    #[test]
    fn a_real_nics_line_rate_is_a_ceiling() {
        let mut f = HostFacts::default();
        link_facts(&link(BusKind::Pci), &mut f);
        assert!(f.goodput_tcp_bps.is_some_and(|g| g > 9_000_000_000 && g < 10_000_000_000), "{f:?}");
    }
}
