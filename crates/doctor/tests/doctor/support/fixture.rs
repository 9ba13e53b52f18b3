//! Fixture trees shaped like sysfs/procfs, built in tempdirs with relative symlinks.
//!
//! `Tree` writes files and links; `Host`, `UsbNic` and `PciNic` describe a machine and its NICs
//! with healthy defaults that each scenario overrides with struct update syntax.

use std::fmt::Write as _;
use std::path::{Component, Path, PathBuf};

/// A fixture root in a tempdir.
pub struct Tree {
    dir: tempfile::TempDir,
}

fn relative(from_dir: &Path, to: &Path) -> PathBuf {
    let f: Vec<Component> = from_dir.components().collect();
    let t: Vec<Component> = to.components().collect();
    let common = f.iter().zip(&t).take_while(|(a, b)| a == b).count();
    let mut p = PathBuf::new();
    for _ in common..f.len() {
        p.push("..");
    }
    for c in &t[common..] {
        p.push(c.as_os_str());
    }
    p
}

impl Tree {
    pub fn new() -> Self {
        Tree { dir: tempfile::tempdir().expect("tempdir") }
    }

    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    /// Writes a file (creating parent directories).
    pub fn file(&self, rel: impl AsRef<Path>, content: impl AsRef<[u8]>) -> &Self {
        let p = self.root().join(rel);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(p, content).expect("write");
        self
    }

    /// Makes a file read fail like sysfs does (`NAME.errno`).
    pub fn errno(&self, rel: &str, errno: &str) -> &Self {
        self.file(rel, "").file(format!("{rel}.errno"), errno)
    }

    pub fn dir(&self, rel: impl AsRef<Path>) -> &Self {
        std::fs::create_dir_all(self.root().join(rel)).expect("mkdir");
        self
    }

    /// A symlink at `rel` pointing at `target` (both relative to the root); the link text is
    /// relative, as in sysfs, so the tree never escapes its root.
    pub fn link(&self, rel: impl AsRef<Path>, target: impl AsRef<Path>) -> &Self {
        let rel = rel.as_ref();
        let parent = rel.parent().expect("parent");
        self.dir(parent).dir(target.as_ref());
        let text = relative(parent, target.as_ref());
        std::os::unix::fs::symlink(text, self.root().join(rel)).expect("symlink");
        self
    }

    /// Writes a set of `name value` files under `dir`.
    pub fn attrs(&self, dir: &str, kv: &[(&str, &str)]) -> &Self {
        for (k, v) in kv {
            self.file(format!("{dir}/{k}"), format!("{v}\n"));
        }
        self
    }

    /// Writes the kernel log where `--root` finds it by default.
    pub fn kernel_log(&self, text: &str) -> &Self {
        self.file("wireperf/kernel.log", text)
    }

    /// Writes a replayed command output for `iface` (`ip-link.json`, `ethtool-i.txt`, ...).
    pub fn cmd(&self, iface: &str, file: &str, text: &str) -> &Self {
        self.file(format!("wireperf/{iface}/{file}"), text)
    }
}

pub fn unhex(s: &str) -> Vec<u8> {
    let s: String = s.chars().filter(|c| c.is_ascii_hexdigit()).collect();
    (0..s.len() / 2).map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).expect("hex")).collect()
}

/// link-facts §7.3: RTL8156B `descriptors` (3 configs: vendor / NCM / ECM).
pub const RTL8156B_DESCRIPTORS: &str = "1201200300000009da0b568104310102060309023900010100a0200904000003ffff0000070581020004000630030000\
00070502020004000630030000000705830302000b06300000020009026800020200a0200904000001020d0005052400\
100105240600010d240f031f503100ee0500800006241a00012b0705830310000b06300000080009040100000a000100\
09040101020a000104070581020004000630030000000705020200040006300300000009026200020300a02009040000\
0102060005052400100105240600010d240f031f503100ee050080000705830310000b06300000080009040100000a00\
000009040101020a0000040705810200040006300300000007050202000400063003000000";
/// BOS with USB 2.0 extension + SuperSpeed capability.
pub const BOS_SS: &str = "050f160002 07100202000000 0a1003000e00010aff07";

