//! One fix per cause: the only place the fix text and the `--apply` actions for a small
//! receive or send buffer, RPS off and a short txqueuelen are made.
//!
//! The doctor's rules (`rules/tuning.rs`), the two-ends check (`ends.rs`) and the bottleneck
//! finder's live rules all name these causes. Each used to write its own command, and they
//! drifted: one set a default above its own maximum, another raised `net.core.rmem_max`,
//! which autotuning never reads. Here a cause's values are computed once, kept valid
//! (min ≤ default ≤ max), and rendered the same way wherever they are printed or applied.

use crate::read::procfs::{cpu_mask, sysctl_path};
use crate::rules::Action;

/// One cause's fix on one host: what to run, what `--apply` (and the fix loop) does, how to persist it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Remedy {
    /// The cause's id as the doctor and the bottleneck finder name it: "receiver-window", "sender-buffer", "rps-off", "txqueuelen".
    pub cause: &'static str,
    /// One line, old → new, e.g. "net.ipv4.tcp_rmem 4096 8192 8192 → 4096 131072 6291456".
    pub change: String,
    /// Shell commands that make the change, with sudo (`sudo sysctl -w net.ipv4.tcp_rmem='4096 131072 6291456'`).
    pub commands: Vec<String>,
    /// The same change as the doctor's apply actions (`crate::rules::Action::WriteFile` with a root-relative path such as `proc/sys/net/ipv4/tcp_rmem` and tab-separated values for the triples, as `socket_buffers` does today).
    pub actions: Vec<Action>,
    /// How to make it permanent: the `/etc/sysctl.d/...conf` line, or the udev rule for an RPS mask.
    pub persist: Vec<String>,
}

/// The kernel's defaults (tcp_rmem "4096 131072 6291456", tcp_wmem "4096 16384 4194304").
pub const KERNEL_TCP_RMEM: [u64; 3] = [4096, 131_072, 6_291_456];
/// See [`KERNEL_TCP_RMEM`].
pub const KERNEL_TCP_WMEM: [u64; 3] = [4096, 16_384, 4_194_304];

/// The largest maximum a remedy sets, 64 MiB: enough for 10 Gbit/s over 25 ms, and a bound
/// on what one socket may pin in kernel memory when a path's RTT was misread.
const BUFFER_CAP: u64 = 64 << 20;
/// The minimum a remedy sets when the current one cannot be kept (the kernel's own).
const BUFFER_MIN: u64 = 4096;
/// Where the persist lines of the buffer sysctls go.
const SYSCTL_CONF: &str = "/etc/sysctl.d/60-wireperf.conf";

/// Bytes in flight at `rate_bps` over a round trip of `rtt_ms` (the bandwidth-delay
/// product); `None` unless both are known and positive. Every caller computes the `need` of
/// [`receive_buffer`] and [`send_buffer`] with it, so the same figures give the same fix.
pub fn in_flight(rate_bps: f64, rtt_ms: f64) -> Option<u64> {
    let ok = |v: f64| v.is_finite() && v > 0.0;
    (ok(rate_bps) && ok(rtt_ms)).then(|| (rate_bps / 8.0 * rtt_ms / 1e3) as u64)
}

/// Receive buffer (autotuning's tcp_rmem) able to hold `need_bytes` in flight (the measured rate × RTT; None when unknown). `current` is the host's tcp_rmem triple when known. None when the current maximum already holds it.
pub fn receive_buffer(current: Option<[u64; 3]>, need_bytes: Option<u64>) -> Option<Remedy> {
    buffer("receiver-window", "net.ipv4.tcp_rmem", KERNEL_TCP_RMEM, current, need_bytes)
}

/// Same for the send buffer (tcp_wmem, cause "sender-buffer").
pub fn send_buffer(current: Option<[u64; 3]>, need_bytes: Option<u64>) -> Option<Remedy> {
    buffer("sender-buffer", "net.ipv4.tcp_wmem", KERNEL_TCP_WMEM, current, need_bytes)
}

