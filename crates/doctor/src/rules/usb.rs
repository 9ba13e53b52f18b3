//! USB rules: R1 generic-usb-driver, R3 usb2-link, R4 usb-bus-limit, R6 usb-protocol-errors,
//! R17 usb-autosuspend.

use super::parts::{Ctx, Outcome, Severity, finding, fix, flap_evidence, sample_lines, usb_error_events};
use crate::adapters::{self, UsbGen};
use crate::read::kernel_log::EventKind;
use crate::snapshot::UsbInfo;

const GENERIC: &[&str] = &["cdc_ncm", "cdc_ether"];

fn usb_id(u: &UsbInfo) -> String {
    format!("{}:{}", u.vendor_id.as_deref().unwrap_or("?"), u.product_id.as_deref().unwrap_or("?"))
}

/// R1: a Realtek (or other vendor-mode) adapter runs on cdc_ncm/cdc_ether.
pub fn generic_usb_driver(ctx: &Ctx) -> Outcome {
    let l = ctx.link;
    let Some(u) = &l.usb else {
        return Outcome::Passed;
    };
    let Some(driver) = l.driver.as_deref() else {
        return Outcome::NotChecked("bound driver not reported".into());
    };
    if !GENERIC.contains(&driver) {
        return Outcome::Passed;
    }
    let row = adapters::usb_adapter(u);
    let vendor_cfg = u.vendor_configuration.or(row.map(|_| 1));
    if row.is_none() && u.vendor_configuration.is_none() {
        if u.vendor_id.is_none() || u.configurations.is_empty() {
            return Outcome::NotChecked("USB ids or descriptors not readable".into());
        }
        return Outcome::Passed; // a real CDC device (phone, modem): cdc_ncm is its driver
    }
    let dev = &u.device;
    let cfg = vendor_cfg.unwrap_or(1);
    let chip = l.chip.as_ref().map(|c| c.name.clone()).unwrap_or_else(|| usb_id(u));
    let mut ev = vec![format!(
        "driver {driver} is bound to USB interface {} (configuration {})",
        u.interface,
        u.configuration.map(|c| c.to_string()).unwrap_or_else(|| "?".into())
    )];
    if let Some(c) = &l.chip {
        ev.push(format!("chip {} ({}); best driver {}", c.name, c.identified_by, c.best_driver));
    }
    if let Some(v) = u.vendor_configuration {
        ev.push(format!("configuration {v} is vendor-specific (class ff) per the USB descriptors"));
    }
    if let (Some(m), Some(src)) = (l.max_mtu, &l.max_mtu_source) {
        ev.push(format!("max MTU {m} ({src})"));
    }
    if let Some(fw) = &l.firmware_version {
        ev.push(format!("ethtool -i firmware-version \"{fw}\""));
    }
    let best = row.map(|r| r.best_driver).unwrap_or("a vendor driver");
    let set_cfg = format!("echo {cfg} | sudo tee /sys/bus/usb/devices/{dev}/bConfigurationValue");
    let mut verify = vec![
        format!("readlink /sys/class/net/{}/device/driver   # ends in /{best}", l.name),
        format!("cat /sys/bus/usb/devices/{dev}/bConfigurationValue   # {cfg}"),
    ];
    let summary = format!(
        "The {chip} runs on the generic {driver} driver instead of {best}: no offloads, no jumbo frames and lower throughput."
    );
    let Some(row) = row else {
        ev.push(format!("USB id {} is not in the adapter table", usb_id(u)));
        return finding(
            "generic-usb-driver",
            Severity::Warn,
            format!("This adapter has a vendor-specific configuration ({cfg}) but runs in generic {driver} mode."),
            ev,
            fix(
                &[],
                &verify,
                true,
                &[
                    "Find a driver that binds the vendor configuration before switching to it: switching without one leaves the device with no driver.",
                ],
            ),
        );
    };
    let drops = true;
    let kv = ctx.host.kernel_version();
    let unknown = ctx.events(|k| matches!(k, EventKind::UnknownChipVersion { .. }));
    ev.extend(sample_lines(&unknown, 1));
    let kernel_knows = match (row.mainline_since, kv) {
        (Some(since), Some(kv)) => kv >= since && unknown.is_empty(),
        (Some(_), None) => unknown.is_empty(),
        (None, _) => false,
    };
    if row.best_driver == "r8152" {
        verify.push(format!("ethtool {}   # 2500baseT/Full supported, Duplex: Full", l.name));
        verify.push(format!("ip -d link show {}   # maxmtu ≥ 9194", l.name));
    }
    if !kernel_knows {
        let need = row
            .mainline_since
            .map(|(a, b)| format!("Linux {a}.{b} or newer"))
            .unwrap_or_else(|| "no mainline kernel yet".into());
        return finding(
            "generic-usb-driver",
            Severity::Crit,
            summary,
            ev,
            fix(
                &[format!(
                    "# kernel {} does not know the {chip} ({need}): do NOT switch the configuration, no driver would bind",
                    ctx.host.kernel_release.as_deref().unwrap_or("?")
                )],
                &verify,
                drops,
                &[
                    "Upgrade the kernel, or install Realtek's out-of-tree r8152 driver (DKMS, v2.21.4) with its udev rule 50-usb-realtek-net.rules.",
                ],
            ),
        );
    }
    let (cmds, notes): (Vec<String>, Vec<&str>) = if row.best_driver != "r8152" {
        (
            vec![
                set_cfg.clone(),
                format!(
                    "echo 'ACTION==\"add\", SUBSYSTEM==\"usb\", ATTR{{idVendor}}==\"{}\", ATTR{{idProduct}}==\"{}\", ATTR{{bConfigurationValue}}!=\"{cfg}\", ATTR{{bConfigurationValue}}=\"{cfg}\"' | sudo tee /etc/udev/rules.d/50-usb-nic-vendor-mode.rules",
                    u.vendor_id.as_deref().unwrap_or("?"),
                    u.product_id.as_deref().unwrap_or("?")
                ),
            ],
            vec!["The udev rule makes the switch persistent."],
        )
    } else if !row.in_mainline_table {
        (
            vec![
                set_cfg.clone(),
                format!(
                    "echo {} {} | sudo tee /sys/bus/usb/drivers/r8152/new_id",
                    u.vendor_id.as_deref().unwrap_or("?"),
                    u.product_id.as_deref().unwrap_or("?")
                ),
            ],
            vec![
                "This id is not in the kernel's r8152 table, so the switch is not persistent: add a udev rule or use Realtek's driver.",
            ],
        )
    } else if ctx.host.usb_drivers.iter().any(|d| d == "r8152-cfgselector") {
        (
            vec![set_cfg.clone()],
            vec![
                "r8152-cfgselector is loaded but did not switch this device; setting the configuration rebinds it to r8152.",
            ],
        )
    } else if kv.is_some_and(|v| v >= (6, 3)) {
        (
            vec!["sudo modprobe r8152".to_string()],
            vec![
                "Loading r8152 registers r8152-cfgselector, which re-probes the device into its vendor configuration.",
                "Check /etc/modprobe.d/*.conf for 'blacklist r8152'. Do not blacklist cdc_ncm: phones and LTE modems need it.",
            ],
        )
    } else {
        (
            vec![
                "sudo tee /etc/udev/rules.d/50-usb-realtek-net.rules <<'EOF'\nACTION!=\"add\", GOTO=\"usb_realtek_net_end\"\nSUBSYSTEM!=\"usb\", GOTO=\"usb_realtek_net_end\"\nENV{DEVTYPE}!=\"usb_device\", GOTO=\"usb_realtek_net_end\"\nATTR{idVendor}==\"0bda\", ATTR{idProduct}==\"815[2,3,5,6,7,a]\", ATTR{bConfigurationValue}!=\"1\", ATTR{bConfigurationValue}=\"1\"\nLABEL=\"usb_realtek_net_end\"\nEOF".to_string(),
                format!("sudo udevadm control --reload-rules && sudo udevadm trigger --action=add --subsystem-match=usb --attr-match=idVendor={}", u.vendor_id.as_deref().unwrap_or("0bda")),
            ],
            vec!["This kernel predates r8152-cfgselector (6.3; stable backports from Dec 2023 — if yours has it, 'sudo modprobe r8152' is enough). The udev rule is Realtek's own and harmless on newer kernels."],
        )
    };
    finding("generic-usb-driver", Severity::Crit, summary, ev, fix(&cmds, &verify, drops, &notes))
}

