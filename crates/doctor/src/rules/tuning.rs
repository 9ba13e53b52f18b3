//! Tuning rules: R7 rps-off, R10 small-rings, R11 coalescing, R12 txqueuelen, R13 socket-buffers.
//! Their fixes are the safe, reversible ones `--apply` may perform. The fixes of RPS, txqueuelen
//! and the socket buffers, and their actions, come from [`crate::remedy`], so the doctor, the
//! two-ends check and the bottleneck finder print one change for one cause.

use super::parts::{Action, Ctx, Fix, Outcome, Severity, finding, fix, with_apply};
use crate::read::procfs::{cpu_mask, mask_is_zero};
use crate::remedy::{self, Remedy};

/// The kernel's default txqueuelen, what the txqueuelen rule restores.
const TXQUEUELEN: u32 = 1000;

/// The fix of a remedy: its commands, `verify`, and each persist line behind `persist_as`.
fn remedy_fix(r: &Remedy, verify: &[String], persist_as: &str) -> Fix {
    Fix {
        commands: r.commands.clone(),
        verify: verify.to_vec(),
        drops_link: false,
        notes: r.persist.iter().map(|p| format!("{persist_as}{p}")).collect(),
    }
}

/// R7: one RX queue, several CPUs, RPS off.
pub fn rps_off(ctx: &Ctx) -> Outcome {
    let l = ctx.link;
    let cpus = &ctx.host.cpus_online;
    if cpus.is_empty() {
        return Outcome::NotChecked("online CPUs not reported".into());
    }
    if cpus.len() < 2 {
        return Outcome::Passed;
    }
    if l.queues.rx == 0 {
        return Outcome::NotChecked("RX queues not reported".into());
    }
    if l.queues.rx > 1 {
        return Outcome::Passed; // multi-queue: RSS spreads the load in hardware
    }
    let Some((q, mask)) = l.queues.rps_cpus.iter().next() else {
        return Outcome::NotChecked("rps_cpus not readable".into());
    };
    if !mask_is_zero(mask) {
        return Outcome::Passed;
    }
    let r = remedy::rps(&l.name, q, Some(mask), cpus);
    let new = cpu_mask(cpus);
    let n = &l.name;
    let mut ev = vec![
        format!("{n} has 1 RX queue and {} online CPUs", cpus.len()),
        format!("queues/{q}/rps_cpus = {mask} (RPS off)"),
    ];
    let squeezed: u64 = ctx.host.softnet.iter().map(|r| r.time_squeeze).sum();
    let dropped: u64 = ctx.host.softnet.iter().map(|r| r.dropped).sum();
    if squeezed > 0 || dropped > 0 {
        ev.push(format!("softnet_stat: {dropped} backlog drops, {squeezed} time squeezes"));
    }
    let fast = l.speed_mbps.is_some_and(|s| s >= 2500);
    let severity = if fast && (squeezed > 0 || dropped > 0) { Severity::Crit } else { Severity::Warn };
    let verify = [
        format!("cat /sys/class/net/{n}/queues/{q}/rps_cpus   # {new}"),
        "grep NET_RX /proc/softirqs   # counts grow on every CPU".into(),
    ];
    let o = finding(
        "rps-off",
        severity,
        "All receive processing for this single-queue NIC runs on one CPU; RPS would spread it over all CPUs.",
        ev,
        remedy_fix(&r, &verify, "Persist with a udev rule: "),
    );
    with_apply(o, r.actions)
}