/// RPS over `cpus` for `iface`'s receive queue `queue` ("rx-0"); `old` is the current mask when known.
pub fn rps(iface: &str, queue: &str, old: Option<&str>, cpus: &[u32]) -> Remedy {
    let mask = cpu_mask(cpus);
    let attr = format!("queues/{queue}/rps_cpus");
    let path = format!("sys/class/net/{iface}/{attr}");
    Remedy {
        cause: "rps-off",
        change: format!("{iface} {queue} rps_cpus {} → {mask}", old.unwrap_or("unknown")),
        commands: vec![format!("echo {mask} | sudo tee /{path}")],
        persist: vec![udev_rule(iface, &attr, &mask)],
        actions: vec![Action::WriteFile { path, value: mask }],
    }
}

/// txqueuelen back to `want` (1000) from `old`.
pub fn txqueuelen(iface: &str, old: Option<u32>, want: u32) -> Remedy {
    let old = old.map_or("unknown".to_string(), |o| o.to_string());
    Remedy {
        cause: "txqueuelen",
        change: format!("{iface} txqueuelen {old} → {want}"),
        commands: vec![format!("sudo ip link set {iface} txqueuelen {want}")],
        actions: vec![Action::WriteFile {
            path: format!("sys/class/net/{iface}/tx_queue_len"),
            value: want.to_string(),
        }],
        persist: vec![udev_rule(iface, "tx_queue_len", &want.to_string())],
    }
}

/// A triple parsed from a sysctl's text ("4096\t131072\t6291456" or space separated).
pub fn triple(text: &str) -> Option<[u64; 3]> {
    let mut words = text.split_whitespace().map(|w| w.parse::<u64>().ok());
    let t = [words.next()??, words.next()??, words.next()??];
    words.next().is_none().then_some(t)
}

/// The remedy for one autotuning sysctl (`name`, whose kernel default is `kernel`). Only the
/// `tcp_*mem` triple changes: `net.core.rmem_max`/`wmem_max` cap only an explicit
/// `SO_RCVBUF`/`-w`, and autotuning grows past them.
fn buffer(
    cause: &'static str,
    name: &str,
    kernel: [u64; 3],
    current: Option<[u64; 3]>,
    need: Option<u64>,
) -> Option<Remedy> {
    let new = new_triple(kernel, current, need)?;
    let spaced = |t: [u64; 3]| format!("{} {} {}", t[0], t[1], t[2]);
    let old = current.map_or("unknown".to_string(), spaced);
    Some(Remedy {
        cause,
        change: format!("{name} {old} → {}", spaced(new)),
        commands: vec![format!("sudo sysctl -w {name}='{}'", spaced(new))],
        actions: vec![Action::WriteFile {
            path: sysctl_path(name),
            value: format!("{}\t{}\t{}", new[0], new[1], new[2]),
        }],
        persist: vec![format!("{name} = {}   # in {SYSCTL_CONF}", spaced(new))],
    })
}

/// The maximum a buffer needs for `need` bytes in flight: four times it (about half the
/// buffer holds data at the default `tcp_adv_win_scale`, and the window must also cover the
/// queue a full link builds), a power of two, at most [`BUFFER_CAP`], never below the kernel's.
fn wanted_max(kernel_max: u64, need: Option<u64>) -> u64 {
    let for_need = need.map_or(0, |n| n.saturating_mul(4).checked_next_power_of_two().unwrap_or(BUFFER_CAP));
    kernel_max.max(for_need.min(BUFFER_CAP))
}

