//! The data model: what the readers found about one interface (`LinkSnapshot`) and the host
//! (`HostSnapshot`). Pure data; every field the kernel may refuse is an `Option` (rendered as
//! "not reported") so rules can tell "zero" from "unknown" and never guess.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::goodput::Goodput;
pub use crate::link_parts::{Coalesce, Duplex, LinkModes, QdiscInfo, Rings};
use crate::read::kernel_log::KernelEvent;

/// Which bus the NIC hangs off.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum BusKind {
    /// A PCI(e) function.
    Pci,
    /// A USB interface.
    Usb,
    /// A bus we do not decode (virtio, platform, ...): named in `LinkSnapshot::bus_name`.
    Other,
    /// No `device` link: veth, bridge, loopback, ...
    Virtual,
}

/// A USB configuration found in the `descriptors` file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UsbConfig {
    /// bConfigurationValue.
    pub value: u8,
    /// Class of the first interface (0xff = vendor mode, 0x02 = CDC).
    pub first_interface_class: u8,
    /// Subclass of the first interface (0x0d NCM, 0x06 ECM).
    pub first_interface_subclass: u8,
    /// CDC Ethernet `wMaxSegmentSize`, when the config has a CDC Ethernet descriptor.
    pub max_segment_size: Option<u16>,
    /// bMaxPower in mA (×8 mA units at SuperSpeed, ×2 below).
    pub max_power_ma: u32,
}

/// Facts about a USB NIC, from the USB device directory (the parent of the interface).
#[derive(Debug, Clone, Default, Serialize)]
pub struct UsbInfo {
    /// USB device name, e.g. `2-1` (also the directory under /sys/bus/usb/devices).
    pub device: String,
    /// USB interface the netdev sits on, e.g. `2-1:2.0` (config 2, interface 0).
    pub interface: String,
    /// Negotiated USB link speed in Mbit/s (480, 5000, 10000, ...; 1.5 is reported as 1).
    pub link_speed_mbps: Option<u32>,
    /// USB version the device enumerated with, e.g. `3.20` (2.10 when a USB 3 device runs at high speed).
    pub version: Option<String>,
    /// `idVendor`, 4 hex digits.
    pub vendor_id: Option<String>,
    /// `idProduct`, 4 hex digits.
    pub product_id: Option<String>,
    /// `bcdDevice`, 4 hex digits (`3104` = 31.04).
    pub bcd_device: Option<String>,
    /// `manufacturer` string.
    pub manufacturer: Option<String>,
    /// `product` string.
    pub product: Option<String>,
    /// Active `bConfigurationValue`.
    pub configuration: Option<u8>,
    /// `bNumConfigurations`.
    pub num_configurations: Option<u8>,
    /// The configuration whose first interface is vendor-specific (class ff), from `descriptors`.
    pub vendor_configuration: Option<u8>,
    /// All configurations parsed from `descriptors` (empty when unreadable).
    pub configurations: Vec<UsbConfig>,
    /// SuperSpeed capability from `bos_descriptors` (None: not readable).
    pub superspeed_capable: Option<bool>,
    /// SuperSpeedPlus (10 Gbit/s+) capability from `bos_descriptors`.
    pub superspeed_plus_capable: Option<bool>,
    /// Speed of the root hub the device hangs under (480 = the USB 2 half of the controller).
    pub root_hub_speed_mbps: Option<u32>,
    /// Driver of the USB *device*: `usb` (generic) or `r8152-cfgselector`.
    pub device_driver: Option<String>,
    /// `power/control`: `auto` allows runtime autosuspend.
    pub power_control: Option<String>,
}

/// A PCI NIC.
#[derive(Debug, Clone, Default, Serialize)]
pub struct PciInfo {
    /// PCI address, e.g. `0000:03:00.0`.
    pub address: String,
    /// `vendor`, e.g. `8086`.
    pub vendor_id: Option<String>,
    /// `device`, e.g. `15f3`.
    pub device_id: Option<String>,
}

