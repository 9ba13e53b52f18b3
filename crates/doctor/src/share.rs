//! What a wireperf server tells its client about its own host: the doctor's findings and the
//! link facts of the interface that carried the test, in a shape that crosses the wire.
//!
//! The far host is where the cause sat in most field reports (a Pi's RTL8156 on `cdc_ncm`, a
//! laptop's dongle at 2500/half), and the client cannot read it. [`Finding`] holds `&'static
//! str` ids and only serialises; this is the owned, round-tripping copy a client reads back,
//! and what it prints names the host ("on the server: …").

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

use crate::read::KernelLogSource;
use crate::read::procfs::mask_is_zero;
use crate::rules::{Finding, Severity};
use crate::snapshot::{BusKind, Duplex, HostSnapshot, LinkSnapshot};
use crate::{InspectOptions, InterfaceReport};

/// Where a server reads the facts it shares (`--host-root`, `--host-kernel-log`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ShareSource {
    /// A fixture tree read instead of `/` (as `doctor --root`); its non-loopback interfaces
    /// stand for the test's interface.
    pub root: Option<PathBuf>,
    /// A kernel log file (as `doctor --kernel-log`).
    pub kernel_log: Option<PathBuf>,
}

/// The far host's static configuration as its doctor saw it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SharedHost {
    /// The interface the facts are of.
    pub iface: String,
    /// Read from a fixture tree (`--host-root`) rather than the live host.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub from_fixture: bool,
    /// Its link facts.
    pub link: SharedLink,
    /// The doctor's findings, worst first.
    pub findings: Vec<SharedFinding>,
    /// Network-driver kernel-log lines that name the interface or its device (USB resets,
    /// link down/up), as logged.
    #[serde(default)]
    pub kernel_events: Vec<String>,
    /// The largest TCP receive buffer autotuning may grow to (`net.ipv4.tcp_rmem`'s third
    /// value), bytes: what a receiver on this host can hold in flight.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tcp_rmem_max: Option<u64>,
    /// The whole `net.ipv4.tcp_rmem` triple (min, default, max), so a fix for this host keeps
    /// its min and default valid ([`crate::remedy::receive_buffer`]). Absent from an older
    /// wireperf's reply.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tcp_rmem: Option<[u64; 3]>,
}

/// The link facts a reader compares across the two hosts.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SharedLink {
    /// Bound driver.
    pub driver: Option<String>,
    /// Negotiated speed, Mbit/s.
    pub speed_mbps: Option<u32>,
    /// `full`, `half` or `unknown`.
    pub duplex: Option<String>,
    /// Current MTU.
    pub mtu: Option<u32>,
    /// `pci`, `usb`, `other` or `virtual`.
    pub bus: Option<String>,
    /// The USB link's speed, Mbit/s (480 = a USB 2 port).
    pub usb_speed_mbps: Option<u32>,
    /// The chip, when identified.
    pub chip: Option<String>,
    /// Receive queues, and whether RPS is off on every one.
    pub rx_queues: u32,
    /// RPS off on every receive queue.
    pub rps_off: Option<bool>,
    /// RX ring: current and maximum.
    pub rx_ring: Option<(u32, u32)>,
    /// Firmware version as the driver reports it.
    pub firmware: Option<String>,
}

/// One finding of the far host's doctor.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SharedFinding {
    /// The doctor's stable rule id.
    pub id: String,
    /// `info`, `warn` or `crit`.
    pub severity: String,
    /// One sentence.
    pub summary: String,
    /// The facts that triggered it.
    pub evidence: Vec<String>,
    /// Commands that fix it, to run on that host.
    pub fix: Vec<String>,
    /// How to check that the fix worked.
    pub verify: Vec<String>,
}

impl SharedFinding {
    /// A warning or worse (what a verdict may cite).
    pub fn serious(&self) -> bool {
        self.severity != "info"
    }
}

fn severity(s: Severity) -> &'static str {
    match s {
        Severity::Info => "info",
        Severity::Warn => "warn",
        Severity::Crit => "crit",
    }
}

impl From<&Finding> for SharedFinding {
    fn from(f: &Finding) -> Self {
        SharedFinding {
            id: f.id.to_string(),
            severity: severity(f.severity).to_string(),
            summary: f.summary.clone(),
            evidence: f.evidence.clone(),
            fix: f.fix.commands.clone(),
            verify: f.fix.verify.clone(),
        }
    }
}