/// The host part of a fixture.
pub struct Host {
    pub kernel: &'static str,
    pub cpus: &'static str,
    pub tcp_rmem: &'static str,
    pub softnet: &'static str,
    pub usb_drivers: &'static [&'static str],
}

impl Default for Host {
    fn default() -> Self {
        Host {
            kernel: "6.8.0",
            cpus: "0-3",
            tcp_rmem: "4096\t131072\t6291456",
            softnet: "0558881c 00000000 00000000 00000000\n00000100 00000000 00000000 00000000\n",
            usb_drivers: &["usb", "r8152", "r8152-cfgselector", "cdc_ncm", "cdc_ether"],
        }
    }
}

impl Host {
    pub fn write(&self, t: &Tree) {
        t.file("proc/sys/kernel/osrelease", format!("{}\n", self.kernel))
            .file("sys/devices/system/cpu/online", format!("{}\n", self.cpus))
            .attrs(
                "proc/sys/net/core",
                &[
                    ("netdev_max_backlog", "1000"),
                    ("rmem_max", "4194304"),
                    ("wmem_max", "4194304"),
                    ("rps_sock_flow_entries", "0"),
                    ("netdev_budget", "300"),
                ],
            )
            .attrs(
                "proc/sys/net/ipv4",
                &[
                    ("tcp_rmem", self.tcp_rmem),
                    ("tcp_wmem", "4096\t16384\t4194304"),
                    ("tcp_congestion_control", "cubic"),
                ],
            )
            .file("proc/sys/kernel/dmesg_restrict", "0\n")
            .file("proc/net/softnet_stat", self.softnet);
        for d in self.usb_drivers {
            t.dir(format!("sys/bus/usb/drivers/{d}"));
        }
    }
}

/// Netdev attributes shared by USB and PCI NICs.
#[derive(Clone)]
pub struct Netdev {
    pub name: &'static str,
    pub operstate: &'static str,
    pub carrier: &'static str,
    /// None: reading fails with EINVAL (down link).
    pub speed: Option<&'static str>,
    pub duplex: Option<&'static str>,
    pub mtu: &'static str,
    pub tx_queue_len: &'static str,
    pub carrier_changes: &'static str,
    pub queues: u32,
    pub rps: &'static str,
    pub stats: Vec<(&'static str, &'static str)>,
}

impl Default for Netdev {
    fn default() -> Self {
        Netdev {
            name: "enx00e04c680001",
            operstate: "up",
            carrier: "1",
            speed: Some("2500"),
            duplex: Some("full"),
            mtu: "1500",
            tx_queue_len: "1000",
            carrier_changes: "2",
            queues: 1,
            rps: "f",
            stats: vec![],
        }
    }
}

impl Netdev {
    /// Writes the netdev directory `dir` and its `sys/class/net` link.
    pub fn write(&self, t: &Tree, dir: &str) {
        t.attrs(
            dir,
            &[
                ("operstate", self.operstate),
                ("carrier", self.carrier),
                ("mtu", self.mtu),
                ("tx_queue_len", self.tx_queue_len),
                ("carrier_changes", self.carrier_changes),
                ("address", "00:e0:4c:68:00:01"),
                ("type", "1"),
                ("flags", "0x1003"),
            ],
        );
        match self.speed {
            Some(s) => t.file(format!("{dir}/speed"), format!("{s}\n")),
            None => t.errno(&format!("{dir}/speed"), "EINVAL"),
        };
        match self.duplex {
            Some(d) => t.file(format!("{dir}/duplex"), format!("{d}\n")),
            None => t.errno(&format!("{dir}/duplex"), "EINVAL"),
        };
        let mut stats: Vec<(&str, &str)> = [
            "rx_bytes",
            "tx_bytes",
            "rx_errors",
            "tx_errors",
            "rx_dropped",
            "tx_dropped",
            "rx_missed_errors",
            "collisions",
        ]
        .iter()
        .map(|s| (*s, "0"))
        .collect();
        for (k, v) in &self.stats {
            stats.retain(|(n, _)| n != k);
            stats.push((k, v));
        }
        t.attrs(&format!("{dir}/statistics"), &stats);
        for q in 0..self.queues {
            t.file(format!("{dir}/queues/rx-{q}/rps_cpus"), format!("{}\n", self.rps))
                .file(format!("{dir}/queues/rx-{q}/rps_flow_cnt"), "0\n");
            if self.queues == 1 {
                t.errno(&format!("{dir}/queues/tx-{q}/xps_cpus"), "ENOENT");
            } else {
                t.file(format!("{dir}/queues/tx-{q}/xps_cpus"), "1\n");
            }
        }
        t.link(format!("sys/class/net/{}", self.name), dir);
    }
}

