//! The bottleneck rules: pure functions of (one direction's figures, both hosts' series with
//! their static facts) → a [`Verdict`].
//!
//! Each rule either finds its limit with figures to cite, or stays silent; nothing is guessed.
//! Every found limit carries a strength (how completely it explains the rate), and the verdict
//! names the strongest, listing the others under `also`. When nothing fires the verdict is
//! `unknown`, with what was checked as evidence.

use crate::buffer_rules::LIMITED_SHARE;
use crate::diagnosis::{Direction, Hosts, Limit, RetransmitSplit, Side, Verdict, ids, limit, pct};
use crate::host_sample::Series;
use wireperf_doctor::goodput::format_bps;
use wireperf_doctor::remedy;

/// A rate within this share of a ceiling has reached it (headers, slow start and the last
/// partial interval keep a full link a little under its goodput).
const AT_CEILING: f64 = 0.85;
/// A CPU at least this busy is saturated.
const CPU_SATURATED: f64 = 0.9;
/// The test's threads waited on their CPU's run queue at least this share of the watch, and
/// [`STARVED_RATIO`] times longer than they ran there: starved of that CPU. An idle reader
/// waits for data, not for a CPU, and shows none; on a host that is merely busy a reader waits
/// about as long as it runs.
const STARVED_SHARE: f64 = 0.5;
/// See [`STARVED_SHARE`].
const STARVED_RATIO: f64 = 4.0;
/// A CPU that ran at least this share of the host's NET_RX softirqs took the receive work of
/// one queue alone (RPS off): saturated, it is the receive path's ceiling.
const NET_RX_CONCENTRATED: f64 = 0.75;
/// Real retransmits above this share of the segments sent are path loss.
const LOSS_SHARE: f64 = 0.001;
/// Drops above this share of the datagrams are a finding.
const DROP_SHARE: f64 = 0.001;
/// A TCP segment's payload, to estimate segments when the sender's counters were not seen.
const MSS_ESTIMATE: f64 = 1448.0;

/// The verdict for one direction.
pub fn diagnose(dir: &Direction, hosts: Hosts<'_>) -> Verdict {
    let (sender, receiver) = dir.sender_receiver();
    let mut found = Vec::new();
    let mut not_checked = Vec::new();
    // Verdicts are made on the client: the server's host is the far side.
    let far_side_seen = hosts.server.is_some_and(Series::usable);
    if !far_side_seen {
        not_checked.push("the server's host was not seen (a stock iperf3 server sends no samples)".to_string());
    }
    ceilings(dir, hosts, &mut found);
    let retransmits = retransmit_split(dir, hosts);
    crate::buffer_rules::tcp_limited(dir, hosts, &mut found);
    loss(dir, hosts, retransmits, &mut found, &mut not_checked);
    let mut host_bound = false;
    for (side, role) in [(sender, Role::Sender), (receiver, Role::Receiver)] {
        if let Some(s) = hosts.of(side).filter(|s| s.usable()) {
            host_bound |= cpu(dir, s, side, role, &mut found);
            if role == Role::Receiver {
                nic_drops(s, side, &mut found);
                tcp_socket_drops(dir, s, side, &mut found);
            }
        }
    }
    disk(dir, &mut found);
    crate::path_rule::path_bottleneck(dir, hosts, host_bound, &mut found);
    found.sort_by(|a, b| b.strength.total_cmp(&a.strength));
    // Verdicts are read on the client: a fix for the server's host says where to run it.
    for l in found.iter_mut().filter(|l| l.side == Side::Server) {
        for f in l.fix.iter_mut().filter(|f| !f.starts_with(ON_THE_SERVER)) {
            f.insert_str(0, ON_THE_SERVER);
        }
    }
    let mut it = found.into_iter();
    let main = it.next().unwrap_or_else(|| unknown(dir, hosts, retransmits));
    Verdict { direction: dir.label().to_string(), main, also: it.collect(), retransmits, far_side_seen, not_checked }
}

/// The prefix of a fix to be run on the server's host.
pub const ON_THE_SERVER: &str = "on the server: ";

