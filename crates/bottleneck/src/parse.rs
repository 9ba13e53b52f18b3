//! Pure parsers for the counters the watcher samples: `/proc/stat`, `/proc/softirqs`,
//! `/proc/interrupts`, the MIB tables of `/proc/net/snmp` and `/proc/net/netstat`, and
//! `/proc/self/stat`. Each takes the file's text, so fixtures stand in for a live host.
//!
//! Why hand-written: the formats are a header line plus counters, and the watcher needs only a
//! few fields from each; a malformed line is skipped, never a panic.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Cumulative time of one CPU in clock ticks (`USER_HZ`), from a `cpuN` line of `/proc/stat`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuTimes {
    /// `user` + `nice`.
    pub user: u64,
    /// `system`.
    pub system: u64,
    /// `idle` + `iowait`.
    pub idle: u64,
    /// Hard interrupts.
    pub irq: u64,
    /// Soft interrupts (where the network stack's receive work runs).
    pub softirq: u64,
    /// Time stolen by the hypervisor.
    pub steal: u64,
}

impl CpuTimes {
    /// All ticks.
    pub fn total(&self) -> u64 {
        self.user + self.system + self.idle + self.irq + self.softirq + self.steal
    }

    /// Ticks not idle.
    pub fn busy(&self) -> u64 {
        self.total() - self.idle
    }

    /// `self - earlier`, saturating (a CPU that went offline restarts its counters).
    pub fn since(&self, earlier: &CpuTimes) -> CpuTimes {
        CpuTimes {
            user: self.user.saturating_sub(earlier.user),
            system: self.system.saturating_sub(earlier.system),
            idle: self.idle.saturating_sub(earlier.idle),
            irq: self.irq.saturating_sub(earlier.irq),
            softirq: self.softirq.saturating_sub(earlier.softirq),
            steal: self.steal.saturating_sub(earlier.steal),
        }
    }
}

/// Per-CPU times from `/proc/stat`, indexed by CPU number (missing CPUs are zero).
pub fn parse_proc_stat(text: &str) -> Vec<CpuTimes> {
    let mut out: Vec<CpuTimes> = Vec::new();
    for line in text.lines() {
        let mut it = line.split_whitespace();
        let Some(name) = it.next() else { continue };
        let Some(id) = name.strip_prefix("cpu").and_then(|n| n.parse::<usize>().ok()) else { continue };
        let v: Vec<u64> = it.map_while(|w| w.parse().ok()).collect();
        if v.len() < 7 || id > 4096 {
            continue;
        }
        let at = |i: usize| v.get(i).copied().unwrap_or(0);
        if out.len() <= id {
            out.resize(id + 1, CpuTimes::default());
        }
        out[id] = CpuTimes {
            user: at(0) + at(1),
            system: at(2),
            idle: at(3) + at(4),
            irq: at(5),
            softirq: at(6),
            steal: at(7),
        };
    }
    out
}

/// One row of `/proc/softirqs` (e.g. `NET_RX`), per CPU.
pub fn parse_softirq_row(text: &str, row: &str) -> Vec<u64> {
    text.lines()
        .find_map(|l| {
            let (name, rest) = l.split_once(':')?;
            (name.trim() == row).then(|| rest.split_whitespace().map_while(|w| w.parse().ok()).collect())
        })
        .unwrap_or_default()
}

/// Per-CPU interrupt counts summed over the `/proc/interrupts` lines whose device names
/// mention `iface` (drivers name their queue vectors `eth0-rx-0`, `eth0-TxRx-1`, …).
pub fn parse_interrupts_for(text: &str, iface: &str) -> Vec<u64> {
    let mut lines = text.lines();
    let ncpu = lines.next().map_or(0, |h| h.split_whitespace().filter(|w| w.starts_with("CPU")).count());
    let mut sum = vec![0u64; ncpu];
    for line in lines {
        let Some((_, rest)) = line.split_once(':') else { continue };
        let words: Vec<&str> = rest.split_whitespace().collect();
        let names = words.get(ncpu..).unwrap_or(&[]);
        let mentions = names.iter().any(|w| w.split(['-', '@', ',']).any(|part| part == iface));
        if !mentions {
            continue;
        }
        for (i, w) in words.iter().take(ncpu).enumerate() {
            sum[i] += w.parse::<u64>().unwrap_or(0);
        }
    }
    sum
}

/// The MIB tables of `/proc/net/snmp` or `/proc/net/netstat` (pairs of a header line and a
/// value line with the same prefix) as `"Prefix.Name" → value`, keeping only `wanted` keys.
pub fn parse_mib_pairs(text: &str, wanted: &[&str], out: &mut BTreeMap<String, u64>) {
    let lines: Vec<&str> = text.lines().collect();
    for pair in lines.chunks(2) {
        let [head, vals] = pair else { continue };
        let (Some((p1, names)), Some((p2, values))) = (head.split_once(':'), vals.split_once(':')) else { continue };
        if p1 != p2 {
            continue;
        }
        for (n, v) in names.split_whitespace().zip(values.split_whitespace()) {
            let key = format!("{p1}.{n}");
            if wanted.contains(&key.as_str())
                && let Ok(v) = v.parse::<u64>()
            {
                out.insert(key, v);
            }
        }
    }
}