/// A USB NIC below an xHCI controller. Defaults: RTL8156B on r8152 (vendor config 1) on USB 3.
#[derive(Clone)]
pub struct UsbNic {
    pub net: Netdev,
    pub driver: &'static str,
    pub device_driver: &'static str,
    pub config: u8,
    pub vid: &'static str,
    pub pid: &'static str,
    pub bcd: &'static str,
    pub product: &'static str,
    /// `480` puts the device on the USB 2 root hub (bus 1), else the USB 3 one (bus 2).
    pub usb_speed: &'static str,
    pub usb_version: &'static str,
    pub descriptors: &'static str,
    pub bos: &'static str,
    pub power_control: &'static str,
    pub iface_class: &'static str,
}

impl Default for UsbNic {
    fn default() -> Self {
        UsbNic {
            net: Netdev::default(),
            driver: "r8152",
            device_driver: "r8152-cfgselector",
            config: 1,
            vid: "0bda",
            pid: "8156",
            bcd: "3104",
            product: "USB 10/100/1G/2.5G LAN",
            usb_speed: "5000",
            usb_version: " 3.20",
            descriptors: RTL8156B_DESCRIPTORS,
            bos: BOS_SS,
            power_control: "auto",
            iface_class: "ff",
        }
    }
}

pub const XHCI: &str = "sys/devices/pci0000:00/0000:00:14.0";

impl UsbNic {
    /// The USB device name (`2-1` on the USB 3 bus, `1-1` on USB 2).
    pub fn device(&self) -> &'static str {
        if self.usb_speed == "480" { "1-1" } else { "2-1" }
    }

    pub fn write(&self, t: &Tree) {
        t.attrs(XHCI, &[("class", "0x0c0330"), ("vendor", "0x8086"), ("device", "0xa36d")])
            .file(format!("{XHCI}/msi_irqs/125"), "")
            .link(format!("{XHCI}/driver"), "sys/bus/pci/drivers/xhci_hcd")
            .attrs(
                &format!("{XHCI}/usb1"),
                &[("speed", "480"), ("version", " 2.00"), ("idVendor", "1d6b"), ("idProduct", "0002")],
            )
            .attrs(
                &format!("{XHCI}/usb2"),
                &[("speed", "5000"), ("version", " 3.10"), ("idVendor", "1d6b"), ("idProduct", "0003")],
            );
        let dev = self.device();
        let bus = &dev[..1];
        let ddir = format!("{XHCI}/usb{bus}/{dev}");
        t.attrs(
            &ddir,
            &[
                ("idVendor", self.vid),
                ("idProduct", self.pid),
                ("bcdDevice", self.bcd),
                ("manufacturer", "Realtek"),
                ("product", self.product),
                ("speed", self.usb_speed),
                ("version", self.usb_version),
                ("bConfigurationValue", &self.config.to_string()),
                ("bNumConfigurations", "3"),
                ("bNumInterfaces", " 2"),
                ("bMaxPower", "256mA"),
                ("busnum", bus),
                ("devpath", "1"),
                ("power/control", self.power_control),
                ("power/autosuspend_delay_ms", "2000"),
                ("power/runtime_status", "active"),
            ],
        )
        .file(format!("{ddir}/descriptors"), unhex(self.descriptors))
        .file(format!("{ddir}/bos_descriptors"), unhex(self.bos))
        .link(format!("{ddir}/driver"), format!("sys/bus/usb/drivers/{}", self.device_driver));
        let idir = format!("{ddir}/{dev}:{}.0", self.config);
        let sub = if self.iface_class == "02" { "0d" } else { "ff" };
        t.attrs(
            &idir,
            &[
                ("bInterfaceClass", self.iface_class),
                ("bInterfaceSubClass", sub),
                ("bInterfaceProtocol", "00"),
                ("bInterfaceNumber", "00"),
                ("bAlternateSetting", " 0"),
            ],
        )
        .link(format!("{idir}/driver"), format!("sys/bus/usb/drivers/{}", self.driver));
        let ndir = format!("{idir}/net/{}", self.net.name);
        self.net.write(t, &ndir);
        t.link(format!("{ndir}/device"), &idir);
        if self.driver == "cdc_ncm" {
            t.attrs(
                &format!("{ndir}/cdc_ncm"),
                &[("rx_max", "16384"), ("tx_max", "16384"), ("dwNtbInMaxSize", "16384")],
            );
        }
    }
}