#[derive(Clone, Copy, PartialEq, Eq)]
enum Role {
    Sender,
    Receiver,
}

/// `link`, `usb-bus`, `shaper`: the rate reached a ceiling of either host's interface. A
/// shaper on a host's egress only limits what that host sends.
fn ceilings(dir: &Direction, hosts: Hosts<'_>, found: &mut Vec<Limit>) {
    let (sender, _) = dir.sender_receiver();
    for side in [Side::Client, Side::Server] {
        let Some(s) = hosts.of(side) else { continue };
        let f = &s.facts;
        let iface = s.iface.as_deref().unwrap_or("?");
        let rate = dir.bits_per_second;
        // Judged against the payload the shaper lets through (the suite's ceiling), not its
        // raw rate: a TCP flow through a 600 Mbit/s tbf carries at most 574 Mbit/s.
        let shaped = f.shaper.as_ref().filter(|(_, bps)| side == sender && *bps > 0).map(|(kind, bps)| {
            let (tcp, udp) = wireperf_doctor::goodput::shaped_goodput(*bps, f.mtu.unwrap_or(1500));
            (kind, *bps, if dir.udp { udp } else { tcp })
        });
        if let Some((kind, bps, goodput)) = shaped.filter(|(_, _, g)| *g > 0 && rate >= AT_CEILING * *g as f64) {
            let proto = if dir.udp { "UDP" } else { "TCP" };
            found.push(limit(
                ids::SHAPER,
                side,
                1.0 + rate / goodput as f64,
                vec![format!(
                    "{kind} on {iface} ({}) shapes what the {} sends to {} ({proto} goodput at most {}); the test reached {} ({} of it)",
                    side.as_str(),
                    side.as_str(),
                    format_bps(bps),
                    format_bps(goodput),
                    format_bps(rate as u64),
                    pct(rate / goodput as f64)
                )],
                vec![
                    format!("see it: tc qdisc show dev {iface}"),
                    format!("remove it (if it is not wanted): tc qdisc del dev {iface} root"),
                ],
            ));
        }
        let ceiling = if dir.udp { f.goodput_udp_bps } else { f.goodput_tcp_bps };
        if let Some(c) = ceiling.filter(|c| *c > 0)
            && rate >= AT_CEILING * c as f64
        {
            let (id, what) = if f.usb_limited {
                (ids::USB_BUS, "the USB bus under the adapter".to_string())
            } else {
                (ids::LINK, format!("{} Mbit/s line rate", f.link_mbps.unwrap_or(0)))
            };
            found.push(limit(
                id,
                side,
                1.0 + rate / c as f64,
                vec![format!(
                    "{iface} on the {}: {what}, goodput at most {}; the test reached {} ({})",
                    side.as_str(),
                    format_bps(c),
                    format_bps(rate as u64),
                    pct(rate / c as f64)
                )],
                vec![format!("the link runs at its rate; check the negotiated speed: ethtool {iface}")],
            ));
        }
    }
}

/// Retransmits split by DSACK: the sender's own streams' TCP_INFO `dsack_dups` when they
/// reported it (exact for this test), else the host's counters: the sender's `TCPDSACKRecv`
/// (or the receiver's `TCPDSACKOldSent`, when only it was seen) count segments that arrived
/// twice, over every connection of the host.
pub fn retransmit_split(dir: &Direction, hosts: Hosts<'_>) -> Option<RetransmitSplit> {
    if dir.udp {
        return None;
    }
    let total = dir.retransmits?;
    let (sender, receiver) = dir.sender_receiver();
    let dsack = dir.spurious_retransmits.or_else(|| {
        hosts
            .of(sender)
            .and_then(|s| s.mib_delta("TcpExt.TCPDSACKRecv"))
            .or_else(|| hosts.of(receiver).and_then(|s| s.mib_delta("TcpExt.TCPDSACKOldSent")))
    })?;
    let spurious = dsack.min(total);
    Some(RetransmitSplit { total, spurious, real: total - spurious })
}