impl From<&LinkSnapshot> for SharedLink {
    fn from(l: &LinkSnapshot) -> Self {
        let rps: Vec<&String> = l.queues.rps_cpus.values().collect();
        SharedLink {
            driver: l.driver.clone(),
            speed_mbps: l.speed_mbps,
            duplex: l.duplex.map(|d| {
                match d {
                    Duplex::Full => "full",
                    Duplex::Half => "half",
                    Duplex::Unknown => "unknown",
                }
                .to_string()
            }),
            mtu: l.mtu,
            bus: l.bus.map(|b| {
                match b {
                    BusKind::Pci => "pci",
                    BusKind::Usb => "usb",
                    BusKind::Other => "other",
                    BusKind::Virtual => "virtual",
                }
                .to_string()
            }),
            usb_speed_mbps: l.usb.as_ref().and_then(|u| u.link_speed_mbps),
            chip: l.chip.as_ref().map(|c| c.name.clone()),
            rx_queues: l.queues.rx,
            rps_off: (!rps.is_empty()).then(|| rps.iter().all(|m| mask_is_zero(m))),
            rx_ring: l.rings.as_ref().and_then(|r| Some((r.rx?, r.rx_max?))),
            firmware: l.firmware_version.clone().filter(|f| !f.is_empty()),
        }
    }
}

impl SharedHost {
    /// The shared copy of one interface's doctor report.
    pub fn from_report(r: &InterfaceReport, host: &HostSnapshot, from_fixture: bool) -> SharedHost {
        SharedHost {
            tcp_rmem_max: host.sysctl_ints("net.ipv4.tcp_rmem").and_then(|v| v.get(2).copied()),
            tcp_rmem: host.sysctls.get("net.ipv4.tcp_rmem").and_then(|v| crate::remedy::triple(v)),
            iface: r.link.name.clone(),
            from_fixture,
            link: SharedLink::from(&r.link),
            findings: r.findings.iter().map(SharedFinding::from).collect(),
            kernel_events: r.link.kernel_events.iter().map(|e| e.line.clone()).collect(),
        }
    }

    /// The serious findings' ids.
    pub fn serious_ids(&self) -> Vec<&str> {
        self.findings.iter().filter(|f| f.serious()).map(|f| f.id.as_str()).collect()
    }
}

/// Runs the doctor for a client: on `iface` of the live host, or on the fixture tree of
/// `source` (its first non-loopback interface stands for the test's). `None` when there is
/// nothing to read (no interface, or the doctor failed: the client then says the far host's
/// configuration was not seen).
///
/// On the live host the kernel-log lines sent are those logged since `since_us` (the printk
/// clock, µs: when the test's watch started), so the client reads what happened during its
/// test; the findings still weigh the whole log (a link that flapped an hour ago is a
/// finding). A fixture's log is from another boot and is sent whole.
pub fn inspect_for_peer(iface: Option<&str>, source: &ShareSource, since_us: Option<u64>) -> Option<SharedHost> {
    inspect_for_peer_and_link(iface, source, since_us).0
}

/// [`inspect_for_peer`], also handing back the live interface's link as this inspection read
/// it, so a server's watch takes its facts from the same `ip`, `tc` and `ethtool` children
/// instead of running them a second time (on a one-core host each child is a millisecond the
/// test does not get). The link is `None` for a fixture root: the watch's facts are then the
/// live host's, read apart.
pub fn inspect_for_peer_and_link(
    iface: Option<&str>,
    source: &ShareSource,
    since_us: Option<u64>,
) -> (Option<SharedHost>, Option<LinkSnapshot>) {
    let kernel_log = match (&source.kernel_log, &source.root) {
        (Some(f), _) => KernelLogSource::File(f.clone()),
        (None, Some(_)) => KernelLogSource::Auto,
        // Live: read the log (events that name the interface); a host without access to it
        // says so in the doctor's not-checked list, which is not shared.
        (None, None) => KernelLogSource::Auto,
    };
    let interfaces = match (&source.root, iface) {
        (Some(_), _) => Vec::new(),
        (None, Some(i)) => vec![i.to_string()],
        (None, None) => return (None, None),
    };
    let opts = InspectOptions { root: source.root.clone(), interfaces, kernel_log, ..Default::default() };
    let Ok(report) = crate::inspect(&opts) else { return (None, None) };
    let live_link = source
        .root
        .is_none()
        .then(|| report.interfaces.iter().find(|i| Some(i.link.name.as_str()) == iface).map(|i| i.link.clone()))
        .flatten();
    let Some(r) = report.interfaces.iter().find(|i| i.link.name != "lo") else { return (None, live_link) };
    let mut host = SharedHost::from_report(r, &report.host, source.root.is_some());
    if let Some(since) = since_us.filter(|_| source.root.is_none() && source.kernel_log.is_none()) {
        // printk's clock and CLOCK_MONOTONIC agree to well under a second (checked on this
        // host by writing to /dev/kmsg: 0.1 s); a second's margin keeps the test's own start.
        host.kernel_events = events_since(&r.link.kernel_events, since.saturating_sub(1_000_000));
    }
    (Some(host), live_link)
}

