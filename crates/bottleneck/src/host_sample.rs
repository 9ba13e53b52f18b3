//! One sample of a host's counters, and the series the watcher collects during a test.
//!
//! A sample holds cumulative counters exactly as the kernel reports them; the rules take
//! deltas between samples. Everything is read below a base directory (`/` live, a fixture
//! tree in tests), and a file that is missing leaves its part empty instead of failing: a
//! container without `/proc/interrupts` still gets CPU and MIB figures.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::cost::WatchCost;
use crate::parse::{self, CpuTimes};
use wireperf_doctor::read::procfs::parse_softnet;
use wireperf_doctor::snapshot::SoftnetRow;

/// The MIB counters the rules read (`/proc/net/snmp` and `/proc/net/netstat`), kept by name so
/// a sample stays small enough to travel in the results exchange.
pub const MIB_KEYS: &[&str] = &[
    "Tcp.OutSegs",
    "Tcp.RetransSegs",
    "Udp.InDatagrams",
    "Udp.RcvbufErrors",
    "Udp.SndbufErrors",
    "Udp.InErrors",
    "TcpExt.TCPDSACKRecv",
    "TcpExt.TCPDSACKOfoRecv",
    "TcpExt.TCPDSACKOldSent",
    "TcpExt.TCPDSACKOfoSent",
    "TcpExt.TCPSpuriousRTOs",
    "TcpExt.TCPRcvQDrop",
    "TcpExt.TCPBacklogDrop",
    "TcpExt.TCPOFODrop",
    "TcpExt.PruneCalled",
    "TcpExt.TCPLostRetransmit",
    "TcpExt.TCPSACKReorder",
    "TcpExt.TCPTSReorder",
];

/// The NIC counters of `/sys/class/net/IF/statistics` the rules read.
pub const NIC_KEYS: &[&str] = &[
    "rx_packets",
    "tx_packets",
    "rx_dropped",
    "rx_missed_errors",
    "rx_fifo_errors",
    "rx_over_errors",
    "rx_crc_errors",
    "rx_errors",
    "tx_errors",
    "tx_dropped",
    "tx_fifo_errors",
];

/// Counters at one moment.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Sample {
    /// Seconds since the watch started.
    pub t: f64,
    /// Per-CPU times, by CPU number.
    pub cpus: Vec<CpuTimes>,
    /// `NET_RX` softirqs per CPU.
    pub net_rx: Vec<u64>,
    /// `NET_TX` softirqs per CPU.
    pub net_tx: Vec<u64>,
    /// Interrupts of the test's NIC per CPU (empty without a NIC or its vectors).
    pub nic_irqs: Vec<u64>,
    /// `/proc/net/softnet_stat` per CPU.
    pub softnet: Vec<SoftnetRow>,
    /// MIB counters ([`MIB_KEYS`]) of the network namespace read.
    pub mib: BTreeMap<String, u64>,
    /// NIC counters ([`NIC_KEYS`]) of the test's interface.
    pub nic: BTreeMap<String, u64>,
    /// The NIC driver's own drop and error counters (`ethtool -S`), where the driver has them;
    /// read in the first and the last sample only (a command per interval would cost more than
    /// the rest of the sample).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub driver: BTreeMap<String, u64>,
    /// This process's user and system CPU ticks (all its threads: the test's own CPU).
    pub own_cpu: Option<(u64, u64)>,
    /// ns this process's threads ran, per CPU, since the watch started (see `threads.rs`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub own_run_ns: Vec<u64>,
    /// ns this process's threads sat runnable waiting for each CPU, since the watch started
    /// (empty when the kernel does not report run-queue waits).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub own_wait_ns: Vec<u64>,
}

/// What one watch saw: samples at the interval rate plus the context to read them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Series {
    /// The interface the test used, when known.
    pub iface: Option<String>,
    /// Its `rps_cpus` masks per receive queue (all zero = RPS off).
    pub rps_cpus: Vec<String>,
    /// Clock ticks per second of the CPU times (`USER_HZ`, 100 on Linux).
    pub hz: u64,
    /// Samples in time order (the first is the baseline).
    pub samples: Vec<Sample>,
    /// Kernel log lines that appeared while the watch ran (bounded).
    pub kernel_lines: Vec<String>,
    /// The host's static facts about the interface, read once at the start.
    pub facts: HostFacts,
    /// What the watch itself cost this host (absent from an older wireperf's reply).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<WatchCost>,
}

/// What a host knows about its interface before the test: the ceilings a rate can hit and
/// the buffer settings a fix would change.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HostFacts {
    /// Negotiated line rate, Mbit/s.
    pub link_mbps: Option<u32>,
    /// Theoretical TCP goodput of the link (with the USB bus cap), bit/s.
    pub goodput_tcp_bps: Option<u64>,
    /// Theoretical UDP goodput, bit/s.
    pub goodput_udp_bps: Option<u64>,
    /// The goodput is the USB bus's, not the line rate's.
    pub usb_limited: bool,
    /// The root qdisc's rate limit on the interface's egress: kind and bit/s.
    pub shaper: Option<(String, u64)>,
    /// The interface's MTU, for the payload a shaper lets through (absent from an older
    /// wireperf's reply; 1500 is assumed then).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mtu: Option<u32>,
    /// Buffer sysctls (`net.ipv4.tcp_rmem`, `net.core.rmem_max`, …) of the namespace.
    pub sysctls: BTreeMap<String, String>,
}