/// R3: a SuperSpeed-capable (or >480 Mbit/s) adapter enumerated at USB 2 speed.
pub fn usb2_link(ctx: &Ctx) -> Outcome {
    let l = ctx.link;
    let Some(u) = &l.usb else {
        return Outcome::Passed;
    };
    let Some(speed) = u.link_speed_mbps else {
        return Outcome::NotChecked("USB link speed not reported".into());
    };
    if speed > 480 {
        return Outcome::Passed;
    }
    let row = adapters::usb_adapter(u);
    let mut ev = vec![format!(
        "USB device {} runs at {speed} Mbit/s (USB version {})",
        u.device,
        u.version.as_deref().unwrap_or("?")
    )];
    let mut capable = false;
    if u.superspeed_capable == Some(true) || u.superspeed_plus_capable == Some(true) {
        ev.push("bos_descriptors: the device is SuperSpeed capable".into());
        capable = true;
    }
    if let Some(r) = row.filter(|r| r.usb >= UsbGen::Gen1) {
        ev.push(format!("{} is a USB 3 chip", r.chip));
        capable = true;
    }
    if let Some(s) = l.speed_mbps.filter(|&s| s > 426) {
        ev.push(format!(
            "Ethernet link {s} Mbit/s exceeds the USB 2 bulk ceiling (426 Mbit/s, shared by both directions)"
        ));
        capable = true;
    }
    if let Some(h) = u.root_hub_speed_mbps.filter(|&h| h <= 480) {
        ev.push(format!("root hub speed {h}: the device sits on the USB 2 half of the controller"));
    }
    let hs = ctx.events(|k| matches!(k, EventKind::UsbEnumerated { speed } if speed == "high-speed"));
    ev.extend(sample_lines(&hs, 1));
    if !capable {
        if u.superspeed_capable.is_none() && row.is_none() && l.speed_mbps.is_none() {
            return Outcome::NotChecked(
                "USB link is 480 Mbit/s but the device's SuperSpeed capability is unknown".into(),
            );
        }
        return Outcome::Passed;
    }
    finding(
        "usb2-link",
        Severity::Crit,
        "The adapter runs on a USB 2 link: expect about 240–320 Mbit/s in total, below 1 Gbit/s.",
        ev,
        fix(
            &["# plug the adapter into a USB 3 port (blue / \"SS\") with a USB 3 cable, directly or via a USB 3 hub".into(),
              "# USB-C: flip the plug (some C-to-A adapters carry SuperSpeed in one orientation only); prefer rear/root ports".into()],
            &[format!("cat /sys/bus/usb/devices/{}/speed   # 5000 or 10000 after replugging", u.device)],
            true,
            &[],
        ),
    )
}

