//! Host-wide facts from procfs and sysfs: kernel release, online CPUs, the sysctls the rules
//! look at, softnet_stat, and which USB drivers are registered.

use crate::root::Root;
use crate::snapshot::{HostSnapshot, SoftnetRow};

/// Sysctls shown in the report and used by the rules (dotted names).
pub const SYSCTLS: &[&str] = &[
    "net.core.rmem_max",
    "net.core.wmem_max",
    "net.core.rmem_default",
    "net.core.wmem_default",
    "net.core.netdev_max_backlog",
    "net.core.netdev_budget",
    "net.core.netdev_budget_usecs",
    "net.core.rps_sock_flow_entries",
    "net.ipv4.tcp_rmem",
    "net.ipv4.tcp_wmem",
    "net.ipv4.tcp_congestion_control",
    "net.ipv4.tcp_timestamps",
];

/// `net.core.rmem_max` → `proc/sys/net/core/rmem_max`.
pub fn sysctl_path(name: &str) -> String {
    format!("proc/sys/{}", name.replace('.', "/"))
}

/// Reads the host facts (everything except the kernel log, which the caller adds).
pub fn read_host(root: &Root) -> HostSnapshot {
    let mut h = HostSnapshot {
        kernel_release: root.opt("proc/sys/kernel/osrelease"),
        cpus_online: root.opt("sys/devices/system/cpu/online").map(|s| parse_cpu_list(&s)).unwrap_or_default(),
        usb_drivers: root.list("sys/bus/usb/drivers"),
        ..HostSnapshot::default()
    };
    for name in SYSCTLS {
        if let Some(v) = root.opt(sysctl_path(name)) {
            // tcp_rmem is tab separated; normalise to single spaces.
            let v = v.split_whitespace().collect::<Vec<_>>().join(" ");
            h.sysctls.insert((*name).to_string(), v);
        }
    }
    if let Some(s) = root.opt("proc/net/softnet_stat") {
        h.softnet = parse_softnet(&s);
    }
    h
}

/// Parses a CPU list such as `0-3,5,7-8`. Garbage parts are skipped.
pub fn parse_cpu_list(s: &str) -> Vec<u32> {
    let mut out = Vec::new();
    for part in s.trim().split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                if let (Ok(a), Ok(b)) = (a.parse::<u32>(), b.parse::<u32>())
                    && b >= a
                    && b - a < 65536
                {
                    out.extend(a..=b);
                }
            }
            None => {
                if let Ok(a) = part.parse() {
                    out.push(a);
                }
            }
        }
    }
    out
}

/// Parses `/proc/net/softnet_stat` (hex words; columns 0 processed, 1 dropped, 2 time_squeeze).
pub fn parse_softnet(s: &str) -> Vec<SoftnetRow> {
    s.lines()
        .filter_map(|l| {
            let w: Vec<u64> = l.split_whitespace().map(|x| u64::from_str_radix(x, 16).ok()).collect::<Option<_>>()?;
            Some(SoftnetRow { processed: *w.first()?, dropped: *w.get(1)?, time_squeeze: *w.get(2)? })
        })
        .collect()
}

/// The RPS mask that covers `cpus`: hex, comma between 32-bit words, as `rps_cpus` prints it.
pub fn cpu_mask(cpus: &[u32]) -> String {
    let max = cpus.iter().copied().max().unwrap_or(0);
    let words = (max / 32 + 1) as usize;
    let mut w = vec![0u32; words];
    for &c in cpus {
        w[(c / 32) as usize] |= 1 << (c % 32);
    }
    let mut parts: Vec<String> = Vec::new();
    for (i, word) in w.iter().rev().enumerate() {
        if i == 0 {
            parts.push(format!("{word:x}"));
        } else {
            parts.push(format!("{word:08x}"));
        }
    }
    parts.join(",")
}

/// True when an `rps_cpus` mask has no bit set (`0`, `00000000,00000000`).
pub fn mask_is_zero(mask: &str) -> bool {
    mask.chars().all(|c| c == '0' || c == ',' || c.is_whitespace())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists_and_masks() {
        assert_eq!(parse_cpu_list("0-3"), vec![0, 1, 2, 3]);
        assert_eq!(parse_cpu_list("0,2-3\n"), vec![0, 2, 3]);
        assert_eq!(parse_cpu_list("x-y,9"), vec![9]);
        assert_eq!(cpu_mask(&[0, 1]), "3");
        assert_eq!(cpu_mask(&[0, 1, 2, 3]), "f");
        assert_eq!(cpu_mask(&(0..40).collect::<Vec<_>>()), "ff,ffffffff");
        assert!(mask_is_zero("00000000,00000000"));
        assert!(!mask_is_zero("f"));
    }

    #[test]
    fn softnet() {
        let s = "0558881c 00000312 000001a0 00000000\n00000001 00000000 00000000 00000000\nzz\n";
        let r = parse_softnet(s);
        assert_eq!(r.len(), 2);
        assert_eq!((r[0].dropped, r[0].time_squeeze), (0x312, 0x1a0));
    }
}
