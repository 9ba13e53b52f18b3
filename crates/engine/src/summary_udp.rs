//! The UDP part of the `end` object and of the results this side sends.
//!
//! iperf3 3.12 prints one `udp` object per stream that mixes both halves (the sender's bytes
//! and time, the receiver's jitter and loss, the sender's datagram count when known) and, per
//! direction, `sum` (mixed the same way), `sum_sent` and `sum_received`. wireperf prints the
//! same keys with the same meaning, plus extension keys (`wireperf_receiver_socket_drops`,
//! `wireperf_duplicates`, `wireperf_sender_drops`) and a `wireperf_udp_receiver` object with the receiver's own figures
//! (what the text summary's `receiver` line shows).
//!
//! Exact loss: the receiver counts which datagrams arrived. Once it knows how many the sender
//! sent (the results exchange), `lost` = sent − received once, which also counts datagrams lost
//! after the last one that arrived (iperf3 cannot see those). Before that it is the count
//! missing below the highest sequence number, as iperf3's.

use crate::sampler::{LocalStream, UdpTotals, percent, rate};
use wireperf_protocol::StreamResult;
use wireperf_protocol::schema::{DropUnit, EndStream, Summary};

/// What a local receiving stream's socket drops count.
fn drop_unit(u: &UdpTotals) -> DropUnit {
    if u.gro { DropUnit::Packets } else { DropUnit::Datagrams }
}

/// The receiver's datagram total and loss (both since the stream started, omit included).
pub(crate) fn receiver_view(u: &UdpTotals, peer_sent: Option<u64>) -> (u64, u64) {
    match peer_sent.filter(|&p| p > 0) {
        Some(sent) => (u.packets.max(sent), sent.saturating_sub(u.unique)),
        None => (u.packets, u.lost),
    }
}

/// Both halves of one UDP stream, after omit.
#[derive(Clone, Debug, Default)]
struct Halves {
    socket: i32,
    local_sends: bool,
    sent_bytes: u64,
    sent_packets: u64,
    sender_secs: f64,
    send_drops: Option<u64>,
    receiver_known: bool,
    recv_bytes: u64,
    recv_packets: u64,
    receiver_secs: f64,
    lost: u64,
    jitter: f64,
    out_of_order: u64,
    duplicates: Option<u64>,
    socket_drops: Option<u64>,
    /// What `socket_drops` counts (packets when the receiving socket had GRO on).
    drops_unit: Option<DropUnit>,
    /// Receiver: datagrams not in the jitter (no receive time of their own).
    untimed: Option<u64>,
}

fn sub(a: i64, b: Option<i64>) -> u64 {
    u64::try_from(a.saturating_sub(b.unwrap_or(0))).unwrap_or(0)
}

fn halves(l: &LocalStream, u: &UdpTotals, peer: Option<&StreamResult>) -> Halves {
    let t = &l.totals;
    let peer_secs = peer.map(|p| p.end_time - p.start_time).filter(|&s| s > 0.0).unwrap_or(t.secs);
    let mut h = Halves { socket: l.socket, local_sends: l.sender, ..Default::default() };
    if l.sender {
        h.sent_bytes = t.bytes;
        h.sent_packets = u.packets.saturating_sub(u.omitted_packets);
        h.sender_secs = t.secs;
        h.send_drops = Some(u.send_drops);
        h.receiver_secs = peer_secs;
        if let Some(p) = peer {
            h.receiver_known = true;
            h.recv_bytes = p.bytes;
            h.recv_packets = sub(p.packets, p.omitted_packets);
            // A receiver that reported before it knew what was sent (a `-R` client: its results
            // go first) counted only the gaps below its highest number; what this side sent
            // beyond that was lost after the last arrival, and it counts here too.
            let tail = u.packets.saturating_sub(u64::try_from(p.packets).unwrap_or(0));
            h.lost = sub(p.errors, p.omitted_errors) + tail;
            h.jitter = p.jitter;
            h.out_of_order = p.out_of_order.unwrap_or(0);
            h.duplicates = p.duplicates;
            h.socket_drops = p.socket_drops;
            h.drops_unit = p.socket_drops_unit;
            h.untimed = p.jitter_untimed;
        }
    } else {
        let peer_sent = peer.and_then(|p| u64::try_from(p.packets).ok());
        let (packets, lost) = receiver_view(u, peer_sent);
        h.receiver_known = true;
        h.recv_bytes = t.bytes;
        h.recv_packets = packets.saturating_sub(u.omitted_packets);
        h.lost = lost.saturating_sub(u.omitted_lost);
        h.jitter = u.jitter;
        h.out_of_order = u.out_of_order.saturating_sub(u.omitted_out_of_order);
        h.duplicates = Some(u.duplicates);
        h.socket_drops = Some(u.socket_drops);
        h.drops_unit = Some(drop_unit(u));
        h.untimed = Some(u.untimed);
        h.receiver_secs = t.secs;
        h.sender_secs = peer_secs;
        if let Some(p) = peer {
            h.sent_bytes = p.bytes;
            h.sent_packets = sub(p.packets, p.omitted_packets);
            h.send_drops = p.send_drops;
        }
    }
    h
}