/// R4: a 5G/10G adapter whose USB link is Gen1 (≈3.5 Gbit/s ceiling).
pub fn usb_bus_limit(ctx: &Ctx) -> Outcome {
    let l = ctx.link;
    let Some(u) = &l.usb else {
        return Outcome::Passed;
    };
    if !l.link_up() {
        return Outcome::Passed;
    }
    let (Some(speed), Some(usb_speed)) = (l.speed_mbps, u.link_speed_mbps) else {
        return Outcome::NotChecked("link or USB speed not reported".into());
    };
    if speed < 5000 || usb_speed != 5000 {
        return Outcome::Passed;
    }
    let ev = vec![
        format!("Ethernet link {speed} Mbit/s on a USB 3 Gen1 link ({usb_speed} Mbit/s)"),
        "USB 3 Gen1 delivers about 3.2–3.5 Gbit/s of payload per direction".into(),
    ];
    let (cmds, notes) = if u.superspeed_plus_capable == Some(true) {
        (vec!["# plug the adapter into a USB 3.2 Gen2 (10 Gbit/s) port".to_string()], vec![])
    } else {
        (
            vec![
                "# no fix: the adapter is USB 3 Gen1 only (no SuperSpeedPlus capability); expect ≈3.5 Gbit/s"
                    .to_string(),
            ],
            vec!["A 10 Gbit/s port does not help an adapter without SuperSpeedPlus capability."],
        )
    };
    finding(
        "usb-bus-limit",
        Severity::Warn,
        "The USB 3 Gen1 bus caps this 5G/10G link at about 3.5 Gbit/s.",
        ev,
        fix(&cmds, &[format!("cat /sys/bus/usb/devices/{}/speed   # 10000", u.device)], true, &notes),
    )
}

