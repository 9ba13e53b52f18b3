//! The kernel log: read it (a `dmesg` text file, `/dev/kmsg` without blocking, or `dmesg`),
//! and turn the few line shapes the rules care about into typed events (link-facts §1.7).
//!
//! Messages from `dev_printk` start `DRIVER DEVICE: ` and from `netdev_printk`
//! `DRIVER DEVICE IFNAME: `, so the head before the first `": "` ties a line to a USB/PCI device
//! or an interface. No regex crate: each shape is a prefix/suffix test on the message.

use std::fs::OpenOptions;
use std::io::{ErrorKind, Read};
use std::os::unix::fs::OpenOptionsExt;

use serde::Serialize;

/// What a kernel log line says.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum EventKind {
    /// `Direct firmware load for F failed` / `unable to load firmware patch F`.
    FirmwareLoadFailed {
        /// Firmware file, e.g. `rtl_nic/rtl8156b-2.fw`.
        file: String,
    },
    /// `load rtl8156b-2 v3 10/20/23 successfully`.
    FirmwareLoaded {
        /// What was loaded.
        name: String,
    },
    /// USB protocol error: `Tx status -71`, `Failed to read … (-71)`, `get_registers -71`, ...
    UsbProtocolError {
        /// The error code, e.g. -71.
        code: i32,
    },
    /// `Tx timeout` or `NETDEV WATCHDOG … transmit queue N timed out`.
    TxTimeout,
    /// `NIC Link is Down` / cdc_ncm `network connection: disconnected`.
    LinkDown,
    /// `NIC Link is Up …` / cdc_ncm `network connection: connected`.
    LinkUp,
    /// `Unknown version 0x7410`: the driver does not know the chip.
    UnknownChipVersion {
        /// The version register value.
        version: String,
    },
    /// `new high-speed USB device number 3 using xhci_hcd`.
    UsbEnumerated {
        /// `high-speed`, `SuperSpeed`, `SuperSpeed Plus Gen 2x1`, ...
        speed: String,
    },
}

/// One recognised kernel log line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct KernelEvent {
    /// What it says.
    #[serde(flatten)]
    pub kind: EventKind,
    /// Driver or subsystem (`r8152`, `usb`, `igc`).
    pub driver: String,
    /// Device name (`2-1:1.0`, `2-1`, `0000:13:00.0`).
    pub device: String,
    /// Interface name when the line names one.
    pub ifname: Option<String>,
    /// The message as logged (without timestamp).
    pub line: String,
    /// When it was logged, µs on the kernel's printk clock (the `[ 123.456789]` stamp, the
    /// kmsg record's third field): which events happened during a test. Not in the JSON.
    #[serde(skip)]
    pub at_us: Option<u64>,
}

/// The printk time of a log line, µs: `[  123.456789] …` (optionally after `<6>`) or a kmsg
/// record `6,1201,307241049964,-;…`; `None` when the line has no stamp.
pub fn timestamp_us(line: &str) -> Option<u64> {
    let mut s = line.trim_start();
    if s.starts_with('<')
        && let Some(i) = s.find('>')
    {
        s = &s[i + 1..];
    }
    if let Some(rest) = s.strip_prefix('[') {
        let (secs, frac) = rest.split_once(']')?.0.trim().split_once('.')?;
        let frac = format!("{frac:0<6}");
        return Some(secs.parse::<u64>().ok()? * 1_000_000 + frac.get(..6)?.parse::<u64>().ok()?);
    }
    let (meta, _) = s.split_once(';')?;
    let mut f = meta.split(',');
    let (_, _, usec) = (f.next()?, f.next()?, f.next()?);
    usec.parse().ok()
}

/// Strips a `[  123.456] `, `<6>[ … ] ` or kmsg `6,1201,307241049964,-;` prefix.
pub fn strip_prefix(line: &str) -> &str {
    let mut s = line.trim_end();
    if s.starts_with('<')
        && let Some(i) = s.find('>')
    {
        s = &s[i + 1..];
    }
    if s.starts_with('[')
        && let Some(i) = s.find(']')
    {
        return s[i + 1..].trim_start();
    }
    // kmsg record: "prio,seq,usec,flags[,...];text"
    if let Some((meta, text)) = s.split_once(';')
        && meta.split(',').count() >= 4
        && meta.split(',').take(3).all(|f| f.chars().all(|c| c.is_ascii_digit()) && !f.is_empty())
    {
        return text;
    }
    s
}

fn parse_code(s: &str) -> Option<i32> {
    s.trim().trim_start_matches('(').trim_end_matches(')').parse().ok()
}

