//! The adapter table (link-facts §2): USB and PCI ids of the multi-gig NICs the rules know, and
//! how to tell chip revisions apart (RTL8156 vs RTL8156B) from what userspace can see.

use crate::snapshot::{ChipId, UsbInfo};

/// USB generation an adapter can do at best.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum UsbGen {
    /// USB 2.0 high speed (480 Mbit/s).
    Usb2,
    /// USB 3.x Gen1 (5 Gbit/s).
    Gen1,
    /// USB 3.2 Gen2 (10 Gbit/s).
    Gen2,
}

/// One row of the USB adapter table.
#[derive(Debug, Clone, Copy)]
pub struct UsbAdapter {
    /// idVendor.
    pub vid: u16,
    /// idProduct.
    pub pid: u16,
    /// Chip (or family) name.
    pub chip: &'static str,
    /// Fastest Ethernet speed, Mbit/s.
    pub max_link_mbps: u32,
    /// Best USB generation.
    pub usb: UsbGen,
    /// Driver that runs the chip in its best (vendor) mode.
    pub best_driver: &'static str,
    /// First mainline kernel whose `best_driver` knows the chip (None: only an out-of-tree driver).
    pub mainline_since: Option<(u32, u32)>,
    /// The id is in mainline `rtl8152_table`, so `r8152-cfgselector` will switch it.
    pub in_mainline_table: bool,
}

#[allow(clippy::too_many_arguments)]
const fn a(
    vid: u16,
    pid: u16,
    chip: &'static str,
    max_link_mbps: u32,
    usb: UsbGen,
    best_driver: &'static str,
    mainline_since: Option<(u32, u32)>,
    in_mainline_table: bool,
) -> UsbAdapter {
    UsbAdapter { vid, pid, chip, max_link_mbps, usb, best_driver, mainline_since, in_mainline_table }
}

use UsbGen::*;

/// Known USB adapters (link-facts §2.1). OEM Realtek ids map to the chip family they carry.
pub const USB_ADAPTERS: &[UsbAdapter] = &[
    a(0x0bda, 0x8152, "RTL8152", 100, Usb2, "r8152", Some((3, 0)), true),
    a(0x0bda, 0x8050, "RTL8050", 100, Usb2, "r8152", Some((3, 0)), true),
    a(0x0bda, 0x8153, "RTL8153", 1000, Gen1, "r8152", Some((3, 0)), true),
    a(0x0bda, 0x8155, "RTL8155", 1000, Gen1, "r8152", Some((5, 13)), true),
    a(0x0bda, 0x8156, "RTL8156", 2500, Gen1, "r8152", Some((5, 13)), true),
    a(0x0bda, 0x8157, "RTL8157", 5000, Gen1, "r8152", Some((7, 1)), true),
    a(0x0bda, 0x815a, "RTL8159", 10000, Gen2, "r8152", None, false),
    a(0x0b05, 0x1976, "RTL8156B", 2500, Gen1, "r8152", Some((5, 13)), true),
    a(0x2001, 0xb301, "RTL8156", 2500, Gen1, "r8152", Some((5, 13)), true),
    a(0x20f4, 0xe02b, "RTL8156", 2500, Gen1, "r8152", Some((7, 1)), false),
    a(0x2357, 0x0601, "RTL8153", 1000, Gen1, "r8152", Some((4, 13)), true),
    a(0x2357, 0x0602, "RTL8153", 1000, Gen1, "r8152", Some((4, 13)), true),
    a(0x056e, 0x4017, "RTL8156", 2500, Gen1, "r8152", None, false),
    a(0x056e, 0x4013, "RTL8153", 1000, Gen1, "r8152", None, false),
    a(0x0b95, 0x1790, "AX88179", 1000, Gen1, "ax88179_178a", Some((3, 0)), false),
    a(0x0b95, 0x178a, "AX88178A", 1000, Usb2, "ax88179_178a", Some((3, 0)), false),
    a(0x2eca, 0xc101, "AQC111U", 5000, Gen1, "aqc111", Some((5, 0)), false),
    a(0x0b95, 0x2790, "AQC111U", 5000, Gen1, "aqc111", Some((5, 0)), false),
    a(0x0b95, 0x2791, "AQC112U", 2500, Gen1, "aqc111", Some((5, 0)), false),
    a(0x20f4, 0xe05a, "AQC111U", 5000, Gen1, "aqc111", Some((5, 0)), false),
    a(0x1c04, 0x0015, "AQC111U", 5000, Gen1, "aqc111", Some((5, 0)), false),
];