/// Now on the clock the kernel log's stamps use (`CLOCK_MONOTONIC`, µs): what to pass as
/// [`inspect_for_peer`]'s `since_us` when a test starts.
pub fn log_clock_now_us() -> Option<u64> {
    u64::try_from(wireperf_sys::clock::monotonic().as_micros()).ok()
}

/// The lines of the events logged at or after `since_us`; a line without a stamp cannot be
/// placed and is left out.
fn events_since(events: &[crate::read::kernel_log::KernelEvent], since_us: u64) -> Vec<String> {
    events.iter().filter(|e| e.at_us.is_some_and(|t| t >= since_us)).map(|e| e.line.clone()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::Fix;

    #[test]
    fn a_finding_round_trips_as_the_client_reads_it() {
        let f = Finding {
            id: "generic-usb-driver",
            severity: Severity::Crit,
            summary: "cdc_ncm drives this RTL8156B".into(),
            evidence: vec!["driver cdc_ncm".into()],
            fix: Fix {
                commands: vec!["modprobe r8152".into()],
                verify: vec!["ethtool -i eth1".into()],
                ..Default::default()
            },
            apply: Vec::new(),
        };
        let host = SharedHost {
            iface: "eth1".into(),
            from_fixture: true,
            link: SharedLink { driver: Some("cdc_ncm".into()), duplex: Some("half".into()), ..Default::default() },
            findings: vec![SharedFinding::from(&f)],
            kernel_events: vec!["usb 2-1: reset SuperSpeed USB device".into()],
            tcp_rmem_max: Some(6_291_456),
            tcp_rmem: Some([4096, 131_072, 6_291_456]),
        };
        let back: SharedHost = serde_json::from_value(serde_json::to_value(&host).unwrap()).unwrap();
        assert_eq!(back, host);
        assert_eq!(back.findings[0].severity, "crit");
        assert_eq!(back.findings[0].fix, ["modprobe r8152"]);
        assert_eq!(back.serious_ids(), ["generic-usb-driver"]);
    }

    #[test]
    fn the_tcp_rmem_triple_is_shared_and_an_older_reply_without_it_still_reads() {
        let mut host = HostSnapshot::default();
        host.sysctls.insert("net.ipv4.tcp_rmem".into(), "4096 8192 8192".into());
        let r = InterfaceReport {
            link: LinkSnapshot::default(),
            findings: Vec::new(),
            not_checked: Vec::new(),
            passed: Vec::new(),
        };
        let shared = SharedHost::from_report(&r, &host, false);
        assert_eq!((shared.tcp_rmem, shared.tcp_rmem_max), (Some([4096, 8192, 8192]), Some(8192)));
        // An older server's reply: the same document without the triple.
        let mut old = serde_json::to_value(&shared).unwrap();
        old.as_object_mut().unwrap().remove("tcp_rmem");
        let back: SharedHost = serde_json::from_value(old).unwrap();
        assert_eq!((back.tcp_rmem, back.tcp_rmem_max), (None, Some(8192)));
        assert!(serde_json::to_value(SharedHost::default()).unwrap().get("tcp_rmem").is_none());
    }

    #[test]
    fn only_the_events_of_the_test_are_sent() {
        use crate::read::kernel_log::parse_line;
        let events: Vec<_> = [
            "[  100.000000] igc 0000:02:00.0 eth1: NIC Link is Down",
            "[  250.500000] igc 0000:02:00.0 eth1: NIC Link is Down",
            "igc 0000:02:00.0 eth1: NIC Link is Down",
        ]
        .iter()
        .filter_map(|l| parse_line(l))
        .collect();
        assert_eq!(events.len(), 3);
        assert_eq!(events_since(&events, 250_000_000), ["igc 0000:02:00.0 eth1: NIC Link is Down"]);
        assert_eq!(events_since(&events, 0).len(), 2, "an unstamped line cannot be placed");
    }

    #[test]
    fn rps_is_off_only_when_every_queue_has_an_empty_mask() {
        let mut l = LinkSnapshot::default();
        assert_eq!(SharedLink::from(&l).rps_off, None, "no queue read: unknown");
        l.queues.rps_cpus.insert("rx-0".into(), "00000000,00000000".into());
        assert_eq!(SharedLink::from(&l).rps_off, Some(true));
        l.queues.rps_cpus.insert("rx-1".into(), "e".into());
        assert_eq!(SharedLink::from(&l).rps_off, Some(false));
    }
}