/// Classifies one kernel log line; `None` for lines no rule needs.
pub fn parse_line(raw: &str) -> Option<KernelEvent> {
    let text = strip_prefix(raw);
    // kmsg continuation lines (" SUBSYSTEM=usb") carry no message.
    if raw.starts_with(' ') && text.contains('=') && !text.contains(": ") {
        return None;
    }
    let (head, msg) = text.split_once(": ")?;
    if head == "NETDEV WATCHDOG" {
        // Old format: "NETDEV WATCHDOG: eth0 (r8152): transmit queue 0 timed out"
        let (who, rest) = msg.split_once(": ")?;
        if !rest.contains("timed out") {
            return None;
        }
        let mut w = who.split_whitespace();
        let ifname = w.next()?.to_string();
        let driver = w.next().unwrap_or("").trim_matches(|c| c == '(' || c == ')').to_string();
        return Some(KernelEvent {
            kind: EventKind::TxTimeout,
            driver,
            device: String::new(),
            ifname: Some(ifname),
            line: text.to_string(),
            at_us: timestamp_us(raw),
        });
    }
    let mut parts = head.split_whitespace();
    let driver = parts.next()?.to_string();
    let device = parts.next()?.to_string();
    let ifname = parts.next().map(String::from);
    if parts.next().is_some() {
        return None;
    }
    let kind = classify(msg)?;
    Some(KernelEvent { kind, driver, device, ifname, line: text.to_string(), at_us: timestamp_us(raw) })
}

fn classify(msg: &str) -> Option<EventKind> {
    if let Some(rest) = msg.strip_prefix("Direct firmware load for ") {
        let file = rest.split_whitespace().next()?.to_string();
        return Some(EventKind::FirmwareLoadFailed { file });
    }
    if let Some(rest) = msg.strip_prefix("unable to load firmware patch ") {
        let file = rest.split_whitespace().next()?.to_string();
        return Some(EventKind::FirmwareLoadFailed { file });
    }
    if let Some(rest) = msg.strip_prefix("load ")
        && let Some(name) = rest.strip_suffix(" successfully")
    {
        return Some(EventKind::FirmwareLoaded { name: name.to_string() });
    }
    for p in ["Tx status ", "Rx status ", "get_registers ", "set_registers ", "Stop submitting intr, status "] {
        if let Some(rest) = msg.strip_prefix(p) {
            let code = parse_code(rest)?;
            return (code == -71 || code == -110 || code == -32 || code == -19)
                .then_some(EventKind::UsbProtocolError { code });
        }
    }
    if (msg.starts_with("Failed to read ") || msg.starts_with("Failed to write ")) && msg.contains(" bytes at ") {
        let code = parse_code(msg.rsplit(' ').next()?)?;
        return Some(EventKind::UsbProtocolError { code });
    }
    if msg == "Tx timeout" || (msg.starts_with("NETDEV WATCHDOG") && msg.contains("timed out")) {
        return Some(EventKind::TxTimeout);
    }
    if msg.starts_with("NIC Link is Down") || msg == "network connection: disconnected" {
        return Some(EventKind::LinkDown);
    }
    if msg.starts_with("NIC Link is Up") || msg == "network connection: connected" {
        return Some(EventKind::LinkUp);
    }
    if let Some(v) = msg.strip_prefix("Unknown version ") {
        return Some(EventKind::UnknownChipVersion { version: v.trim().to_string() });
    }
    if (msg.starts_with("new ") || msg.starts_with("reset ")) && msg.contains(" USB device number ") {
        let rest = msg.split_once(' ')?.1;
        let speed = rest.split(" USB device number ").next()?.to_string();
        return Some(EventKind::UsbEnumerated { speed });
    }
    None
}

/// Parses a whole log (dmesg text or kmsg records) into events.
pub fn parse_log(text: &str) -> Vec<KernelEvent> {
    text.lines().filter_map(parse_line).collect()
}

/// Reads the live kernel log: `/dev/kmsg` without blocking, else `dmesg`.
/// Returns (text in dmesg form, source) or why it could not be read.
pub fn read_live() -> Result<(String, String), String> {
    match read_kmsg() {
        Ok(t) => Ok((t, "/dev/kmsg".into())),
        Err(kmsg_err) => match crate::read::commands::run(&["dmesg".to_string()]) {
            Some(t) => Ok((t, "dmesg".into())),
            None => Err(format!(
                "/dev/kmsg: {kmsg_err}; dmesg failed too (reading the kernel log needs root or CAP_SYSLOG when kernel.dmesg_restrict=1)"
            )),
        },
    }
}