/// Intel igc PCI device ids (link-facts §2.1) → model name. All are 2.5G.
pub const IGC_IDS: &[(u16, &str)] = &[
    (0x15f2, "I225-LM"),
    (0x15f3, "I225-V"),
    (0x15f8, "I225-I"),
    (0x0d9f, "I225-IT"),
    (0x5502, "I225-LMvP"),
    (0x3100, "I225-K"),
    (0x3101, "I225-K2"),
    (0x15f7, "I220-V"),
    (0x125b, "I226-LM"),
    (0x125c, "I226-V"),
    (0x125d, "I226-IT"),
    (0x5503, "I226-LMvP"),
    (0x3102, "I226-K"),
    (0x125e, "I221-V"),
];

fn hex16(s: Option<&str>) -> Option<u16> {
    u16::from_str_radix(s?.trim().trim_start_matches("0x"), 16).ok()
}

/// Looks up a USB adapter by its ids.
pub fn lookup_usb(vid: u16, pid: u16) -> Option<&'static UsbAdapter> {
    USB_ADAPTERS.iter().find(|x| x.vid == vid && x.pid == pid)
}

/// The table row for a USB NIC's ids, when known.
pub fn usb_adapter(usb: &UsbInfo) -> Option<&'static UsbAdapter> {
    lookup_usb(hex16(usb.vendor_id.as_deref())?, hex16(usb.product_id.as_deref())?)
}

/// Identifies the chip of a USB NIC.
///
/// For the RTL8156 family the revision decides the firmware and the max MTU, so it is taken
/// from, in order: `IFLA_MAX_MTU` under r8152 (15338 = A, 16362 = B), the firmware name in
/// `ethtool -i` (`rtl8156a-2` / `rtl8156b-2`), then bcdDevice (30.00 = A, 31.00 = B, other
/// 31.xx = BG), which adapter makers set and is therefore only a hint.
pub fn identify_usb(usb: &UsbInfo, driver: Option<&str>, max_mtu: Option<u32>, fw: Option<&str>) -> Option<ChipId> {
    let row = usb_adapter(usb)?;
    let ids = format!("{}:{}", usb.vendor_id.as_deref().unwrap_or("?"), usb.product_id.as_deref().unwrap_or("?"));
    let mut chip = ChipId {
        name: row.chip.to_string(),
        variant: None,
        identified_by: format!("USB id {ids}"),
        max_link_mbps: row.max_link_mbps,
        best_driver: row.best_driver.to_string(),
    };
    if row.chip == "RTL8156" || row.chip == "RTL8156B" {
        let bcd = usb.bcd_device.as_deref().unwrap_or("");
        if driver == Some("r8152") && max_mtu == Some(15338) {
            chip.name = "RTL8156".into();
            chip.identified_by = format!("USB id {ids}, max MTU 15338 under r8152");
        } else if driver == Some("r8152") && max_mtu == Some(16362) {
            chip.name = "RTL8156B".into();
            chip.identified_by = format!("USB id {ids}, max MTU 16362 under r8152");
        } else if let Some(f) = fw.filter(|f| f.starts_with("rtl8156a-2")) {
            chip.name = "RTL8156".into();
            chip.identified_by = format!("USB id {ids}, firmware {f}");
        } else if let Some(f) = fw.filter(|f| f.starts_with("rtl8156b-2")) {
            chip.name = "RTL8156B".into();
            chip.identified_by = format!("USB id {ids}, firmware {f}");
        } else if bcd == "3000" {
            chip.name = "RTL8156".into();
            chip.identified_by = format!("USB id {ids}, bcdDevice 30.00 (a hint)");
        } else if bcd.starts_with("31") {
            chip.name = "RTL8156B".into();
            chip.identified_by = format!("USB id {ids}, bcdDevice {} (a hint)", dotted(bcd));
        }
        if chip.name == "RTL8156B" && bcd.starts_with("31") && bcd != "3100" {
            chip.variant = Some("RTL8156BG".into());
        }
    }
    Some(chip)
}

