//! The text report: one block per interface (facts, then findings worst first, then the
//! rules that could not run). Unreported values print as "not reported", never as 0.

use std::fmt::Write as _;

use crate::adapters::dotted;
use crate::goodput::{Limit, format_bps};
use crate::rules::Finding;
use crate::snapshot::{BusKind, HostSnapshot, LinkSnapshot};
use crate::{InterfaceReport, Report};

const NR: &str = "not reported";

fn or_nr<T: ToString>(v: Option<T>) -> String {
    v.map(|x| x.to_string()).unwrap_or_else(|| NR.into())
}

/// Renders the whole report.
pub fn render(report: &Report) -> String {
    let mut o = String::new();
    render_host(&mut o, &report.host, &report.root);
    if report.interfaces.is_empty() {
        o.push_str("\nNo physical network interface found (name one to inspect a virtual interface).\n");
    }
    for i in &report.interfaces {
        o.push('\n');
        render_interface(&mut o, i);
    }
    o
}

fn render_host(o: &mut String, h: &HostSnapshot, root: &str) {
    let _ = writeln!(
        o,
        "wireperf doctor — kernel {}, {} CPUs online{}",
        or_nr(h.kernel_release.as_deref()),
        h.cpus_online.len(),
        if root == "/" { String::new() } else { format!(", root {root}") }
    );
    let s = |k: &str| h.sysctls.get(k).cloned().unwrap_or_else(|| NR.into());
    let _ = writeln!(
        o,
        "  sysctls     tcp_rmem {} | tcp_wmem {} | rmem_max {} | wmem_max {}",
        s("net.ipv4.tcp_rmem"),
        s("net.ipv4.tcp_wmem"),
        s("net.core.rmem_max"),
        s("net.core.wmem_max")
    );
    let _ = writeln!(
        o,
        "              netdev_max_backlog {} | netdev_budget {} | congestion control {}",
        s("net.core.netdev_max_backlog"),
        s("net.core.netdev_budget"),
        s("net.ipv4.tcp_congestion_control")
    );
    if !h.softnet.is_empty() {
        let d: u64 = h.softnet.iter().map(|r| r.dropped).sum();
        let q: u64 = h.softnet.iter().map(|r| r.time_squeeze).sum();
        let _ = writeln!(o, "  softnet     {d} backlog drops, {q} time squeezes (all CPUs)");
    }
    let kl = &h.kernel_log;
    if kl.available {
        let _ = writeln!(o, "  kernel log  {} ({} lines)", kl.source.as_deref().unwrap_or("?"), kl.lines);
    } else {
        let _ = writeln!(o, "  kernel log  not read: {}", kl.note.as_deref().unwrap_or("unknown reason"));
    }
}

fn line(o: &mut String, label: &str, text: impl AsRef<str>) {
    let _ = writeln!(o, "  {label:<11} {}", text.as_ref());
}