/// The chip behind the interface, identified from the adapter table.
#[derive(Debug, Clone, Serialize)]
pub struct ChipId {
    /// Chip name, e.g. `RTL8156B`.
    pub name: String,
    /// Finer variant when known, e.g. `RTL8156BG`.
    pub variant: Option<String>,
    /// How it was identified (which fact decided).
    pub identified_by: String,
    /// Fastest Ethernet speed the chip supports, Mbit/s.
    pub max_link_mbps: u32,
    /// The driver that runs it in its best mode, e.g. `r8152`.
    pub best_driver: String,
}

/// RX/TX queue layout and RPS masks.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Queues {
    /// Number of `queues/rx-*`.
    pub rx: u32,
    /// Number of `queues/tx-*`.
    pub tx: u32,
    /// `rps_cpus` per RX queue (`rx-0` → `0`); a queue whose mask is unreadable is absent.
    pub rps_cpus: BTreeMap<String, String>,
}

/// Kernel module facts (`/sys/module/DRIVER`).
#[derive(Debug, Clone, Default, Serialize)]
pub struct ModuleInfo {
    /// `taint` (`O` = out-of-tree); None for built-in drivers.
    pub taint: Option<String>,
    /// `version`; `v2.x` on r8152 means Realtek's driver.
    pub version: Option<String>,
    /// Realtek's `rtl_adv/sg_en` (`enable`/`disable`), only with the out-of-tree driver.
    pub rtl_sg_en: Option<String>,
    /// The out-of-tree `rtl_adv/` directory exists.
    pub rtl_adv: bool,
}

/// Everything the doctor knows about one interface.
#[derive(Debug, Clone, Default, Serialize)]
pub struct LinkSnapshot {
    /// Interface name.
    pub name: String,
    /// Bound driver (`device/driver` basename, or `ethtool -i`).
    pub driver: Option<String>,
    /// Driver version (`ethtool -i` or `/sys/module/DRIVER/version`).
    pub driver_version: Option<String>,
    /// Firmware version (`ethtool -i`); cdc_ncm puts its description here.
    pub firmware_version: Option<String>,
    /// True when `ethtool -i` answered (so an absent firmware version really is empty).
    pub drvinfo_reported: bool,
    /// The PHY firmware file the chip needs under r8152, e.g. `rtl_nic/rtl8156b-2.fw`.
    pub firmware_file: Option<String>,
    /// Where that file was found on the firmware search path (None: not found).
    pub firmware_file_found: Option<String>,
    /// Module facts.
    pub module: ModuleInfo,
    /// Bus kind.
    pub bus: Option<BusKind>,
    /// Bus subsystem name when `bus` is `Other` (e.g. `virtio`).
    pub bus_name: Option<String>,
    /// USB facts when on USB.
    pub usb: Option<UsbInfo>,
    /// PCI facts when on PCI.
    pub pci: Option<PciInfo>,
    /// Identified chip.
    pub chip: Option<ChipId>,
    /// `operstate`.
    pub operstate: Option<String>,
    /// Interface administratively up (`flags & IFF_UP`).
    pub admin_up: Option<bool>,
    /// `carrier`.
    pub carrier: Option<bool>,
    /// Negotiated speed in Mbit/s (None: EINVAL or -1).
    pub speed_mbps: Option<u32>,
    /// Duplex.
    pub duplex: Option<Duplex>,
    /// Current MTU.
    pub mtu: Option<u32>,
    /// Largest MTU the driver accepts (`IFLA_MAX_MTU`).
    pub max_mtu: Option<u32>,
    /// Where `max_mtu` came from.
    pub max_mtu_source: Option<String>,
    /// `tx_queue_len`.
    pub tx_queue_len: Option<u32>,
    /// MAC address.
    pub address: Option<String>,
    /// `carrier_changes`.
    pub carrier_changes: Option<u64>,
    /// Queue layout and RPS.
    pub queues: Queues,
    /// Ring sizes when the driver reports them.
    pub rings: Option<Rings>,
    /// Coalescing when the driver reports it.
    pub coalesce: Option<Coalesce>,
    /// Link modes when reported.
    pub link_modes: Option<LinkModes>,
    /// Root qdisc.
    pub qdisc: Option<QdiscInfo>,
    /// `statistics/*` counters.
    pub stats: BTreeMap<String, u64>,
    /// Kernel log events that name this interface or its device.
    pub kernel_events: Vec<KernelEvent>,
    /// Theoretical goodput of the negotiated link (None when the speed is unknown).
    pub goodput: Option<Goodput>,
}