/// The new (min, default, max), or `None` when the current maximum already holds the need
/// (or, with no need known, is at least the kernel's). An unknown `current` counts as the
/// kernel's min and default. The result is always valid: min ≤ default ≤ max, min ≥ 1.
fn new_triple(kernel: [u64; 3], current: Option<[u64; 3]>, need: Option<u64>) -> Option<[u64; 3]> {
    let wanted = wanted_max(kernel[2], need);
    if current.is_some_and(|c| c[2] >= wanted) {
        return None;
    }
    let [cur_min, cur_default, _] = current.unwrap_or(kernel);
    let default = cur_default.max(kernel[1]).min(wanted);
    // The kernel refuses a min of 0; a min above the default is what made the triple invalid.
    let min = if (1..=default).contains(&cur_min) { cur_min } else { BUFFER_MIN };
    Some([min, default, wanted])
}

/// A udev rule that sets `attr` of `iface` to `value` whenever the interface appears.
fn udev_rule(iface: &str, attr: &str, value: &str) -> String {
    format!("ACTION==\"add\", SUBSYSTEM==\"net\", KERNEL==\"{iface}\", ATTR{{{attr}}}=\"{value}\"")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rmem(current: [u64; 3], need: Option<u64>) -> Option<[u64; 3]> {
        receive_buffer(Some(current), need).and_then(|r| match &r.actions[..] {
            [Action::WriteFile { value, .. }] => triple(value),
            _ => None,
        })
    }

    #[test]
    fn a_tiny_receive_buffer_goes_back_to_the_kernel_default() {
        let r = receive_buffer(Some([4096, 8192, 8192]), None).expect("a remedy");
        assert_eq!(r.cause, "receiver-window");
        assert_eq!(r.change, "net.ipv4.tcp_rmem 4096 8192 8192 → 4096 131072 6291456");
        assert_eq!(r.commands, ["sudo sysctl -w net.ipv4.tcp_rmem='4096 131072 6291456'"]);
        assert_eq!(
            r.actions,
            [Action::WriteFile { path: "proc/sys/net/ipv4/tcp_rmem".into(), value: "4096\t131072\t6291456".into() }]
        );
        assert_eq!(r.persist, ["net.ipv4.tcp_rmem = 4096 131072 6291456   # in /etc/sysctl.d/60-wireperf.conf"]);
    }

    #[test]
    fn the_maximum_holds_four_times_the_need_up_to_64_mib() {
        // 1 Gbit/s × 40 ms = 5 MB: 20 MB → 32 MiB.
        assert_eq!(rmem(KERNEL_TCP_RMEM, Some(5_000_000)), Some([4096, 131_072, 33_554_432]));
        // 20 MB in flight: 80 MB → 128 MiB, capped at 64 MiB.
        assert_eq!(rmem(KERNEL_TCP_RMEM, Some(20_000_000)), Some([4096, 131_072, 67_108_864]));
        // A need that overflows is the cap too.
        assert_eq!(rmem([4096, 131_072, 8192], Some(u64::MAX)), Some([4096, 131_072, 67_108_864]));
        // A small need never lowers the kernel's maximum.
        assert_eq!(rmem([4096, 131_072, 65_536], Some(1000)), Some([4096, 131_072, 6_291_456]));
        let w = send_buffer(Some([4096, 16_384, 1 << 20]), Some(5_000_000)).expect("a remedy");
        assert_eq!(
            (w.cause, w.commands[0].as_str()),
            ("sender-buffer", "sudo sysctl -w net.ipv4.tcp_wmem='4096 16384 33554432'")
        );
    }

    #[test]
    fn nothing_to_fix_when_the_maximum_already_holds_it() {
        assert_eq!(receive_buffer(Some(KERNEL_TCP_RMEM), None), None);
        assert_eq!(send_buffer(Some(KERNEL_TCP_WMEM), None), None);
        assert_eq!(receive_buffer(Some([4096, 131_072, 33_554_432]), Some(5_000_000)), None);
        // At the cap already: a larger need has nothing more to offer.
        assert_eq!(receive_buffer(Some([4096, 131_072, 128 << 20]), Some(100_000_000)), None);
        // Unknown: assume the kernel's min and default.
        let r = receive_buffer(None, None).expect("a remedy");
        assert_eq!(r.change, "net.ipv4.tcp_rmem unknown → 4096 131072 6291456");
    }

    #[test]
    fn odd_triples_become_valid_ones() {
        let odd = [
            [0, 0, 0],
            [1 << 20, 8192, 8192],
            [4096, 1 << 30, 8192],
            [200_000, 131_072, 6_000_000],
            [u64::MAX, u64::MAX, 1],
            [1, 1, 1],
        ];
        for cur in odd {
            for need in [None, Some(0), Some(1), Some(20_000_000), Some(u64::MAX)] {
                for r in [receive_buffer(Some(cur), need), send_buffer(Some(cur), need)].into_iter().flatten() {
                    let Some(Action::WriteFile { value, .. }) = r.actions.first() else { panic!("{r:?}") };
                    let [min, default, max] = triple(value).expect("a triple");
                    assert!(1 <= min && min <= default && default <= max, "{cur:?} {need:?} → {value}");
                    assert!(max >= cur[2] && max <= BUFFER_CAP, "{cur:?} {need:?} → {value}");
                }
            }
        }
        // The current min is kept when it is valid, a default above the new max is lowered.
        assert_eq!(rmem([8192, 1 << 30, 8192], None), Some([8192, 6_291_456, 6_291_456]));
        assert_eq!(rmem([1 << 20, 8192, 8192], None), Some([4096, 131_072, 6_291_456]));
        assert_eq!(rmem([0, 0, 0], None), Some([4096, 131_072, 6_291_456]));
    }

    #[test]
    fn triples_parse_from_tabs_or_spaces_and_nothing_else() {
        assert_eq!(triple("4096\t131072\t6291456\n"), Some([4096, 131_072, 6_291_456]));
        assert_eq!(triple("4096 16384 4194304"), Some([4096, 16_384, 4_194_304]));
        assert_eq!(triple("4096 16384"), None);
        assert_eq!(triple("4096 16384 4194304 1"), None);
        assert_eq!(triple("4096 x 4194304"), None);
    }

    #[test]
    fn rps_and_txqueuelen_texts() {
        let r = rps("eth0", "rx-0", Some("0"), &[1, 2, 3]);
        assert_eq!(r.cause, "rps-off");
        assert_eq!(r.change, "eth0 rx-0 rps_cpus 0 → e");
        assert_eq!(r.commands, ["echo e | sudo tee /sys/class/net/eth0/queues/rx-0/rps_cpus"]);
        assert_eq!(
            r.actions,
            [Action::WriteFile { path: "sys/class/net/eth0/queues/rx-0/rps_cpus".into(), value: "e".into() }]
        );
        assert_eq!(r.persist, [r#"ACTION=="add", SUBSYSTEM=="net", KERNEL=="eth0", ATTR{queues/rx-0/rps_cpus}="e""#]);
        let t = txqueuelen("eth0", Some(100), 1000);
        assert_eq!(t.cause, "txqueuelen");
        assert_eq!(t.change, "eth0 txqueuelen 100 → 1000");
        assert_eq!(t.commands, ["sudo ip link set eth0 txqueuelen 1000"]);
        assert_eq!(
            t.actions,
            [Action::WriteFile { path: "sys/class/net/eth0/tx_queue_len".into(), value: "1000".into() }]
        );
        assert_eq!(t.persist, [r#"ACTION=="add", SUBSYSTEM=="net", KERNEL=="eth0", ATTR{tx_queue_len}="1000""#]);
    }

    #[test]
    fn in_flight_needs_a_rate_and_a_round_trip() {
        assert_eq!(in_flight(1e9, 40.0), Some(5_000_000));
        assert_eq!(in_flight(0.0, 40.0), None);
        assert_eq!(in_flight(1e9, 0.0), None);
        assert_eq!(in_flight(f64::NAN, 1.0), None);
    }
}

/// The same cause gets the same change from every section that names it.
#[cfg(test)]
mod one_fix_per_cause {
    use super::*;
    use crate::ends::{DirectionLoad, PathLoad, compare};
    use crate::rules::{RuleOptions, evaluate};
    use crate::share::SharedHost;
    use crate::snapshot::{HostSnapshot, LinkSnapshot};

    const RMEM: &str = "4096 8192 8192";

    #[test]
    fn the_doctor_the_ends_check_and_the_remedy_name_the_same_receive_buffer() {
        // 1 Gbit/s × 40 ms = 5 MB in flight, against a receiver whose tcp_rmem holds 8 kB.
        let need = in_flight(1e9, 40.0);
        let want = receive_buffer(triple(RMEM), need).expect("a remedy");
        assert_eq!(want.commands, ["sudo sysctl -w net.ipv4.tcp_rmem='4096 131072 33554432'"]);

        let server = SharedHost { tcp_rmem: triple(RMEM), tcp_rmem_max: Some(8192), ..Default::default() };
        let client = SharedHost { tcp_rmem: Some(KERNEL_TCP_RMEM), ..Default::default() };
        let load = PathLoad { upload: Some(DirectionLoad { rate_bps: 1e9, rtt_ms: 40.0 }), download: None };
        let ends = compare(&client, &server, &load);
        let f = ends.iter().find(|f| f.id == "receive-buffer-bdp").expect("receive-buffer-bdp");
        assert_eq!(f.fix, [format!("on the server: {}", want.commands[0])]);

        let link =
            LinkSnapshot { name: "eth0".into(), speed_mbps: Some(1000), carrier: Some(true), ..Default::default() };
        let mut host = HostSnapshot::default();
        host.sysctls.insert("net.ipv4.tcp_rmem".into(), RMEM.into());
        host.sysctls.insert("net.ipv4.tcp_wmem".into(), "4096 16384 4194304".into());
        let ev = evaluate(&link, &host, &RuleOptions { rtt_ms: Some(40.0), want_mtu: None });
        let f = ev.findings.iter().find(|f| f.id == "socket-buffers").expect("socket-buffers");
        assert_eq!(f.fix.commands[0], want.commands[0]);
        assert_eq!(f.apply[0], want.actions[0]);
        // The send buffer (4 MiB) is short of 5 MB too: its remedy follows, the same way.
        let send =
            send_buffer(host.sysctls.get("net.ipv4.tcp_wmem").and_then(|v| triple(v)), need).expect("a send remedy");
        assert_eq!(f.fix.commands[1], send.commands[0]);
        assert_eq!(f.apply[1], send.actions[0]);
    }

    #[test]
    fn the_doctor_names_the_rps_and_txqueuelen_remedies() {
        let mut link = LinkSnapshot {
            name: "eth0".into(),
            speed_mbps: Some(1000),
            carrier: Some(true),
            tx_queue_len: Some(100),
            ..Default::default()
        };
        link.queues.rx = 1;
        link.queues.rps_cpus.insert("rx-0".into(), "0".into());
        let host = HostSnapshot { cpus_online: vec![0, 1, 2, 3], ..Default::default() };
        let ev = evaluate(&link, &host, &RuleOptions::default());
        let by_id = |id: &str| ev.findings.iter().find(|f| f.id == id).cloned().expect(id);
        let rps_fix = rps("eth0", "rx-0", Some("0"), &[0, 1, 2, 3]);
        let f = by_id("rps-off");
        assert_eq!((f.fix.commands, f.apply), (rps_fix.commands, rps_fix.actions));
        let txq = txqueuelen("eth0", Some(100), 1000);
        let f = by_id("txqueuelen");
        assert_eq!((f.fix.commands, f.apply), (txq.commands, txq.actions));
    }
}
