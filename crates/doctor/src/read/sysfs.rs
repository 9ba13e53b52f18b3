//! One interface's snapshot from `sys/class/net/IF` and what hangs below it (USB device, PCI
//! function, kernel module), completed with `ip`/`ethtool`/`tc` output where sysfs is silent.

use std::path::{Path, PathBuf};

use crate::adapters;
use crate::goodput::{UsbLink, theoretical_goodput};
use crate::read::commands::{self, Cmd};
use crate::read::firmware;
use crate::read::usb::read_usb;
use crate::root::Root;
use crate::snapshot::{BusKind, Duplex, LinkSnapshot, ModuleInfo, PciInfo, Queues};

/// Reads everything about interface `name` except kernel log events.
pub fn read_link(root: &Root, name: &str) -> LinkSnapshot {
    let dir = PathBuf::from(format!("sys/class/net/{name}"));
    let f = |file: &str| root.opt(dir.join(file));
    let mut s = LinkSnapshot {
        name: name.to_string(),
        operstate: f("operstate"),
        carrier: f("carrier").map(|c| c == "1"),
        // -1 is SPEED_UNKNOWN (virtio_net); 0 and absurd values mean the same.
        speed_mbps: f("speed")
            .and_then(|v| v.parse::<i64>().ok())
            .filter(|&v| v > 0 && v < 10_000_000)
            .and_then(|v| u32::try_from(v).ok()),
        duplex: f("duplex").and_then(|d| Duplex::parse(&d)),
        mtu: f("mtu").and_then(|v| v.parse().ok()),
        tx_queue_len: f("tx_queue_len").and_then(|v| v.parse().ok()),
        address: f("address"),
        carrier_changes: f("carrier_changes").and_then(|v| v.parse().ok()),
        admin_up: f("flags")
            .and_then(|v| u32::from_str_radix(v.trim_start_matches("0x"), 16).ok())
            .map(|fl| fl & 1 == 1),
        queues: read_queues(root, &dir),
        ..LinkSnapshot::default()
    };
    for stat in root.list(dir.join("statistics")) {
        if let Some(v) = root.num(dir.join("statistics").join(&stat)) {
            s.stats.insert(stat, v);
        }
    }
    read_bus(root, &dir, &mut s);
    if let Some(d) = s.driver.clone() {
        s.module = read_module(root, &dir, &d);
    }
    read_commands(root, name, &mut s);
    if s.max_mtu.is_none() {
        cdc_max_mtu(&mut s);
    }
    s.chip = match (&s.usb, &s.pci) {
        (Some(u), _) => adapters::identify_usb(u, s.driver.as_deref(), s.max_mtu, s.firmware_version.as_deref()),
        (None, Some(p)) => adapters::identify_pci(p.vendor_id.as_deref(), p.device_id.as_deref()),
        _ => None,
    };
    if s.driver.as_deref() == Some("r8152")
        && let Some(file) = s.chip.as_ref().and_then(|c| adapters::r8152_firmware(&c.name))
    {
        let release = root.opt("proc/sys/kernel/osrelease");
        s.firmware_file_found = firmware::find(root, file, release.as_deref());
        s.firmware_file = Some(file.to_string());
    }
    if let (Some(speed), Some(mtu), true) = (s.speed_mbps, s.mtu, s.link_up()) {
        let usb = s.usb.as_ref().and_then(|u| u.link_speed_mbps).map(|speed_mbps| UsbLink { speed_mbps });
        s.goodput = Some(theoretical_goodput(speed, s.duplex, mtu, usb));
    }
    s
}

fn read_queues(root: &Root, dir: &Path) -> Queues {
    let mut q = Queues::default();
    for e in root.list(dir.join("queues")) {
        if e.starts_with("rx-") {
            q.rx += 1;
            if let Some(m) = root.opt(dir.join("queues").join(&e).join("rps_cpus")) {
                q.rps_cpus.insert(e, m);
            }
        } else if e.starts_with("tx-") {
            q.tx += 1;
        }
    }
    q
}

fn is_pci_address(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 12 && b[4] == b':' && b[7] == b':' && b[10] == b'.'
}