/// One `end.streams[]` entry for a UDP stream.
pub(crate) fn stream_end(l: &LocalStream, u: &UdpTotals, peer: Option<&StreamResult>) -> EndStream {
    let h = halves(l, u, peer);
    let packets = if h.sent_packets > 0 { h.sent_packets } else { h.recv_packets };
    let udp = Summary {
        socket: Some(h.socket),
        start: 0.0,
        end: h.sender_secs,
        seconds: h.sender_secs,
        bytes: h.sent_bytes,
        bits_per_second: rate(h.sent_bytes, h.sender_secs),
        jitter_ms: Some(h.jitter * 1000.0),
        lost_packets: Some(h.lost as i64),
        packets: Some(packets as i64),
        lost_percent: Some(percent(h.lost as i64, packets as i64)),
        out_of_order: Some(h.out_of_order as i64),
        receiver_socket_drops: h.socket_drops,
        wireperf_receiver_socket_drops_unit: h.drops_unit,
        duplicates: h.duplicates,
        sender_drops: h.send_drops,
        wireperf_jitter_untimed: h.untimed,
        sender: h.local_sends,
        ..Default::default()
    };
    let udp_receiver = h.receiver_known.then(|| Summary {
        socket: Some(h.socket),
        start: 0.0,
        end: h.receiver_secs,
        seconds: h.receiver_secs,
        bytes: h.recv_bytes,
        bits_per_second: rate(h.recv_bytes, h.receiver_secs),
        jitter_ms: Some(h.jitter * 1000.0),
        lost_packets: Some(h.lost as i64),
        packets: Some(h.recv_packets as i64),
        lost_percent: Some(percent(h.lost as i64, h.recv_packets as i64)),
        out_of_order: Some(h.out_of_order as i64),
        receiver_socket_drops: h.socket_drops,
        wireperf_receiver_socket_drops_unit: h.drops_unit,
        duplicates: h.duplicates,
        wireperf_jitter_untimed: h.untimed,
        sender: h.local_sends,
        ..Default::default()
    });
    EndStream { udp: Some(udp), udp_receiver, ..Default::default() }
}