/// Identifies an Intel igc NIC by PCI ids.
pub fn identify_pci(vendor: Option<&str>, device: Option<&str>) -> Option<ChipId> {
    if hex16(vendor)? != 0x8086 {
        return None;
    }
    let dev = hex16(device)?;
    let (_, name) = IGC_IDS.iter().find(|(id, _)| *id == dev)?;
    Some(ChipId {
        name: (*name).to_string(),
        variant: None,
        identified_by: format!("PCI id 8086:{dev:04x}"),
        max_link_mbps: 2500,
        best_driver: "igc".into(),
    })
}

/// The PHY firmware file r8152 loads for a chip (link-facts §2.2), when it needs one.
pub fn r8152_firmware(chip: &str) -> Option<&'static str> {
    match chip {
        "RTL8156" => Some("rtl_nic/rtl8156a-2.fw"),
        "RTL8156B" | "RTL8153D" => Some("rtl_nic/rtl8156b-2.fw"),
        "RTL8153C" => Some("rtl_nic/rtl8153c-1.fw"),
        _ => None,
    }
}

/// Largest MTU r8152 allows for a chip, to say what fixing the driver would unlock.
pub fn r8152_max_mtu(chip: &str) -> Option<u32> {
    match chip {
        "RTL8152" | "RTL8050" => Some(1500),
        "RTL8153" | "RTL8153B" | "RTL8153C" | "RTL8155" => Some(9194),
        "RTL8156" => Some(15338),
        "RTL8156B" | "RTL8153D" => Some(16362),
        _ => None,
    }
}

/// `3104` → `31.04`.
pub fn dotted(bcd: &str) -> String {
    if bcd.len() == 4 { format!("{}.{}", &bcd[..2], &bcd[2..]) } else { bcd.to_string() }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usb(pid: &str, bcd: &str) -> UsbInfo {
        UsbInfo {
            vendor_id: Some("0bda".into()),
            product_id: Some(pid.into()),
            bcd_device: Some(bcd.into()),
            ..UsbInfo::default()
        }
    }

    #[test]
    fn rtl8156_revisions() {
        let c = identify_usb(&usb("8156", "3000"), Some("cdc_ncm"), Some(1504), None).unwrap();
        assert_eq!(c.name, "RTL8156");
        let c = identify_usb(&usb("8156", "3104"), Some("cdc_ncm"), None, None).unwrap();
        assert_eq!((c.name.as_str(), c.variant.as_deref()), ("RTL8156B", Some("RTL8156BG")));
        // max MTU under r8152 outranks bcdDevice.
        let c = identify_usb(&usb("8156", "3100"), Some("r8152"), Some(15338), None).unwrap();
        assert_eq!(c.name, "RTL8156");
        let c = identify_usb(&usb("8156", "3000"), Some("r8152"), None, Some("rtl8156b-2 v3")).unwrap();
        assert_eq!(c.name, "RTL8156B");
        assert!(identify_usb(&usb("9999", "0100"), None, None, None).is_none());
    }

    #[test]
    fn igc_ids() {
        let c = identify_pci(Some("0x8086"), Some("0x15f3")).unwrap();
        assert_eq!(c.name, "I225-V");
        assert!(identify_pci(Some("0x10ec"), Some("0x8125")).is_none());
    }
}