/// `path-loss` (real retransmits, UDP loss beyond the receiver's own drops) and
/// `receiver-socket` (UDP datagrams the receiving socket dropped).
fn loss(
    dir: &Direction,
    hosts: Hosts<'_>,
    split: Option<RetransmitSplit>,
    found: &mut Vec<Limit>,
    not_checked: &mut Vec<String>,
) {
    let (sender, receiver) = dir.sender_receiver();
    if dir.udp {
        let (Some(lost), Some(packets)) = (dir.udp_lost, dir.udp_packets.filter(|p| *p > 0)) else { return };
        let rcvbuf = hosts.of(receiver).and_then(|s| s.mib_delta("Udp.RcvbufErrors"));
        let sock = dir.socket_drops.or(rcvbuf);
        let socket_lost = sock.unwrap_or(0).min(lost);
        // Under GRO a dropped packet may hold several datagrams: the socket's figure is then a
        // floor on its datagrams and what is left for the path a ceiling, so say "at least" and
        // never call the rest path loss.
        let packets_unit = dir.socket_drops_are_packets && socket_lost > 0;
        let at_least = if packets_unit { "at least " } else { "" };
        if socket_lost as f64 >= DROP_SHARE * packets as f64 {
            let share = socket_lost as f64 / packets as f64;
            let mut ev = vec![format!(
                "the {}'s receiving socket dropped {at_least}{socket_lost} of {packets} datagrams ({at_least}{:.2}%) for a full buffer",
                receiver.as_str(),
                share * 100.0
            )];
            if packets_unit {
                ev.push(format!(
                    "UDP GRO was on: the socket dropped {socket_lost} packets of one or more datagrams each"
                ));
            }
            if let Some(r) = rcvbuf {
                ev.push(format!("Udp RcvbufErrors on the {} rose by {r}", receiver.as_str()));
            }
            found.push(limit(
                ids::RECEIVER_SOCKET,
                receiver,
                0.6 + (share * 10.0).min(0.39),
                ev,
                vec![
                    format!("on the {}: sysctl -w net.core.rmem_max=33554432, then -w 8M", receiver.as_str()),
                    "or send slower: -b".to_string(),
                    "verify: nstat -az UdpRcvbufErrors stays at 0".to_string(),
                ],
            ));
        }
        if sock.is_none() {
            not_checked.push("UDP loss not split: the receiver's socket drops were not reported".to_string());
            return;
        }
        let path = lost - socket_lost;
        if packets_unit {
            if path > 0 {
                not_checked.push(format!(
                    "path loss not known exactly: at most {path} of {packets} datagrams were lost between the hosts \
                     (lost {lost}; the receiving socket dropped {socket_lost} GRO packets of one or more datagrams \
                     each; WIREPERF_UDP_OFFLOAD=off on the receiver counts them per datagram)"
                ));
            }
            return;
        }
        if path as f64 >= DROP_SHARE * packets as f64 {
            let share = path as f64 / packets as f64;
            found.push(limit(
                ids::PATH_LOSS,
                Side::Path,
                0.5 + (share * 40.0).min(0.45),
                vec![format!(
                    "{path} of {packets} datagrams ({:.2}%) were lost between the hosts (lost {lost}, of which the receiving socket dropped {socket_lost})",
                    share * 100.0
                )],
                vec!["find where: compare the NIC and switch counters along the path; send slower with -b".to_string()],
            ));
        }
        return;
    }
    let Some(total) = dir.retransmits.filter(|r| *r > 0) else { return };
    let Some(split) = split else {
        not_checked.push(format!(
            "{total} retransmits not split into real and spurious: neither host's DSACK counters were seen"
        ));
        return;
    };
    let segs = hosts
        .of(sender)
        .and_then(|s| s.mib_delta("Tcp.OutSegs"))
        .filter(|s| *s > 0)
        .map_or(dir.received_bytes as f64 / MSS_ESTIMATE, |s| s as f64);
    let share = split.real as f64 / segs.max(1.0);
    if share >= LOSS_SHARE && split.real >= 10 {
        found.push(limit(
            ids::PATH_LOSS,
            Side::Path,
            0.5 + (share * 40.0).min(0.45),
            vec![format!(
                "{} real retransmits ({:.2}% of {:.0} segments; {total} retransmitted, {} reported back as duplicates by DSACK)",
                split.real,
                share * 100.0,
                segs,
                split.spurious
            )],
            vec![
                "find where: compare rx_dropped/rx_missed_errors along the path; ethtool -S on both NICs".to_string(),
                "a loss-tolerant congestion control helps on a lossy path: -C bbr".to_string(),
            ],
        ));
    }
}