/// `utime` and `stime` (ticks) from a `/proc/PID/stat` line. The command name may hold spaces
/// and parentheses, so fields are counted after the last `)`.
pub fn parse_pid_stat_cpu(text: &str) -> Option<(u64, u64)> {
    let rest = &text[text.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    // After ")": state(0) ppid(1) … utime is field 14 of the line, index 11 here.
    Some((f.get(11)?.parse().ok()?, f.get(12)?.parse().ok()?))
}

/// Words that mark a NIC driver counter (`ethtool -S`) as a drop or an error: only those are
/// kept, so a sample stays small (a driver may list hundreds of per-queue packet counters).
const DRIVER_COUNTER_WORDS: &[&str] = &["drop", "miss", "err", "fifo", "over", "discard", "crc", "timeout", "fail"];

/// The drop and error counters of `ethtool -S IF` (`     name: value` lines).
pub fn parse_ethtool_stats(text: &str) -> BTreeMap<String, u64> {
    text.lines()
        .filter_map(|l| {
            let (name, value) = l.split_once(':')?;
            let name = name.trim();
            Some((name.to_string(), value.trim().parse().ok()?)).filter(|_| is_drop_or_error_counter(name))
        })
        .collect()
}

/// Whether a driver counter named `name` counts drops or errors (the rules read only those).
pub fn is_drop_or_error_counter(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    !name.contains(' ') && DRIVER_COUNTER_WORDS.iter().any(|w| lower.contains(w))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ethtool_stats_keep_drop_and_error_counters() {
        let s = "NIC statistics:\n     peer_ifindex: 2\n     rx_queue_0_xdp_packets: 7\n     rx_queue_0_drops: 3\n     rx_missed_errors: 9\n     tx_timeout: 1\n     rx_crc_errors: x\n";
        let m = parse_ethtool_stats(s);
        assert_eq!(m.len(), 3, "{m:?}");
        assert_eq!((m["rx_queue_0_drops"], m["rx_missed_errors"], m["tx_timeout"]), (3, 9, 1));
        assert!(parse_ethtool_stats("no stats available\n").is_empty());
    }

    #[test]
    fn proc_stat_per_cpu() {
        let s = "cpu  10 0 10 100 0 0 0 0 0 0\ncpu0 87123 1305 41163 11526 233 0 11636 1516 0 0\ncpu1 1 2 3 4 5 6 7 8 0 0\nintr 5 0\n";
        let c = parse_proc_stat(s);
        assert_eq!(c.len(), 2);
        assert_eq!(c[0].user, 88428);
        assert_eq!(c[0].softirq, 11636);
        assert_eq!(c[0].idle, 11759);
        assert_eq!(c[1], CpuTimes { user: 3, system: 3, idle: 9, irq: 6, softirq: 7, steal: 8 });
        assert_eq!(c[1].busy(), 27);
    }

    #[test]
    fn softirqs_net_rx() {
        let s = "                    CPU0       CPU1\n          HI:          0          0\n      NET_TX:      26391      47637\n      NET_RX:   18289134   10816928\n";
        assert_eq!(parse_softirq_row(s, "NET_RX"), vec![18289134, 10816928]);
        assert_eq!(parse_softirq_row(s, "NET_TX"), vec![26391, 47637]);
        assert!(parse_softirq_row(s, "BLOCK").is_empty());
    }

    #[test]
    fn interrupts_of_one_nic() {
        let s = "           CPU0       CPU1\n 36:          0      97949 PCI-MSIX-0000:00:02.0   1-edge      virtio1-req.0\n 40:        5      7 IR-PCI-MSI 1-edge eth0-rx-0\n 41:        1      2 IR-PCI-MSI 2-edge eth0-tx-0\n 42:        9      9 IR-PCI-MSI 2-edge eth10-tx-0\nNMI:  0 0 Non-maskable interrupts\n";
        assert_eq!(parse_interrupts_for(s, "eth0"), vec![6, 9]);
        assert_eq!(parse_interrupts_for(s, "wlan0"), vec![0, 0]);
    }

    #[test]
    fn mib_pairs_keep_wanted_keys() {
        let s = "Udp: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors\nUdp: 10 0 3 20 3\nTcp: RtoAlgorithm RetransSegs\nTcp: 1 44\n";
        let mut m = BTreeMap::new();
        parse_mib_pairs(s, &["Udp.RcvbufErrors", "Tcp.RetransSegs"], &mut m);
        assert_eq!(m.get("Udp.RcvbufErrors"), Some(&3));
        assert_eq!(m.get("Tcp.RetransSegs"), Some(&44));
        assert_eq!(m.len(), 2);
    }

    #[test]
    fn pid_stat_with_spaces_in_name() {
        let s = "1234 (wire perf) S 1 1234 1234 0 -1 4194560 100 0 0 0 250 75 0 0 20 0 3 0 1 0 0";
        assert_eq!(parse_pid_stat_cpu(s), Some((250, 75)));
        assert_eq!(parse_pid_stat_cpu("garbage"), None);
    }
}