/// `sum`, `sum_sent`, `sum_received` for the UDP streams of one direction.
pub(crate) fn sums(group: &[(&LocalStream, &UdpTotals, Option<&StreamResult>)]) -> Option<(Summary, Summary, Summary)> {
    let hs: Vec<Halves> = group.iter().map(|(l, u, p)| halves(l, u, *p)).collect();
    let first = hs.first()?;
    let (snd_secs, rcv_secs, dir) = (first.sender_secs, first.receiver_secs, first.local_sends);
    let total_sent: u64 = hs.iter().map(|h| h.sent_bytes).sum();
    let total_received: u64 = hs.iter().map(|h| h.recv_bytes).sum();
    let total_packets: u64 = hs.iter().map(|h| if h.sent_packets > 0 { h.sent_packets } else { h.recv_packets }).sum();
    let sent_packets: u64 = hs.iter().map(|h| h.sent_packets).sum();
    let recv_packets: u64 = hs.iter().map(|h| h.recv_packets).sum();
    let lost: u64 = hs.iter().map(|h| h.lost).sum();
    let jitter_ms = hs.iter().map(|h| h.jitter).sum::<f64>() / hs.len() as f64 * 1000.0;
    let opt_sum =
        |f: fn(&Halves) -> Option<u64>| hs.iter().any(|h| f(h).is_some()).then(|| hs.iter().filter_map(f).sum::<u64>());
    let socket_drops = opt_sum(|h| h.socket_drops);
    let duplicates = opt_sum(|h| h.duplicates);
    let send_drops = opt_sum(|h| h.send_drops);
    let untimed = opt_sum(|h| h.untimed);
    // One stream counting packets makes the sum a count of packets and datagrams mixed: a
    // lower bound on datagrams, which is what `Packets` says.
    let units = hs.iter().filter_map(|h| h.drops_unit);
    let drops_unit = units.reduce(|a, b| if b == DropUnit::Packets { b } else { a });
    let lost_pct = percent(lost as i64, total_packets as i64);
    let sum = Summary {
        end: rcv_secs,
        seconds: rcv_secs,
        bytes: total_sent,
        bits_per_second: rate(total_sent, snd_secs),
        jitter_ms: Some(jitter_ms),
        lost_packets: Some(lost as i64),
        packets: Some(total_packets as i64),
        lost_percent: Some(lost_pct),
        receiver_socket_drops: socket_drops,
        wireperf_receiver_socket_drops_unit: drops_unit,
        duplicates,
        sender_drops: send_drops,
        wireperf_jitter_untimed: untimed,
        sender: dir,
        ..Default::default()
    };
    let sum_sent = Summary {
        end: snd_secs,
        seconds: snd_secs,
        bytes: total_sent,
        bits_per_second: rate(total_sent, snd_secs),
        jitter_ms: Some(0.0),
        lost_packets: Some(0),
        packets: Some(sent_packets as i64),
        lost_percent: Some(0.0),
        sender_drops: send_drops,
        sender: true,
        ..Default::default()
    };
    let sum_received = Summary {
        end: rcv_secs,
        seconds: rcv_secs,
        bytes: total_received,
        bits_per_second: rate(total_received, rcv_secs),
        jitter_ms: Some(jitter_ms),
        lost_packets: Some(lost as i64),
        packets: Some(recv_packets as i64),
        lost_percent: Some(lost_pct),
        receiver_socket_drops: socket_drops,
        wireperf_receiver_socket_drops_unit: drops_unit,
        duplicates,
        wireperf_jitter_untimed: untimed,
        sender: false,
        ..Default::default()
    };
    Some((sum, sum_sent, sum_received))
}

