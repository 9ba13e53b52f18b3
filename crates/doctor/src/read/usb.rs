//! USB facts for a NIC: the USB device directory above the interface the netdev sits on, and
//! the binary `descriptors` / `bos_descriptors` files (parsed here so no libusb is needed).

use std::path::Path;

use crate::root::Root;
use crate::snapshot::{UsbConfig, UsbInfo};

/// Reads a USB NIC's facts. `iface_dir` is the resolved USB interface directory (relative to
/// the root), e.g. `sys/devices/pci0000:00/0000:00:14.0/usb2/2-1/2-1:2.0`.
pub fn read_usb(root: &Root, iface_dir: &Path) -> UsbInfo {
    let interface = base(iface_dir);
    let dev_dir = iface_dir.parent().unwrap_or(iface_dir);
    let device = base(dev_dir);
    let f = |name: &str| root.opt(dev_dir.join(name));
    let descriptors = root.read_bytes(dev_dir.join("descriptors")).ok();
    let configurations = descriptors.as_deref().map(parse_configs).unwrap_or_default();
    let vendor_configuration = configurations.iter().find(|c| c.first_interface_class == 0xff).map(|c| c.value);
    let bos = root.read_bytes(dev_dir.join("bos_descriptors")).ok();
    let caps = bos.as_deref().map(parse_bos_caps);
    // The root hub is the `usbN` ancestor directory.
    let root_hub =
        dev_dir.ancestors().find(|p| base(p).starts_with("usb") && base(p)[3..].chars().all(|c| c.is_ascii_digit()));
    UsbInfo {
        device,
        interface,
        link_speed_mbps: f("speed").and_then(|s| parse_usb_speed(&s)),
        version: f("version"),
        vendor_id: f("idVendor"),
        product_id: f("idProduct"),
        bcd_device: f("bcdDevice"),
        manufacturer: f("manufacturer"),
        product: f("product"),
        configuration: f("bConfigurationValue").and_then(|s| s.parse().ok()),
        num_configurations: f("bNumConfigurations").and_then(|s| s.parse().ok()),
        vendor_configuration,
        configurations,
        superspeed_capable: caps.map(|c| c.0),
        superspeed_plus_capable: caps.map(|c| c.1),
        root_hub_speed_mbps: root_hub.and_then(|h| root.opt(h.join("speed"))).and_then(|s| parse_usb_speed(&s)),
        device_driver: root.link_name(dev_dir.join("driver")),
        power_control: f("power/control"),
    }
}

fn base(p: &Path) -> String {
    p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
}

/// `480` → 480, `1.5` → 1.
pub fn parse_usb_speed(s: &str) -> Option<u32> {
    s.trim().parse::<f64>().ok().map(|v| v as u32)
}

/// Walks a `descriptors` blob: an 18-byte device descriptor, then every configuration's raw
/// descriptors, each `bLength` long. Truncated or garbage input yields what was parsed so far.
pub fn parse_configs(b: &[u8]) -> Vec<UsbConfig> {
    let mut out: Vec<UsbConfig> = Vec::new();
    // bcdUSB ≥ 3.0 means bMaxPower is in 8 mA units (SuperSpeed), else 2 mA.
    let ss = b.len() >= 4 && b[3] >= 3;
    let mut i = match b.first() {
        Some(&len) if len >= 2 => usize::from(len),
        _ => return out,
    };
    let mut first_if_seen = false;
    while i + 2 <= b.len() {
        let len = usize::from(b[i]);
        if len < 2 || i + len > b.len() {
            break;
        }
        let d = &b[i..i + len];
        match d[1] {
            2 if len >= 9 => {
                out.push(UsbConfig {
                    value: d[5],
                    first_interface_class: 0,
                    first_interface_subclass: 0,
                    max_segment_size: None,
                    max_power_ma: u32::from(d[8]) * if ss { 8 } else { 2 },
                });
                first_if_seen = false;
            }
            4 if len >= 9 => {
                if let (Some(c), false) = (out.last_mut(), first_if_seen) {
                    c.first_interface_class = d[5];
                    c.first_interface_subclass = d[6];
                    first_if_seen = true;
                }
            }
            0x24 if len >= 10 && d[2] == 0x0f => {
                if let Some(c) = out.last_mut() {
                    c.max_segment_size = Some(u16::from_le_bytes([d[8], d[9]]));
                }
            }
            _ => {}
        }
        i += len;
    }
    out
}

/// Reads a BOS blob: (SuperSpeed capable, SuperSpeedPlus capable).
pub fn parse_bos_caps(b: &[u8]) -> (bool, bool) {
    let (mut ss, mut ssp) = (false, false);
    let mut i = match b.first() {
        Some(&len) if len >= 2 => usize::from(len),
        _ => return (false, false),
    };
    while i + 3 <= b.len() {
        let len = usize::from(b[i]);
        if len < 3 || i + len > b.len() {
            break;
        }
        if b[i + 1] == 0x10 {
            match b[i + 2] {
                0x03 => ss = true,
                0x0a => ssp = true,
                _ => {}
            }
        }
        i += len;
    }
    (ss, ssp)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// link-facts §7.3: RTL8156B descriptors (277 bytes) and a BOS with SuperSpeed capability.
    pub const RTL8156B_DESCRIPTORS: &str = "1201200300000009da0b568104310102060309023900010100a0200904000003ffff0000070581020004000630030000\
00070502020004000630030000000705830302000b06300000020009026800020200a0200904000001020d0005052400\
100105240600010d240f031f503100ee0500800006241a00012b0705830310000b06300000080009040100000a000100\
09040101020a000104070581020004000630030000000705020200040006300300000009026200020300a02009040000\
0102060005052400100105240600010d240f031f503100ee050080000705830310000b06300000080009040100000a00\
000009040101020a0000040705810200040006300300000007050202000400063003000000";

    pub fn unhex(s: &str) -> Vec<u8> {
        let s: String = s.chars().filter(|c| c.is_ascii_hexdigit()).collect();
        (0..s.len() / 2).filter_map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).ok()).collect()
    }

    #[test]
    fn parses_rtl8156b_configs() {
        let b = unhex(RTL8156B_DESCRIPTORS);
        assert_eq!(b.len(), 277);
        let c = parse_configs(&b);
        assert_eq!(c.len(), 3);
        assert_eq!((c[0].value, c[0].first_interface_class), (1, 0xff));
        assert_eq!((c[1].value, c[1].first_interface_class, c[1].first_interface_subclass), (2, 2, 0x0d));
        assert_eq!(c[1].max_segment_size, Some(1518));
        assert_eq!((c[2].first_interface_subclass, c[2].max_segment_size), (0x06, Some(1518)));
        assert_eq!(c[0].max_power_ma, 256);
    }

    #[test]
    fn parses_bos() {
        let b = unhex("050f160002 07100202000000 0a1003000e00010aff07");
        assert_eq!(parse_bos_caps(&b), (true, false));
        assert_eq!(parse_bos_caps(&[]), (false, false));
        assert_eq!(parse_bos_caps(&[5, 0x0f, 9, 0, 1, 3, 0x10, 0x0a]), (false, true));
    }

    #[test]
    fn garbage_does_not_panic() {
        for n in 0..64u8 {
            let v: Vec<u8> = (0..n).map(|i| i.wrapping_mul(37)).collect();
            let _ = parse_configs(&v);
            let _ = parse_bos_caps(&v);
        }
    }
}
