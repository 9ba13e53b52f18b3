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

/// Reads the facts of `iface` on the live host (`tc` is asked for the shaper).
pub fn read_live(iface: Option<&str>) -> HostFacts {
    let mut f = HostFacts { sysctls: read_sysctls(&Root::live()), ..Default::default() };
    let Some(iface) = iface else { return f };
    let opts = wireperf_doctor::InspectOptions {
        interfaces: vec![iface.to_string()],
        kernel_log: KernelLogSource::Off,
        ..Default::default()
    };
    if let Ok(report) = wireperf_doctor::inspect(&opts)
        && let Some(link) = report.interfaces.first().map(|i| &i.link)
    {
        link_facts(link, &mut f);
    }
    if let Ok(Some(r)) = wireperf_doctor::root_rate_limit(iface) {
        f.shaper = Some((r.kind, r.rate_bps));
    }
    f
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