/// This side's results-exchange entry for a UDP stream. A receiver that already knows what
/// the sender sent (the server: the client's results come first) reports the exact loss.
pub(crate) fn result(l: &LocalStream, u: &UdpTotals, peer: Option<&StreamResult>) -> StreamResult {
    let mut r = StreamResult {
        id: l.wire_id,
        bytes: l.totals.bytes,
        retransmits: -1,
        end_time: l.totals.secs,
        omitted_packets: Some(u.omitted_packets as i64),
        ..Default::default()
    };
    if l.sender {
        r.packets = u.packets as i64;
        r.omitted_errors = Some(0);
        r.send_drops = Some(u.send_drops);
    } else {
        let peer_sent = peer.and_then(|p| u64::try_from(p.packets).ok());
        let (packets, lost) = receiver_view(u, peer_sent);
        r.packets = packets as i64;
        r.errors = lost as i64;
        r.omitted_errors = Some(u.omitted_lost as i64);
        r.jitter = u.jitter;
        r.socket_drops = Some(u.socket_drops);
        r.socket_drops_unit = Some(drop_unit(u));
        r.duplicates = Some(u.duplicates);
        r.jitter_untimed = Some(u.untimed);
        r.out_of_order = Some(u.out_of_order.saturating_sub(u.omitted_out_of_order));
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sampler::StreamTotals;

    fn local(sender: bool, bytes: u64, u: UdpTotals) -> LocalStream {
        LocalStream {
            socket: 5,
            wire_id: 1,
            sender,
            totals: StreamTotals { bytes, secs: 2.0, udp: Some(u), ..Default::default() },
        }
    }

    #[test]
    fn receiver_counts_tail_loss_once_it_knows_what_was_sent() {
        // Received 1..=90 except 10 and 20; 91..=100 were lost after the last arrival.
        let u = UdpTotals { packets: 90, unique: 88, lost: 2, jitter: 0.001, socket_drops: 3, ..Default::default() };
        let l = local(false, 88 * 100, u.clone());
        let peer = StreamResult { id: 1, bytes: 100 * 100, packets: 100, end_time: 2.0, ..Default::default() };
        let r = result(&l, &u, Some(&peer));
        assert_eq!((r.packets, r.errors, r.socket_drops), (100, 12, Some(3)));
        // Without the sender's count: iperf3's view.
        let r = result(&l, &u, None);
        assert_eq!((r.packets, r.errors), (90, 2));
        let e = stream_end(&l, &u, Some(&peer));
        let udp = e.udp.unwrap();
        assert_eq!((udp.bytes, udp.packets, udp.lost_packets, udp.sender), (10_000, Some(100), Some(12), false));
        assert_eq!(udp.lost_percent, Some(12.0));
        let rx = e.udp_receiver.unwrap();
        assert_eq!((rx.bytes, rx.packets, rx.receiver_socket_drops), (8_800, Some(100), Some(3)));
    }

    /// Regression (`udp_lab::lab_udp_loss_is_exact_in_reverse`, 1 in ~100 runs): with `-R` the
    /// client receives and sends its results first, before it knows the server's count, so when
    /// the 1 % drop rule took the last datagram the server's document said 170 lost where the
    /// client's (and nft) said 171.
    #[test]
    fn sender_adds_the_tail_a_receiver_could_not_see() {
        // Sent 1..=100; the receiver saw up to 97 with 2 gaps and reported before knowing 100.
        let u = UdpTotals { packets: 100, ..Default::default() };
        let l = local(true, 10_000, u.clone());
        let peer = StreamResult { id: 1, bytes: 9_500, packets: 97, errors: 2, end_time: 2.0, ..Default::default() };
        let (sum, _, _) = sums(&[(&l, &u, Some(&peer))]).unwrap();
        assert_eq!((sum.packets, sum.lost_packets), (Some(100), Some(5)));
        // A receiver that already knew (a wireperf server) reports the whole count: nothing added.
        let peer = StreamResult { packets: 100, errors: 5, ..peer };
        let (sum, _, _) = sums(&[(&l, &u, Some(&peer))]).unwrap();
        assert_eq!(sum.lost_packets, Some(5));
    }

    /// A GRO receiver's socket drops are packets: its own sums say so, its results carry it,
    /// and a sender that reads them says so too; one such stream makes a sum say packets.
    #[test]
    fn socket_drops_under_gro_are_labelled_packets() {
        let gro = UdpTotals { packets: 10, unique: 9, lost: 1, socket_drops: 1, gro: true, ..Default::default() };
        let plain = UdpTotals { gro: false, ..gro.clone() };
        let (a, b) = (local(false, 900, gro.clone()), local(false, 900, plain.clone()));
        assert_eq!(result(&a, &gro, None).socket_drops_unit, Some(DropUnit::Packets));
        assert_eq!(result(&b, &plain, None).socket_drops_unit, Some(DropUnit::Datagrams));
        let (sum, _, recv) = sums(&[(&b, &plain, None)]).unwrap();
        assert_eq!(sum.wireperf_receiver_socket_drops_unit, Some(DropUnit::Datagrams));
        assert_eq!(recv.wireperf_receiver_socket_drops_unit, Some(DropUnit::Datagrams));
        let (sum, _, recv) = sums(&[(&b, &plain, None), (&a, &gro, None)]).unwrap();
        assert_eq!(sum.wireperf_receiver_socket_drops_unit, Some(DropUnit::Packets));
        assert_eq!(recv.wireperf_receiver_socket_drops_unit, Some(DropUnit::Packets));
        let tx = UdpTotals { packets: 10, ..Default::default() };
        let s = local(true, 1_000, tx.clone());
        let peer = result(&a, &gro, None);
        let e = stream_end(&s, &tx, Some(&peer));
        assert_eq!(e.udp.unwrap().wireperf_receiver_socket_drops_unit, Some(DropUnit::Packets));
        // A stock receiver says nothing about its drops: no unit is claimed.
        let stock = StreamResult { packets: 10, errors: 1, ..Default::default() };
        let (sum, _, _) = sums(&[(&s, &tx, Some(&stock))]).unwrap();
        assert_eq!(sum.wireperf_receiver_socket_drops_unit, None);
    }

    #[test]
    fn sender_takes_the_receiver_half_from_the_peer() {
        let u = UdpTotals { packets: 50, send_drops: 4, ..Default::default() };
        let l = local(true, 5_000, u.clone());
        let peer = StreamResult {
            id: 1,
            bytes: 4_900,
            packets: 50,
            errors: 1,
            jitter: 0.002,
            end_time: 2.5,
            socket_drops: Some(1),
            ..Default::default()
        };
        let (sum, sent, recv) = sums(&[(&l, &u, Some(&peer))]).unwrap();
        assert_eq!((sum.bytes, sum.packets, sum.lost_packets, sum.end), (5_000, Some(50), Some(1), 2.5));
        assert_eq!(sum.receiver_socket_drops, Some(1));
        assert_eq!((sent.packets, sent.sender_drops, sent.sender), (Some(50), Some(4), true));
        assert_eq!((recv.bytes, recv.jitter_ms, recv.sender), (4_900, Some(2.0), false));
        assert_eq!(recv.lost_percent, Some(2.0));
    }
}