/// A PCI NIC. Defaults: Intel I225-V on igc, 4 queues, 2.5G, healthy.
#[derive(Clone)]
pub struct PciNic {
    pub net: Netdev,
    pub rings: (u32, u32),
    pub rx_usecs: u32,
    pub partner_max: u32,
}

impl Default for PciNic {
    fn default() -> Self {
        PciNic {
            net: Netdev { name: "enp3s0", queues: 4, rps: "0", ..Netdev::default() },
            rings: (256, 4096),
            rx_usecs: 3,
            partner_max: 2500,
        }
    }
}

impl PciNic {
    pub fn write(&self, t: &Tree) {
        let pdir = "sys/devices/pci0000:00/0000:00:1c.0/0000:03:00.0";
        t.attrs(pdir, &[("vendor", "0x8086"), ("device", "0x15f3"), ("class", "0x020000"), ("irq", "16")])
            .file(format!("{pdir}/msi_irqs/130"), "")
            .link(format!("{pdir}/driver"), "sys/bus/pci/drivers/igc");
        let ndir = format!("{pdir}/net/{}", self.net.name);
        self.net.write(t, &ndir);
        t.link(format!("{ndir}/device"), pdir);
        let n = self.net.name;
        let mut partner = String::new();
        for s in [100, 1000, 2500].iter().filter(|s| **s <= self.partner_max) {
            let _ = write!(partner, " {s}baseT/Full");
        }
        t.cmd(n, "ip-link.json", &format!(r#"[{{"ifname":"{n}","mtu":1500,"qdisc":"mq","min_mtu":68,"max_mtu":9216,"num_rx_queues":4}}]"#))
            .cmd(n, "ethtool-i.txt", "driver: igc\nversion: 6.8.0\nfirmware-version: 1057:8754\nbus-info: 0000:03:00.0\n")
            .cmd(n, "ethtool-g.txt", &format!("Ring parameters for {n}:\nPre-set maximums:\nRX:\t\t\t{max}\nRX Mini:\t\tn/a\nTX:\t\t\t{max}\nCurrent hardware settings:\nRX:\t\t\t{cur}\nTX:\t\t\t{cur}\n", max = self.rings.1, cur = self.rings.0))
            .cmd(n, "ethtool-c.txt", &format!("Coalesce parameters for {n}:\nAdaptive RX: off  TX: off\nrx-usecs: {}\ntx-usecs: 3\n", self.rx_usecs))
            .cmd(n, "ethtool.txt", &format!(
                "Settings for {n}:\n\tSupported ports: [ TP ]\n\tSupported link modes:   10baseT/Half 10baseT/Full\n\t                        100baseT/Half 100baseT/Full\n\t                        1000baseT/Full\n\t                        2500baseT/Full\n\tLink partner advertised link modes: {partner}\n\tSpeed: {}Mb/s\n\tDuplex: Full\n\tAuto-negotiation: on\n\tLink detected: yes\n",
                self.net.speed.unwrap_or("Unknown!")
            ))
            .cmd(n, "tc-qdisc.json", r#"[{"kind":"mq","handle":"0:","root":true,"drops":0}]"#);
    }
}