/// R10: the RX ring is below its maximum while RX drops are counted.
pub fn small_rings(ctx: &Ctx) -> Outcome {
    let l = ctx.link;
    let Some(r) = &l.rings else {
        return Outcome::NotChecked("ring sizes not reported (driver has no ring op, or ethtool missing)".into());
    };
    let (Some(rx), Some(rx_max)) = (r.rx, r.rx_max) else {
        return Outcome::NotChecked("RX ring size not reported".into());
    };
    let drops: Vec<(String, u64)> = ["rx_missed_errors", "rx_fifo_errors", "rx_over_errors", "rx_dropped"]
        .iter()
        .filter_map(|c| l.stats.get(*c).filter(|&&v| v > 0).map(|v| ((*c).to_string(), *v)))
        .collect();
    if rx >= rx_max || drops.is_empty() {
        return Outcome::Passed;
    }
    // r8152's default is 100 and 1000 is the usual advice; NIC drivers take powers of two.
    let want = if l.driver.as_deref() == Some("r8152") { 1000 } else { 1024 };
    let target = if rx < want { want.min(rx_max) } else { rx_max };
    let n = &l.name;
    let mut ev = vec![format!("RX ring {rx} of at most {rx_max}")];
    ev.extend(drops.iter().map(|(c, v)| format!("statistics/{c} = {v}")));
    let o = finding(
        "small-rings",
        Severity::Warn,
        "The receive ring is small while packets are being dropped on receive; a larger ring absorbs bursts.",
        ev,
        fix(
            &[format!("sudo ethtool -G {n} rx {target}")],
            &[
                format!("ethtool -g {n}   # RX: {target}"),
                format!("cat /sys/class/net/{n}/statistics/rx_missed_errors   # stays flat"),
            ],
            true,
            &["Changing rings resets the NIC on most drivers: the link drops for a moment."],
        ),
    );
    with_apply(o, vec![Action::SetRxRing { iface: n.clone(), rx: target }])
}

/// R11: interrupt coalescing that is off (igc 0) or adds latency.
pub fn coalescing(ctx: &Ctx) -> Outcome {
    let l = ctx.link;
    let Some(c) = &l.coalesce else {
        return Outcome::NotChecked("coalescing not reported (driver has no coalesce op, or ethtool missing)".into());
    };
    let Some(us) = c.rx_usecs else {
        return Outcome::NotChecked("rx-usecs not reported".into());
    };
    let n = &l.name;
    let driver = l.driver.as_deref().unwrap_or("");
    // r8152 reports nanoseconds (default 15000 = 15 µs; 85000 on RTL8153 SuperSpeed): never flag.
    if driver == "r8152" {
        return Outcome::Passed;
    }
    let adaptive = c.adaptive_rx == Some(true);
    let (severity, why) = if us == 0 && !adaptive {
        if driver == "igc" || l.speed_mbps.is_some_and(|s| s >= 2500) {
            (Severity::Warn, "no interrupt moderation: one interrupt per packet makes the CPU the bottleneck")
        } else {
            return Outcome::Passed;
        }
    } else if us > 100 && !(driver == "igc" && us <= 3) {
        (Severity::Info, "more than 100 µs of moderation adds latency")
    } else {
        return Outcome::Passed;
    };
    let cmd = if driver == "igc" {
        format!("sudo ethtool -C {n} rx-usecs 3   # igc: 3 = dynamic")
    } else {
        format!("sudo ethtool -C {n} adaptive-rx on   # or rx-usecs 50")
    };
    finding(
        "coalescing",
        severity,
        format!("Interrupt coalescing is off or too high: {why}."),
        vec![format!(
            "rx-usecs = {us}, adaptive RX {}",
            c.adaptive_rx.map(|a| if a { "on" } else { "off" }).unwrap_or("not reported")
        )],
        fix(&[cmd], &[format!("ethtool -c {n}")], false, &[]),
    )
}

/// R12: txqueuelen below the kernel default at ≥1 Gbit/s.
pub fn txqueuelen(ctx: &Ctx) -> Outcome {
    let l = ctx.link;
    let Some(q) = l.tx_queue_len else {
        return Outcome::NotChecked("tx_queue_len not reported".into());
    };
    if q >= TXQUEUELEN {
        return Outcome::Passed;
    }
    if !l.link_up() {
        return Outcome::Passed;
    }
    let Some(speed) = l.speed_mbps else {
        return Outcome::NotChecked("link speed not reported".into());
    };
    if speed < 1000 {
        return Outcome::Passed;
    }
    let n = &l.name;
    let mut ev = vec![format!("tx_queue_len = {q} (kernel default 1000) at {speed} Mbit/s")];
    let drops = l.qdisc.as_ref().and_then(|d| d.drops.map(|x| (d.kind.clone(), x)));
    let severity = match &drops {
        Some((kind, d)) if *d > 0 => {
            ev.push(format!("root qdisc {kind} dropped {d} packets"));
            Severity::Warn
        }
        Some((kind, _)) => {
            ev.push(format!("root qdisc {kind} has dropped nothing yet"));
            Severity::Info
        }
        None => Severity::Info,
    };
    let r = remedy::txqueuelen(n, Some(q), TXQUEUELEN);
    let verify = [format!("cat /sys/class/net/{n}/tx_queue_len   # {TXQUEUELEN}")];
    let o = finding(
        "txqueuelen",
        severity,
        "The transmit queue is shorter than the kernel default; at gigabit rates bursts overflow it.",
        ev,
        remedy_fix(&r, &verify, "Persist with a udev rule: "),
    );
    with_apply(o, r.actions)
}