/// `sender-cpu`, `receiver-cpu`: a CPU of that host was saturated. Names the CPU, its
/// softirq share, and whether the network stack, the test itself or another process used it.
///
/// The CPU looked at first is the one the test's own threads worked on (ran plus waited for),
/// when it was saturated: a busy CPU elsewhere slows nothing of the test. When the test's
/// threads also sat on that CPU's run queue for a good part of the watch, the test was starved
/// of it; a starved receiver reads slowly, so its window closes and the sender shows
/// `rwnd_limited` time: then the CPU is the cause and the window limit only its sign.
///
/// Returns whether the CPU was shown to bind the test on this host (starved, busy with the
/// test itself, or saturated by the network stack on a CPU that ran most of the host's NET_RX):
/// a queue that fills then fills on this host, and no `path-bottleneck` is named. A CPU merely
/// busy with other work, or with softirq spread over the CPUs, is not.
fn cpu(dir: &Direction, s: &Series, side: Side, role: Role, found: &mut Vec<Limit>) -> bool {
    let shares = s.cpu_shares();
    let mine = s.own_main_cpu();
    let saturated = |c: &&crate::deltas::CpuShare| c.busy >= CPU_SATURATED;
    let on_mine = mine.and_then(|m| shares.iter().filter(saturated).find(|c| c.cpu == m.cpu));
    let Some(hot) = on_mine.or_else(|| shares.iter().filter(saturated).max_by(|a, b| a.busy.total_cmp(&b.busy))) else {
        return false;
    };
    let id = if role == Role::Sender { ids::SENDER_CPU } else { ids::RECEIVER_CPU };
    let mut ev = vec![format!(
        "CPU{} on the {} was {} busy: softirq {}, irq {}, system {}, user {}",
        hot.cpu,
        side.as_str(),
        pct(hot.busy),
        pct(hot.softirq),
        pct(hot.irq),
        pct(hot.system),
        pct(hot.user)
    )];
    let here = mine.filter(|m| m.cpu == hot.cpu);
    let elapsed = s.elapsed();
    // Starved: waited for the CPU much of the watch, and many times longer than it ran there
    // (on a merely busy host a reader waits about as long as it runs).
    let starved_share = here
        .and_then(|m| m.wait_s.map(|w| (w, m.run_s)))
        .filter(|(w, run)| *w >= STARVED_SHARE * elapsed && *w >= STARVED_RATIO * run)
        .map(|(w, _)| (w / elapsed.max(f64::MIN_POSITIVE)).min(1.0));
    let starved = starved_share.is_some();
    if let Some(m) = here {
        let wait = m.wait_s.map_or(String::new(), |w| format!(" and waited {w:.2} s for it on its run queue"));
        ev.push(format!(
            "the test's threads (summed) ran {:.2} s on CPU{}{wait}, over a {elapsed:.2} s watch",
            m.run_s, m.cpu
        ));
    }
    let own = s.own_cpu();
    let net_share = hot.softirq + hot.irq;
    let who = if net_share >= 0.4 {
        "the network stack (softirq)"
    } else if !starved && own.is_some_and(|o| o >= 0.5 * hot.busy) {
        "the test itself"
    } else {
        "another process"
    };
    if let Some(o) = own {
        ev.push(format!("the test's own threads used {} of one CPU", pct(o)));
    }
    ev.push(format!("used by {who}"));
    let rx = s.net_rx_split();
    if let Some(r) = rx.get(hot.cpu).filter(|_| net_share >= 0.4) {
        ev.push(format!("CPU{} ran {} of the host's NET_RX softirqs", hot.cpu, pct(*r)));
    }
    let rx_on_one = shares.len() <= 1 || rx.get(hot.cpu).is_some_and(|r| *r >= NET_RX_CONCENTRATED);
    let bound = starved || who == "the test itself" || (who == "the network stack (softirq)" && rx_on_one);
    let mut fix = Vec::new();
    let iface = s.iface.as_deref().unwrap_or("IFACE");
    if net_share >= 0.4 && s.rps_off() == Some(true) && shares.len() > 1 {
        let others: Vec<u32> = shares.iter().filter(|c| c.cpu != hot.cpu).map(|c| c.cpu as u32).collect();
        ev.push(format!("RPS is off on {iface}"));
        // The doctor's remedy: spread the receive work over the other CPUs.
        fix.extend(remedy::rps(iface, "rx-0", None, &others).commands);
        fix.push(format!(
            "or let wireperf apply it, reversibly: wireperf doctor {iface} --apply (undo: wireperf doctor --undo)"
        ));
        fix.push("verify: grep NET_RX /proc/softirqs shows the other CPUs counting".to_string());
    } else if who == "another process" {
        fix.push(format!("find it: top -o %CPU on the {}; or pin the test to an idle CPU with -A", side.as_str()));
    } else if who == "the test itself" {
        fix.push("more streams spread the work over CPUs: -P 2 (or -A to pin)".to_string());
    } else {
        fix.push(format!("spread interrupts: check the IRQ affinity of {iface} (/proc/interrupts) and RPS"));
    }
    // The flow's own counters (TCP_INFO, drops) are direct evidence; a busy CPU is weaker when
    // another process used it (the test may have run elsewhere most of the time) unless the
    // test's threads were seen waiting for that very CPU.
    let mut strength = match starved_share {
        // Ranked by how much of the watch the test spent waiting for its CPU.
        Some(share) => 0.5 + 0.35 * share,
        None if who == "another process" => 0.45 * hot.busy,
        None => 0.7 * hot.busy,
    };
    let rwnd = dir.busy_us.filter(|b| *b > 0).zip(dir.rwnd_limited_us).map(|(b, r)| r as f64 / b as f64);
    if let Some(share) = rwnd.filter(|sh| starved && role == Role::Receiver && *sh >= LIMITED_SHARE) {
        ev.push(format!(
            "the sender waited for this receiver's window {} of its busy time: the window stays closed while the reader waits for its CPU",
            pct(share)
        ));
        fix.push("verify: rerun with --why; rwnd_limited falls and the test's run-queue wait is gone".to_string());
        // Above the window limit it explains (see `tcp_limited`).
        strength = strength.max(0.55 + share.min(1.0) / 2.0) + 0.05;
    }
    found.push(limit(id, side, strength, ev, fix));
    bound
}

