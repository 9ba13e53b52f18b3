//! Driver rules: R5 firmware-missing, R15 vendor-driver, R16 tx-timeouts.

use super::parts::{Ctx, Outcome, Severity, finding, fix, sample_lines};
use crate::adapters;
use crate::read::kernel_log::EventKind;

fn is_realtek_vendor_driver(ctx: &Ctx) -> bool {
    let m = &ctx.link.module;
    m.taint.as_deref().is_some_and(|t| t.contains('O'))
        || m.version.as_deref().is_some_and(|v| v.starts_with("v2."))
        || m.rtl_adv
}

/// R5: r8152 PHY firmware failed to load or is missing.
pub fn firmware_missing(ctx: &Ctx) -> Outcome {
    let l = ctx.link;
    let failed = ctx.events(|k| matches!(k, EventKind::FirmwareLoadFailed { .. }));
    let r8152 = l.driver.as_deref() == Some("r8152");
    if failed.is_empty() && !r8152 {
        return Outcome::Passed;
    }
    let mut ev = Vec::new();
    let mut file = failed.iter().find_map(|e| match &e.kind {
        EventKind::FirmwareLoadFailed { file } => Some(file.clone()),
        _ => None,
    });
    if !failed.is_empty() {
        ev.push(format!("{} firmware load failure(s) in the kernel log", failed.len()));
        ev.extend(sample_lines(&failed, 2));
    } else {
        if is_realtek_vendor_driver(ctx) {
            return Outcome::Passed; // Realtek's driver has the PHY code built in
        }
        let Some(needed) = l.chip.as_ref().and_then(|c| adapters::r8152_firmware(&c.name)) else {
            return Outcome::Passed;
        };
        if l.firmware_version.is_some() {
            return Outcome::Passed;
        }
        let loaded = ctx.events(|k| matches!(k, EventKind::FirmwareLoaded { .. }));
        if !loaded.is_empty() {
            return Outcome::Passed;
        }
        match (&l.firmware_file_found, l.drvinfo_reported) {
            (Some(_), _) => return Outcome::Passed,
            (None, true) => {
                ev.push(format!("{needed} is not under /lib/firmware or /usr/lib/firmware"));
                ev.push("ethtool -i reports an empty firmware-version".into());
                file = Some(needed.to_string());
            }
            (None, false) => {
                return Outcome::NotChecked(format!(
                    "{needed} is not on the firmware search path, but whether the driver loaded it is unknown (no ethtool -i, no load message in the kernel log)"
                ));
            }
        }
    }
    let file = file.unwrap_or_else(|| "rtl_nic/…".into());
    finding(
        "firmware-missing",
        Severity::Warn,
        format!("The adapter runs without its PHY firmware patch ({file}): link stability and speed can suffer."),
        ev,
        fix(
            &[
                "sudo apt install firmware-realtek   # Debian: needs non-free-firmware in sources; Ubuntu: linux-firmware".into(),
                "sudo update-initramfs -u".into(),
                "sudo modprobe -r r8152 && sudo modprobe r8152   # or replug the adapter".into(),
            ],
            &[format!("ethtool -i {}   # firmware-version: rtl8156b-2 v3 … (not empty)", l.name)],
            true,
            &[],
        ),
    )
}

/// R15: Realtek's out-of-tree r8152 is loaded.
pub fn vendor_driver(ctx: &Ctx) -> Outcome {
    let l = ctx.link;
    if l.driver.as_deref() != Some("r8152") || !is_realtek_vendor_driver(ctx) {
        return Outcome::Passed;
    }
    let m = &l.module;
    let mut ev = Vec::new();
    if let Some(t) = &m.taint {
        ev.push(format!("/sys/module/r8152/taint = {t}"));
    }
    if let Some(v) = &m.version {
        ev.push(format!("/sys/module/r8152/version = {v}"));
    }
    if m.rtl_adv {
        ev.push(format!("/sys/class/net/{}/rtl_adv/ exists", l.name));
    }
    let n = &l.name;
    if m.rtl_sg_en.as_deref() == Some("disable") {
        ev.push("rtl_adv/sg_en = disable".into());
        return finding(
            "vendor-driver",
            Severity::Warn,
            "Realtek's out-of-tree r8152 runs with scatter-gather disabled, which limits TSO.",
            ev,
            fix(
                &[format!("echo enable | sudo tee /sys/class/net/{n}/rtl_adv/sg_en")],
                &[format!("cat /sys/class/net/{n}/rtl_adv/sg_en   # enable")],
                false,
                &["The module must be rebuilt (DKMS) on every kernel update."],
            ),
        );
    }
    finding(
        "vendor-driver",
        Severity::Info,
        "Realtek's out-of-tree r8152 driver is in use; it must be rebuilt for every kernel update.",
        ev,
        fix(
            &["# keep the DKMS package installed, or switch back to the in-kernel r8152 on Linux ≥ 6.3".into()],
            &["dkms status | grep r8152".into()],
            false,
            &[],
        ),
    )
}

/// R16: transmit watchdog timeouts.
pub fn tx_timeouts(ctx: &Ctx) -> Outcome {
    let l = ctx.link;
    if !ctx.log_available() {
        return Outcome::NotChecked("kernel log not available".into());
    }
    let t = ctx.events(|k| *k == EventKind::TxTimeout);
    if t.is_empty() {
        return Outcome::Passed;
    }
    let mut ev = vec![format!("{} transmit timeout message(s) in the kernel log", t.len())];
    ev.extend(sample_lines(&t, 2));
    let fixed_kernel = ctx.host.kernel_version().is_some_and(|v| v >= (7, 0));
    let r8152 = l.driver.as_deref() == Some("r8152");
    let cmds: Vec<String> = if r8152 && !fixed_kernel {
        vec!["# use a kernel with \"net: usb: r8152: fix transmit queue timeout\" (7.0+, or a stable backport), or Realtek's r8152 2.21.4".into()]
    } else {
        vec!["# the driver reset the NIC after the queue stalled; if USB protocol errors accompany it, fix those first (usb-protocol-errors)".into()]
    };
    finding(
        "tx-timeouts",
        Severity::Warn,
        "The transmit queue stalled and the kernel reset the NIC; each reset interrupts traffic.",
        ev,
        fix(&cmds, &["sudo dmesg | grep -i 'timed out\\|Tx timeout'   # no new lines".into()], false, &[]),
    )
}