fn read_bus(root: &Root, dir: &Path, s: &mut LinkSnapshot) {
    let Some(dev) = root.resolve(dir.join("device")) else {
        s.bus = Some(BusKind::Virtual);
        return;
    };
    s.driver = root.link_name(dir.join("device/driver"));
    let dev_name = dev.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    if root.exists(dev.join("bInterfaceClass")) {
        s.bus = Some(BusKind::Usb);
        s.usb = Some(read_usb(root, &dev));
    } else if is_pci_address(&dev_name) && root.exists(dev.join("vendor")) {
        s.bus = Some(BusKind::Pci);
        s.pci = Some(PciInfo {
            address: dev_name,
            vendor_id: root.opt(dev.join("vendor")).map(|v| v.trim_start_matches("0x").to_string()),
            device_id: root.opt(dev.join("device")).map(|v| v.trim_start_matches("0x").to_string()),
        });
    } else {
        s.bus = Some(BusKind::Other);
        // `device/driver` → `…/bus/<bus>/drivers/<name>`: the component after `bus` names it.
        s.bus_name = root.link_target(dir.join("device/driver")).and_then(|t| {
            let parts: Vec<String> = t.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
            let i = parts.iter().position(|p| p == "bus")?;
            parts.get(i + 1).cloned()
        });
    }
}

fn read_module(root: &Root, dir: &Path, driver: &str) -> ModuleInfo {
    let m = format!("sys/module/{driver}");
    ModuleInfo {
        taint: root.opt(format!("{m}/taint")),
        version: root.opt(format!("{m}/version")),
        rtl_adv: root.exists(dir.join("rtl_adv")),
        rtl_sg_en: root.opt(dir.join("rtl_adv/sg_en")),
    }
}

fn read_commands(root: &Root, name: &str, s: &mut LinkSnapshot) {
    if let Some(l) = commands::output(root, name, Cmd::IpLink).and_then(|t| commands::parse_ip_link(&t))
        && l.max_mtu.is_some()
    {
        s.max_mtu = l.max_mtu;
        s.max_mtu_source = Some("ip -d link (IFLA_MAX_MTU)".into());
    }
    s.qdisc = commands::output(root, name, Cmd::TcQdisc).and_then(|t| commands::parse_tc_qdisc(&t));
    if let Some(t) = commands::output(root, name, Cmd::EthtoolI) {
        let (drv, ver, fw) = commands::parse_ethtool_i(&t);
        s.drvinfo_reported = true;
        if s.driver.is_none() {
            s.driver = drv;
        }
        s.driver_version = ver;
        s.firmware_version = fw;
    }
    if s.driver_version.is_none() {
        s.driver_version = s.module.version.clone();
    }
    s.rings = commands::output(root, name, Cmd::EthtoolG).and_then(|t| commands::parse_ethtool_g(&t));
    s.coalesce = commands::output(root, name, Cmd::EthtoolC).and_then(|t| commands::parse_ethtool_c(&t));
    if let Some(t) = commands::output(root, name, Cmd::Ethtool) {
        let (modes, speed, duplex) = commands::parse_ethtool(&t);
        s.link_modes = modes;
        if s.speed_mbps.is_none() {
            s.speed_mbps = speed;
        }
        if s.duplex.is_none() {
            s.duplex = duplex;
        }
    }
}

/// cdc_ncm/cdc_ether set max_mtu to `wMaxSegmentSize − 14` (cdc_ncm.c:502-511), and the
/// segment size is in the active configuration's descriptors: exact, not a guess.
fn cdc_max_mtu(s: &mut LinkSnapshot) {
    if !matches!(s.driver.as_deref(), Some("cdc_ncm" | "cdc_ether")) {
        return;
    }
    let Some(u) = &s.usb else { return };
    let seg = u.configurations.iter().find(|c| Some(c.value) == u.configuration).and_then(|c| c.max_segment_size);
    if let Some(seg) = seg {
        s.max_mtu = Some(u32::from(seg).saturating_sub(14));
        s.max_mtu_source = Some(format!("wMaxSegmentSize {seg} − 14 (USB descriptors)"));
    }
}