/// Reads every record from `/dev/kmsg` (one `read()` per record, EAGAIN at the end, EPIPE
/// when records were overwritten) and renders them as `[secs] text` lines.
fn read_kmsg() -> Result<String, String> {
    let mut f =
        OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK).open("/dev/kmsg").map_err(|e| e.to_string())?;
    let mut out = String::new();
    let mut buf = vec![0u8; 8192];
    for _ in 0..1_000_000 {
        match f.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                let rec = String::from_utf8_lossy(&buf[..n]);
                let first = rec.lines().next().unwrap_or("");
                if let Some((meta, text)) = first.split_once(';') {
                    let usec: u64 = meta.split(',').nth(2).and_then(|u| u.parse().ok()).unwrap_or(0);
                    out.push_str(&format!("[{:5}.{:06}] {}\n", usec / 1_000_000, usec % 1_000_000, text));
                }
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => break,
            Err(e) if e.raw_os_error() == Some(libc::EPIPE) => continue,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => return Err(e.to_string()),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn firmware_and_protocol_errors() {
        let e = parse_line(
            "[    5.101010] r8152 2-1:1.0: Direct firmware load for rtl_nic/rtl8156b-2.fw failed with error -2",
        )
        .unwrap();
        assert_eq!(e.kind, EventKind::FirmwareLoadFailed { file: "rtl_nic/rtl8156b-2.fw".into() });
        assert_eq!((e.driver.as_str(), e.device.as_str(), e.ifname.as_deref()), ("r8152", "2-1:1.0", None));
        let e = parse_line("[307241.049964] r8152 2-1:1.0 eth2: Tx status -71").unwrap();
        assert_eq!(e.kind, EventKind::UsbProtocolError { code: -71 });
        assert_eq!(e.ifname.as_deref(), Some("eth2"));
        let e = parse_line("[  812.000001] usb 2-1: Failed to read 4 bytes at 0xe610/0x0100 (-71)").unwrap();
        assert_eq!((e.kind, e.device.as_str()), (EventKind::UsbProtocolError { code: -71 }, "2-1"));
        let e = parse_line("[1741685.032519] r8152 3-1.2:1.0 eth4: get_registers -71").unwrap();
        assert_eq!(e.kind, EventKind::UsbProtocolError { code: -71 });
    }

    #[test]
    fn kmsg_records_and_misc() {
        let e = parse_line("4,1201,307241049964,-;r8152 2-1:1.0 eth2: Tx status -71").unwrap();
        assert_eq!(e.device, "2-1:1.0");
        assert!(parse_line(" SUBSYSTEM=usb").is_none());
        assert!(parse_line(" DEVICE=+usb:2-1:1.0").is_none());
        let e = parse_line("[58437.485179] igc 0000:13:00.0 eth1: NIC Link is Down").unwrap();
        assert_eq!(e.kind, EventKind::LinkDown);
        let e = parse_line(
            "[58440.469028] igc 0000:13:00.0 eth1: NIC Link is Up 2500 Mbps Full Duplex, Flow Control: RX/TX",
        )
        .unwrap();
        assert_eq!(e.kind, EventKind::LinkUp);
        let e = parse_line("[ 1342.926119] usb 1-10: new high-speed USB device number 3 using xhci_hcd").unwrap();
        assert_eq!(e.kind, EventKind::UsbEnumerated { speed: "high-speed".into() });
        let e = parse_line("[ 1344.068484] r8152 1-10:2.0: Unknown version 0x7410").unwrap();
        assert_eq!(e.kind, EventKind::UnknownChipVersion { version: "0x7410".into() });
        let e = parse_line("[ 3175.006183] r8152 2-1:1.0: load rtl8156b-2 v3 10/20/23 successfully").unwrap();
        assert_eq!(e.kind, EventKind::FirmwareLoaded { name: "rtl8156b-2 v3 10/20/23".into() });
        let e = parse_line("[ 9.1] r8152 2-1:1.0 eth0: NETDEV WATCHDOG: CPU: 3: transmit queue 0 timed out 5008 ms")
            .unwrap();
        assert_eq!(e.kind, EventKind::TxTimeout);
        let e = parse_line("[ 9.1] NETDEV WATCHDOG: eth0 (r8152): transmit queue 0 timed out").unwrap();
        assert_eq!((e.kind, e.ifname.as_deref()), (EventKind::TxTimeout, Some("eth0")));
        assert!(parse_line("[ 1.0] random line without colon").is_none());
        assert!(parse_line("").is_none());
        assert!(parse_line("[").is_none());
    }

    #[test]
    fn timestamps_of_dmesg_and_kmsg_lines() {
        assert_eq!(timestamp_us("[  123.456789] igc 0000:02:00.0 eth1: NIC Link is Down"), Some(123_456_789));
        assert_eq!(timestamp_us("<6>[    5.5] usb 2-1: reset"), Some(5_500_000));
        assert_eq!(timestamp_us("6,1201,307241049964,-;usb 2-1: reset"), Some(307_241_049_964));
        assert_eq!(timestamp_us("usb 2-1: reset SuperSpeed USB device"), None);
        assert_eq!(timestamp_us("[garbage] x"), None);
        let e = parse_line("6,1201,307241049964,-;igc 0000:02:00.0 eth1: NIC Link is Down").unwrap();
        assert_eq!(e.at_us, Some(307_241_049_964));
    }
}