impl LinkSnapshot {
    /// A statistics counter, 0 when absent (only for sums where "absent" and 0 mean the same).
    pub fn stat(&self, name: &str) -> u64 {
        self.stats.get(name).copied().unwrap_or(0)
    }

    /// True when the link is up with a carrier.
    pub fn link_up(&self) -> bool {
        self.carrier == Some(true) || matches!(self.operstate.as_deref(), Some("up"))
    }
}

/// One row of `/proc/net/softnet_stat` (one CPU).
#[derive(Debug, Clone, Copy, Default, Serialize, serde::Deserialize, PartialEq, Eq)]
pub struct SoftnetRow {
    /// Packets processed.
    pub processed: u64,
    /// Dropped because the backlog was full (raise `netdev_max_backlog`).
    pub dropped: u64,
    /// NAPI budget ran out (add RPS or raise `netdev_budget`).
    pub time_squeeze: u64,
}

/// Whether and from where the kernel log was read.
#[derive(Debug, Clone, Default, Serialize)]
pub struct KernelLogStatus {
    /// True when log lines were read.
    pub available: bool,
    /// `/dev/kmsg`, `dmesg`, or the file given with `--kernel-log`.
    pub source: Option<String>,
    /// Why it is unavailable.
    pub note: Option<String>,
    /// Number of lines read.
    pub lines: usize,
}

/// Host-wide facts.
#[derive(Debug, Clone, Default, Serialize)]
pub struct HostSnapshot {
    /// `proc/sys/kernel/osrelease`.
    pub kernel_release: Option<String>,
    /// Online CPU ids (`sys/devices/system/cpu/online`).
    pub cpus_online: Vec<u32>,
    /// Relevant sysctls by dotted name (`net.core.rmem_max` → `4194304`).
    pub sysctls: BTreeMap<String, String>,
    /// softnet_stat rows.
    pub softnet: Vec<SoftnetRow>,
    /// Kernel log status.
    pub kernel_log: KernelLogStatus,
    /// USB drivers registered (`sys/bus/usb/drivers`), used to see whether r8152-cfgselector exists.
    pub usb_drivers: Vec<String>,
}

impl HostSnapshot {
    /// A sysctl parsed as a list of integers (`tcp_rmem` has three).
    pub fn sysctl_ints(&self, name: &str) -> Option<Vec<u64>> {
        let v = self.sysctls.get(name)?;
        v.split_whitespace().map(|w| w.parse().ok()).collect()
    }

    /// Kernel release as (major, minor).
    pub fn kernel_version(&self) -> Option<(u32, u32)> {
        parse_release(self.kernel_release.as_deref()?)
    }
}

/// Parses `6.1.52-amd64` → (6, 1).
pub fn parse_release(s: &str) -> Option<(u32, u32)> {
    let mut it = s.split(|c: char| !c.is_ascii_digit());
    let major = it.next()?.parse().ok()?;
    let minor = it.next()?.parse().ok()?;
    Some((major, minor))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn release_parses() {
        assert_eq!(parse_release("6.1.52"), Some((6, 1)));
        assert_eq!(parse_release("6.18.44-fc-v669"), Some((6, 18)));
        assert_eq!(parse_release("junk"), None);
    }
}