/// `nic-drops`: the receiver's NIC, its ring or the per-CPU backlog dropped frames.
fn nic_drops(s: &Series, side: Side, found: &mut Vec<Limit>) {
    let iface = s.iface.as_deref().unwrap_or("IFACE");
    let mut ev = Vec::new();
    let mut dropped = 0;
    for k in ["rx_dropped", "rx_missed_errors", "rx_fifo_errors", "rx_over_errors", "rx_crc_errors"] {
        if let Some(d) = s.nic_delta(k).filter(|d| *d > 0) {
            ev.push(format!("{iface} {k} rose by {d}"));
            dropped += d;
        }
    }
    // The driver's own counters (ethtool -S) say where in the NIC the frames went; drivers
    // often fold them into rx_dropped too, so they count only beyond the sysfs figure.
    let mut driver = 0;
    for (k, d) in s.driver_deltas() {
        let lower = k.to_ascii_lowercase();
        if lower.contains("rx") && ["drop", "miss", "fifo", "over", "discard"].iter().any(|w| lower.contains(w)) {
            driver += d;
        }
        ev.push(format!("{iface} driver counter {k} rose by {d} (ethtool -S)"));
    }
    dropped = dropped.max(driver);
    let backlog = s.softnet_delta().map_or(0, |(d, _)| d);
    if backlog > 0 {
        ev.push(format!("softnet backlog drops rose by {backlog}"));
    }
    let packets = s.nic_delta("rx_packets").unwrap_or(0).max(1);
    if (dropped + backlog) as f64 >= DROP_SHARE * packets as f64 && dropped + backlog > 0 {
        let share = (dropped + backlog) as f64 / packets as f64;
        let mut fix = vec![format!("larger rings: ethtool -g {iface}, then ethtool -G {iface} rx <max>")];
        if backlog > 0 {
            fix.push("sysctl -w net.core.netdev_max_backlog=16384".to_string());
        }
        fix.push(format!("verify: ethtool -S {iface} | grep -i drop stays flat"));
        found.push(limit(ids::NIC_DROPS, side, 0.6 + (share * 10.0).min(0.35), ev, fix));
    }
}