fn read(base: &Path, rel: &str) -> Option<String> {
    std::fs::read_to_string(base.join(rel)).ok()
}

/// Reads one sample below `base` (normally `/`); `t` is the caller's clock.
pub fn read_sample(base: &Path, iface: Option<&str>, t: f64) -> Sample {
    let mut s = Sample { t, ..Default::default() };
    if let Some(text) = read(base, "proc/stat") {
        s.cpus = parse::parse_proc_stat(&text);
    }
    if let Some(text) = read(base, "proc/softirqs") {
        s.net_rx = parse::parse_softirq_row(&text, "NET_RX");
        s.net_tx = parse::parse_softirq_row(&text, "NET_TX");
    }
    if let Some(text) = read(base, "proc/net/softnet_stat") {
        s.softnet = parse_softnet(&text);
    }
    for f in ["proc/net/snmp", "proc/net/netstat"] {
        if let Some(text) = read(base, f) {
            parse::parse_mib_pairs(&text, MIB_KEYS, &mut s.mib);
        }
    }
    if let Some(i) = iface {
        if let Some(text) = read(base, "proc/interrupts") {
            s.nic_irqs = parse::parse_interrupts_for(&text, i);
        }
        for k in NIC_KEYS {
            if let Some(v) =
                read(base, &format!("sys/class/net/{i}/statistics/{k}")).and_then(|t| t.trim().parse().ok())
            {
                s.nic.insert((*k).to_string(), v);
            }
        }
    }
    s.own_cpu = read(base, "proc/self/stat").and_then(|t| parse::parse_pid_stat_cpu(&t));
    s
}

/// The drop and error counters of `iface`'s driver (what `ethtool -S` prints, read by ioctl in
/// this process: an `ethtool` child at each end of the test was most of `--why`'s CPU on a
/// one-core host); empty when the driver has none.
pub fn read_driver_counters(iface: &str) -> BTreeMap<String, u64> {
    wireperf_sys::ethtool::driver_stats(iface)
        .unwrap_or_default()
        .into_iter()
        .filter(|(name, _)| parse::is_drop_or_error_counter(name))
        .collect()
}

/// The `rps_cpus` masks of `iface`'s receive queues, in queue order.
pub fn read_rps(base: &Path, iface: &str) -> Vec<String> {
    let dir = base.join(format!("sys/class/net/{iface}/queues"));
    let mut queues: Vec<String> = std::fs::read_dir(&dir)
        .map(|d| d.filter_map(|e| e.ok()?.file_name().into_string().ok()).filter(|n| n.starts_with("rx-")).collect())
        .unwrap_or_default();
    queues.sort_by_key(|q| q.trim_start_matches("rx-").parse::<u32>().unwrap_or(u32::MAX));
    queues.iter().filter_map(|q| read(&dir, &format!("{q}/rps_cpus")).map(|m| m.trim().to_string())).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, rel: &str, text: &str) {
        let p = dir.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    #[test]
    fn reads_a_fixture_tree() {
        let d = tempfile::tempdir().unwrap();
        let b = d.path();
        write(b, "proc/stat", "cpu  1 1 1 1 1 1 1 1\ncpu0 10 0 5 80 5 0 30 0\ncpu1 1 0 1 90 0 0 0 0\n");
        write(b, "proc/softirqs", "   CPU0 CPU1\n NET_TX: 1 2\n NET_RX: 300 4\n");
        write(b, "proc/net/softnet_stat", "0000000a 00000002 00000003\n00000001 00000000 00000000\n");
        write(b, "proc/net/netstat", "TcpExt: TCPDSACKRecv TCPRcvQDrop\nTcpExt: 7 1\n");
        write(b, "proc/net/snmp", "Tcp: RetransSegs OutSegs\nTcp: 9 1000\n");
        write(b, "proc/interrupts", "  CPU0 CPU1\n 40: 5 0 PCI-MSI eth0-rx-0\n");
        write(b, "sys/class/net/eth0/statistics/rx_dropped", "4\n");
        write(b, "sys/class/net/eth0/queues/rx-1/rps_cpus", "0\n");
        write(b, "sys/class/net/eth0/queues/rx-0/rps_cpus", "3\n");
        write(b, "proc/self/stat", "1 (x) S 1 1 1 0 -1 0 0 0 0 0 12 34 0 0");
        let s = read_sample(b, Some("eth0"), 0.5);
        assert_eq!(s.cpus.len(), 2);
        assert_eq!(s.cpus[0].softirq, 30);
        assert_eq!(s.net_rx, vec![300, 4]);
        assert_eq!(s.softnet[0], SoftnetRow { processed: 10, dropped: 2, time_squeeze: 3 });
        assert_eq!(s.mib["TcpExt.TCPDSACKRecv"], 7);
        assert_eq!(s.mib["Tcp.OutSegs"], 1000);
        assert_eq!(s.nic_irqs, vec![5, 0]);
        assert_eq!(s.nic["rx_dropped"], 4);
        assert_eq!(s.own_cpu, Some((12, 34)));
        assert_eq!(read_rps(b, "eth0"), vec!["3".to_string(), "0".to_string()]);
    }

    #[test]
    fn an_empty_root_gives_an_empty_sample() {
        let d = tempfile::tempdir().unwrap();
        let s = read_sample(d.path(), Some("eth0"), 0.0);
        assert!(s.cpus.is_empty() && s.mib.is_empty() && s.nic.is_empty() && s.own_cpu.is_none());
    }
}
