//! The static part of a watch: the interface's line rate, USB cap and shaper, and the buffer
//! sysctls, read once when the watch starts (the doctor's own readers, without the kernel log).

use std::collections::BTreeMap;

use super::sample::HostFacts;
use crate::goodput::Limit;
use crate::read::KernelLogSource;
use crate::root::Root;

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
    let opts = crate::InspectOptions {
        interfaces: vec![iface.to_string()],
        kernel_log: KernelLogSource::Off,
        ..Default::default()
    };
    if let Ok(report) = crate::inspect(&opts)
        && let Some(link) = report.interfaces.first().map(|i| &i.link)
    {
        f.link_mbps = link.speed_mbps;
        f.mtu = link.mtu;
        if let Some(g) = link.goodput {
            f.goodput_tcp_bps = Some(g.tcp_bps);
            f.goodput_udp_bps = Some(g.udp_bps);
            f.usb_limited = g.limited_by == Limit::UsbBus;
        }
    }
    if let Ok(Some(r)) = crate::root_rate_limit(iface) {
        f.shaper = Some((r.kind, r.rate_bps));
    }
    f
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