/// `receiver-socket` for TCP: the receive queue dropped or pruned segments.
fn tcp_socket_drops(dir: &Direction, s: &Series, side: Side, found: &mut Vec<Limit>) {
    if dir.udp {
        return;
    }
    let mut ev = Vec::new();
    for k in ["TcpExt.TCPRcvQDrop", "TcpExt.TCPBacklogDrop", "TcpExt.PruneCalled", "TcpExt.TCPOFODrop"] {
        if let Some(d) = s.mib_delta(k).filter(|d| *d > 0) {
            ev.push(format!("{k} on the {} rose by {d}", side.as_str()));
        }
    }
    if !ev.is_empty() {
        found.push(limit(
            ids::RECEIVER_SOCKET,
            side,
            0.4,
            ev,
            vec![format!("on the {}: raise net.ipv4.tcp_rmem's maximum, or read faster (-A)", side.as_str())],
        ));
    }
}

/// `disk`: a file phase's disk was slower than the network and the rate matched it.
fn disk(dir: &Direction, found: &mut Vec<Limit>) {
    let Some(d) = dir.disk_bps.filter(|d| *d > 0.0) else { return };
    if dir.bits_per_second >= AT_CEILING * d {
        let side = if dir.client_sends { Side::Client } else { Side::Server };
        found.push(limit(
            ids::DISK,
            side,
            1.0 + (dir.bits_per_second / d).min(1.0),
            vec![format!(
                "the file moved at {}, the disk's own rate was {}",
                format_bps(dir.bits_per_second as u64),
                format_bps(d as u64)
            )],
            vec!["a faster disk or a file in RAM (tmpfs) shows the network's rate".to_string()],
        ));
    }
}

/// Nothing fired: say what was checked.
fn unknown(dir: &Direction, hosts: Hosts<'_>, split: Option<RetransmitSplit>) -> Limit {
    let mut ev = vec![format!("rate {}", format_bps(dir.bits_per_second as u64))];
    if let (Some(b), Some(r)) = (dir.busy_us.filter(|b| *b > 0), dir.rwnd_limited_us) {
        let sb = dir.sndbuf_limited_us.unwrap_or(0);
        ev.push(format!(
            "sender limited by the receive window {} and its send buffer {} of its busy time",
            pct(r as f64 / b as f64),
            pct(sb as f64 / b as f64)
        ));
    }
    if let Some(s) = split {
        ev.push(format!("{} retransmits, {} of them spurious (DSACK)", s.total, s.spurious));
    }
    for side in [Side::Client, Side::Server] {
        if let Some(s) = hosts.of(side).filter(|s| s.usable()) {
            let busiest = s.cpu_shares().into_iter().max_by(|a, b| a.busy.total_cmp(&b.busy));
            if let Some(c) = busiest {
                ev.push(format!("{}: busiest CPU{} at {}", side.as_str(), c.cpu, pct(c.busy)));
            }
        }
    }
    limit(ids::UNKNOWN, Side::Path, 0.0, ev, Vec::new())
}