fn render_interface(o: &mut String, i: &InterfaceReport) {
    let l = &i.link;
    let _ = writeln!(o, "{}", l.name);
    let mut drv = or_nr(l.driver.as_deref());
    if let Some(v) = &l.driver_version {
        let _ = write!(drv, " {v}");
    }
    let _ = write!(
        drv,
        ", firmware {}",
        l.firmware_version.as_deref().map(|f| format!("\"{f}\"")).unwrap_or_else(|| NR.into())
    );
    line(o, "driver", drv);
    render_bus(o, l);
    if let Some(c) = &l.chip {
        let v = c.variant.as_deref().map(|v| format!(" ({v})")).unwrap_or_default();
        line(
            o,
            "chip",
            format!(
                "{}{v} — {}; up to {} Mbit/s, best driver {}",
                c.name, c.identified_by, c.max_link_mbps, c.best_driver
            ),
        );
    }
    let admin = match l.admin_up {
        Some(false) => " (admin down)",
        _ => "",
    };
    line(
        o,
        "link",
        format!(
            "{}{admin}, carrier {}, speed {}, duplex {}, carrier changes {}",
            or_nr(l.operstate.as_deref()),
            l.carrier.map(|c| if c { "1" } else { "0" }).unwrap_or(NR),
            l.speed_mbps.map(|s| format!("{s} Mbit/s")).unwrap_or_else(|| NR.into()),
            l.duplex.map(|d| d.as_str()).unwrap_or(NR),
            or_nr(l.carrier_changes),
        ),
    );
    line(
        o,
        "mtu",
        format!(
            "{} (max {}{})",
            or_nr(l.mtu),
            or_nr(l.max_mtu),
            l.max_mtu_source.as_deref().map(|s| format!(", from {s}")).unwrap_or_default()
        ),
    );
    let rps: Vec<String> = l.queues.rps_cpus.iter().map(|(q, m)| format!("{q}={m}")).collect();
    line(
        o,
        "queues",
        format!(
            "{} rx / {} tx; RPS {}",
            l.queues.rx,
            l.queues.tx,
            if rps.is_empty() { NR.into() } else { rps.join(" ") }
        ),
    );
    line(
        o,
        "rings",
        match &l.rings {
            Some(r) => {
                format!("rx {} (max {}), tx {} (max {})", or_nr(r.rx), or_nr(r.rx_max), or_nr(r.tx), or_nr(r.tx_max))
            }
            None => NR.into(),
        },
    );
    line(
        o,
        "coalescing",
        match &l.coalesce {
            Some(c) => format!(
                "rx-usecs {}{}, adaptive rx {}",
                or_nr(c.rx_usecs),
                if l.driver.as_deref() == Some("r8152") { " (r8152: nanoseconds)" } else { "" },
                c.adaptive_rx.map(|a| if a { "on" } else { "off" }).unwrap_or(NR)
            ),
            None => NR.into(),
        },
    );
    line(
        o,
        "txqueuelen",
        format!(
            "{}; qdisc {}",
            or_nr(l.tx_queue_len),
            l.qdisc.as_ref().map(|q| format!("{} ({} drops)", q.kind, or_nr(q.drops))).unwrap_or_else(|| NR.into())
        ),
    );
    let errs: Vec<String> = l
        .stats
        .iter()
        .filter(|(k, v)| {
            **v > 0 && (k.contains("err") || k.contains("drop") || k.contains("missed") || *k == "collisions")
        })
        .map(|(k, v)| format!("{k} {v}"))
        .collect();
    line(
        o,
        "errors",
        if l.stats.is_empty() {
            NR.into()
        } else if errs.is_empty() {
            "none".into()
        } else {
            errs.join(", ")
        },
    );
    line(
        o,
        "goodput",
        match &l.goodput {
            Some(g) => format!(
                "TCP {}, UDP {} (theoretical at MTU {}{}{})",
                format_bps(g.tcp_bps),
                format_bps(g.udp_bps),
                or_nr(l.mtu),
                if g.limited_by == Limit::UsbBus { ", limited by the USB bus" } else { "" },
                if g.shared_between_directions { ", shared by both directions" } else { "" }
            ),
            None => format!("{NR} (needs an up link with a known speed)"),
        },
    );
    if i.findings.is_empty() {
        let _ = writeln!(o, "\n  no findings");
    } else {
        let _ = writeln!(o, "\n  findings (worst first)");
        for f in &i.findings {
            render_finding(o, f);
        }
    }
    if !i.not_checked.is_empty() {
        let _ = writeln!(o, "\n  not checked");
        for n in &i.not_checked {
            let _ = writeln!(o, "    {:<24} {}", n.id, n.reason);
        }
    }
}

fn render_bus(o: &mut String, l: &LinkSnapshot) {
    match (l.bus, &l.usb, &l.pci) {
        (Some(BusKind::Usb), Some(u), _) => {
            line(
                o,
                "bus",
                format!(
                    "USB {} at {}, device {} interface {}, configuration {} of {}{}; root hub {}",
                    or_nr(u.version.as_deref()),
                    u.link_speed_mbps.map(|s| format!("{s} Mbit/s")).unwrap_or_else(|| NR.into()),
                    u.device,
                    u.interface,
                    or_nr(u.configuration),
                    or_nr(u.num_configurations),
                    u.vendor_configuration.map(|v| format!(" (vendor mode is {v})")).unwrap_or_default(),
                    u.root_hub_speed_mbps.map(|s| format!("{s} Mbit/s")).unwrap_or_else(|| NR.into()),
                ),
            );
            line(
                o,
                "usb id",
                format!(
                    "{}:{} bcdDevice {} \"{}{}\"; power/control {}",
                    or_nr(u.vendor_id.as_deref()),
                    or_nr(u.product_id.as_deref()),
                    u.bcd_device.as_deref().map(dotted).unwrap_or_else(|| NR.into()),
                    u.manufacturer.as_deref().map(|m| format!("{m} ")).unwrap_or_default(),
                    u.product.as_deref().unwrap_or(NR),
                    or_nr(u.power_control.as_deref()),
                ),
            );
        }
        (Some(BusKind::Pci), _, Some(p)) => line(
            o,
            "bus",
            format!("PCI {} ({}:{})", p.address, or_nr(p.vendor_id.as_deref()), or_nr(p.device_id.as_deref())),
        ),
        (Some(BusKind::Other), _, _) => line(o, "bus", or_nr(l.bus_name.as_deref())),
        (Some(BusKind::Virtual), _, _) => line(o, "bus", "none (virtual interface)"),
        _ => line(o, "bus", NR),
    }
}

fn render_finding(o: &mut String, f: &Finding) {
    let _ = writeln!(o, "  {:<4} {}  {}", f.severity.as_str().to_uppercase(), f.id, f.summary);
    let mut row = |label: &str, text: &str| {
        let _ = writeln!(o, "         {label:<9} {text}");
    };
    for e in &f.evidence {
        row("evidence:", e);
    }
    if f.fix.drops_link {
        row("⚠", "this fix drops the link for a moment (mind SSH sessions over it)");
    }
    for c in &f.fix.commands {
        for (n, cl) in c.lines().enumerate() {
            row(if n == 0 { "fix:" } else { "" }, cl);
        }
    }
    for v in &f.fix.verify {
        row("verify:", v);
    }
    for n in &f.fix.notes {
        row("note:", n);
    }
    if !f.apply.is_empty() {
        row("", "(--apply can do this)");
    }
}