/// R6: USB protocol errors (-71 EPROTO) in the kernel log.
pub fn usb_protocol_errors(ctx: &Ctx) -> Outcome {
    let l = ctx.link;
    let Some(u) = &l.usb else {
        return Outcome::Passed;
    };
    if !ctx.log_available() {
        return Outcome::NotChecked("kernel log not available".into());
    }
    let errs = usb_error_events(ctx);
    if errs.is_empty() {
        return Outcome::Passed;
    }
    let mut ev = vec![format!("{} USB protocol error message(s) for {} in the kernel log", errs.len(), u.device)];
    ev.extend(sample_lines(&errs, 3));
    if let Some(t) = l.stats.get("tx_errors").filter(|&&t| t > 0) {
        ev.push(format!("statistics/tx_errors = {t}"));
    }
    let quirk = format!("{}:{}:k", u.vendor_id.as_deref().unwrap_or("VID"), u.product_id.as_deref().unwrap_or("PID"));
    let mut notes = vec!["-71 is EPROTO: a USB transaction error, normally a bad cable, hub, port or power supply."];
    if l.chip.as_ref().is_some_and(|c| c.name == "RTL8156") {
        notes.push("RTL8156 (A) units are known for this; a B/BG revision is more robust.");
    }
    finding(
        "usb-protocol-errors",
        Severity::Crit,
        "The USB link between host and adapter reports protocol errors: transfers fail and traffic stalls.",
        ev,
        fix(
            &[
                "# connect directly to a root port or a powered hub, with a short known-good cable".into(),
                format!("echo on | sudo tee /sys/bus/usb/devices/{}/power/control", u.device),
                format!("# disable LPM for the device: add usbcore.quirks={quirk} to the kernel command line"),
            ],
            &[
                "sudo dmesg -w | grep -- '-71'   # no new lines under load for several minutes".into(),
                format!("cat /sys/class/net/{}/statistics/tx_errors   # stays flat", l.name),
            ],
            false,
            &notes,
        ),
    )
}

/// R17: runtime autosuspend is allowed on an adapter whose link flaps or errors.
pub fn usb_autosuspend(ctx: &Ctx) -> Outcome {
    let l = ctx.link;
    let Some(u) = &l.usb else {
        return Outcome::Passed;
    };
    let Some(pc) = u.power_control.as_deref() else {
        return Outcome::NotChecked("power/control not reported".into());
    };
    if pc != "auto" {
        return Outcome::Passed;
    }
    let mut trouble = flap_evidence(ctx);
    let errs = usb_error_events(ctx);
    if !errs.is_empty() {
        trouble.push(format!("{} USB protocol error message(s)", errs.len()));
    }
    if trouble.is_empty() {
        return Outcome::Passed;
    }
    let mut ev = vec![format!("/sys/bus/usb/devices/{}/power/control = auto (runtime autosuspend allowed)", u.device)];
    ev.extend(trouble);
    finding(
        "usb-autosuspend",
        Severity::Info,
        "USB runtime autosuspend is enabled on an adapter that flaps or errors; turning it off rules it out.",
        ev,
        fix(
            &[
                format!("echo on | sudo tee /sys/bus/usb/devices/{}/power/control", u.device),
                format!(
                    "echo 'ACTION==\"add\", SUBSYSTEM==\"usb\", ATTR{{idVendor}}==\"{}\", ATTR{{idProduct}}==\"{}\", ATTR{{power/control}}=\"on\"' | sudo tee /etc/udev/rules.d/50-usb-nic-no-autosuspend.rules",
                    u.vendor_id.as_deref().unwrap_or("?"),
                    u.product_id.as_deref().unwrap_or("?")
                ),
            ],
            &[format!("cat /sys/bus/usb/devices/{}/power/control   # on", u.device)],
            false,
            &[],
        ),
    )
}