/// [`remedy::receive_buffer`] or [`remedy::send_buffer`]: a buffer's remedy for its current
/// triple and the bytes in flight.
type BufferRemedy = fn(Option<[u64; 3]>, Option<u64>) -> Option<Remedy>;

/// R13: TCP buffer maximums below the bandwidth-delay product (only with a known RTT).
pub fn socket_buffers(ctx: &Ctx) -> Outcome {
    let l = ctx.link;
    let Some(rtt) = ctx.opts.rtt_ms else {
        return Outcome::NotChecked("no RTT given (use --rtt MS); on a LAN (<1 ms) the defaults are enough".into());
    };
    if !l.link_up() {
        return Outcome::Passed;
    }
    let Some(speed) = l.speed_mbps else {
        return Outcome::NotChecked("link speed not reported".into());
    };
    let rate = l.goodput.map(|g| g.tcp_bps).unwrap_or(u64::from(speed) * 1_000_000);
    let bdp = remedy::in_flight(rate as f64, rtt).unwrap_or(0);
    let (Some(rmem), Some(wmem)) =
        (ctx.host.sysctls.get("net.ipv4.tcp_rmem"), ctx.host.sysctls.get("net.ipv4.tcp_wmem"))
    else {
        return Outcome::NotChecked("tcp_rmem/tcp_wmem not reported".into());
    };
    let (Some(rmem), Some(wmem)) = (remedy::triple(rmem), remedy::triple(wmem)) else {
        return Outcome::NotChecked("tcp_rmem/tcp_wmem malformed".into());
    };
    if rmem[2] >= bdp && wmem[2] >= bdp {
        return Outcome::Passed;
    }
    let mut ev = vec![format!("bandwidth-delay product {bdp} bytes ({} Mbit/s × {rtt} ms)", rate / 1_000_000)];
    let mut remedies = Vec::new();
    // Each buffer short of the BDP gets its remedy (the receive buffer first).
    let buffers: [(&str, [u64; 3], BufferRemedy); 2] =
        [("net.ipv4.tcp_rmem", rmem, remedy::receive_buffer), ("net.ipv4.tcp_wmem", wmem, remedy::send_buffer)];
    for (name, current, remedy_for) in buffers {
        if current[2] >= bdp {
            continue;
        }
        ev.push(format!("{name} max = {}", current[2]));
        remedies.extend(remedy_for(Some(current), Some(bdp)));
    }
    let o = finding(
        "socket-buffers",
        Severity::Info,
        format!(
            "TCP buffers are smaller than the bandwidth-delay product at {rtt} ms, so one stream cannot fill the link."
        ),
        ev,
        buffers_fix(&remedies),
    );
    with_apply(o, remedies.into_iter().flat_map(|r| r.actions).collect())
}

/// The socket-buffers fix: every short buffer's remedy in turn. There is none when each short
/// maximum is at the remedies' cap (64 MiB) already, below a larger BDP: only more streams help.
fn buffers_fix(remedies: &[Remedy]) -> Fix {
    let verify = ["sysctl net.ipv4.tcp_rmem net.ipv4.tcp_wmem".to_string()];
    if remedies.is_empty() {
        return fix(
            &[],
            &verify,
            false,
            &["The maximums are as large as wireperf advises; more streams (-P 4) each bring their own buffer."],
        );
    }
    Fix {
        commands: remedies.iter().flat_map(|r| r.commands.iter().cloned()).collect(),
        verify: verify.to_vec(),
        drops_link: false,
        notes: remedies.iter().flat_map(|r| r.persist.iter().map(|p| format!("Persist: {p}"))).collect(),
    }
}
