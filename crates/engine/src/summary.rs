//! The `end` object: local totals joined with the peer's results, iperf3's way.
//!
//! For every stream the side that sent knows what was sent and the side that received knows
//! what arrived; the results exchange gives each side the other half. Sums take their times
//! from the first stream of their direction, as iperf3 does.

use crate::sampler::{LocalStream, rate};
use wireperf_protocol::schema::{CpuUtilization, End, EndStream, Summary};
use wireperf_protocol::{ExchangeResults, StreamResult};
use wireperf_sys::CpuUtil;

/// Everything `end` is made of.
pub(crate) struct EndInputs<'a> {
    /// Local streams in creation order.
    pub streams: &'a [LocalStream],
    /// The peer's results (absent if the exchange failed).
    pub peer: Option<&'a ExchangeResults>,
    /// Local CPU use.
    pub cpu: CpuUtil,
    /// Local congestion control.
    pub congestion: Option<String>,
    /// `--bidir`: the first `n` streams are one direction.
    pub bidir_split: Option<usize>,
}

fn peer_stream(peer: Option<&ExchangeResults>, id: i32) -> Option<&StreamResult> {
    peer.and_then(|p| p.streams.iter().find(|s| s.id == id))
}

fn stream_end(l: &LocalStream, peer: Option<&StreamResult>) -> EndStream {
    let t = &l.totals;
    let peer_secs = peer.map(|p| p.end_time - p.start_time).filter(|&s| s > 0.0).unwrap_or(t.secs);
    let peer_bytes = peer.map_or(0, |p| p.bytes);
    let local = |sender_flag: bool| Summary {
        socket: Some(l.socket),
        start: 0.0,
        end: t.secs,
        seconds: t.secs,
        bytes: t.bytes,
        bits_per_second: rate(t.bytes, t.secs),
        sender: sender_flag,
        ..Default::default()
    };
    let remote = |sender_flag: bool| Summary {
        socket: Some(l.socket),
        start: 0.0,
        end: peer_secs,
        seconds: t.secs,
        bytes: peer_bytes,
        bits_per_second: rate(peer_bytes, peer_secs),
        sender: sender_flag,
        ..Default::default()
    };
    if l.sender {
        let sender = Summary {
            retransmits: Some(t.retransmits),
            reorder: Some(t.reorder),
            wireperf_spurious_retransmits: t.spurious,
            max_snd_cwnd: Some(t.max_cwnd),
            max_snd_wnd: Some(t.max_wnd),
            max_rtt: Some(t.max_rtt),
            min_rtt: Some(t.min_rtt),
            mean_rtt: Some(t.mean_rtt),
            busy_time_us: (t.limited.busy_us > 0).then_some(t.limited.busy_us),
            rwnd_limited_us: (t.limited.busy_us > 0).then_some(t.limited.rwnd_us),
            sndbuf_limited_us: (t.limited.busy_us > 0).then_some(t.limited.sndbuf_us),
            delivery_rate: (t.limited.delivery_rate > 0).then_some(t.limited.delivery_rate),
            ..local(true)
        };
        EndStream { sender: Some(sender), receiver: Some(remote(true)), ..Default::default() }
    } else {
        let peer_retr = peer.map(|p| p.retransmits).filter(|&r| r >= 0);
        let mut sender = remote(false);
        if let Some(r) = peer_retr {
            sender.retransmits = Some(r as u64);
            // The peer's TCP_INFO figures do not cross the results exchange; 3.22 prints 0.
            sender.reorder = Some(0);
            sender.max_snd_cwnd = Some(0);
            sender.max_snd_wnd = Some(0);
            sender.max_rtt = Some(0);
            sender.min_rtt = Some(0);
            sender.mean_rtt = Some(0);
        }
        EndStream { sender: Some(sender), receiver: Some(local(false)), ..Default::default() }
    }
}

fn sum_side(streams: &[EndStream], pick: fn(&EndStream) -> Option<&Summary>, sender: bool) -> Summary {
    let sides: Vec<&Summary> = streams.iter().filter_map(pick).collect();
    let first = sides.first();
    let end = first.map_or(0.0, |s| s.end);
    let bytes: u64 = sides.iter().map(|s| s.bytes).sum();
    let retransmits = if sides.iter().any(|s| s.retransmits.is_some()) {
        Some(sides.iter().filter_map(|s| s.retransmits).sum())
    } else {
        None
    };
    Summary {
        socket: None,
        start: 0.0,
        end,
        seconds: first.map_or(0.0, |s| s.seconds),
        bytes,
        bits_per_second: rate(bytes, end),
        retransmits,
        sender,
        ..Default::default()
    }
}

/// The UDP `end`: per-stream `udp` objects and, per direction, the mixed `sum`, `sum_sent`
/// and `sum_received`.
fn build_end_udp(inp: &EndInputs<'_>) -> End {
    let entries: Vec<_> = inp
        .streams
        .iter()
        .filter_map(|l| l.totals.udp.as_ref().map(|u| (l, u, peer_stream(inp.peer, l.wire_id))))
        .collect();
    let split = inp.bidir_split.unwrap_or(entries.len()).min(entries.len());
    let (a, b) = entries.split_at(split);
    let mut end = End {
        streams: entries.iter().map(|(l, u, p)| crate::summary_udp::stream_end(l, u, *p)).collect(),
        ..Default::default()
    };
    if let Some((sum, sent, recv)) = crate::summary_udp::sums(a) {
        end.sum = Some(sum);
        end.sum_sent = Some(sent);
        end.sum_received = Some(recv);
    }
    if inp.bidir_split.is_some()
        && let Some((sum, sent, recv)) = crate::summary_udp::sums(b)
    {
        end.sum_bidir_reverse = Some(sum);
        end.sum_sent_bidir_reverse = Some(sent);
        end.sum_received_bidir_reverse = Some(recv);
    }
    end
}

/// Builds the `end` object.
pub(crate) fn build_end(inp: &EndInputs<'_>) -> End {
    if inp.streams.iter().any(|l| l.totals.udp.is_some()) {
        let mut end = build_end_udp(inp);
        end.cpu_utilization_percent = Some(cpu_of(inp));
        return end;
    }
    let streams: Vec<EndStream> = inp.streams.iter().map(|l| stream_end(l, peer_stream(inp.peer, l.wire_id))).collect();
    let split = inp.bidir_split.unwrap_or(streams.len()).min(streams.len());
    let (a, b) = streams.split_at(split);
    let dir_a = inp.streams.first().is_some_and(|s| s.sender);
    let dir_b = inp.streams.get(split).is_some_and(|s| s.sender);
    let mut end = End {
        sum_sent: Some(sum_side(a, |s| s.sender.as_ref(), dir_a)),
        sum_received: Some(sum_side(a, |s| s.receiver.as_ref(), dir_a)),
        ..Default::default()
    };
    if inp.bidir_split.is_some() {
        end.sum_sent_bidir_reverse = Some(sum_side(b, |s| s.sender.as_ref(), dir_b));
        end.sum_received_bidir_reverse = Some(sum_side(b, |s| s.receiver.as_ref(), dir_b));
    }
    end.streams = streams;
    end.cpu_utilization_percent = Some(cpu_of(inp));
    let peer_cc = inp.peer.and_then(|p| p.congestion_used.clone());
    let local_sends = inp.streams.iter().any(|s| s.sender);
    let (snd, rcv) = if local_sends {
        (inp.congestion.clone(), peer_cc.or_else(|| inp.congestion.clone()))
    } else {
        (peer_cc, inp.congestion.clone())
    };
    end.sender_tcp_congestion = snd;
    end.receiver_tcp_congestion = rcv;
    end
}

fn cpu_of(inp: &EndInputs<'_>) -> CpuUtilization {
    CpuUtilization {
        host_total: inp.cpu.total_pct,
        host_user: inp.cpu.user_pct,
        host_system: inp.cpu.system_pct,
        remote_total: inp.peer.map_or(0.0, |p| p.cpu_util_total),
        remote_user: inp.peer.map_or(0.0, |p| p.cpu_util_user),
        remote_system: inp.peer.map_or(0.0, |p| p.cpu_util_system),
    }
}

/// The results message this side sends to the peer.
pub(crate) fn local_results(inp: &EndInputs<'_>) -> ExchangeResults {
    let any_sender = inp.streams.iter().any(|s| s.sender);
    let udp = inp.streams.iter().any(|s| s.totals.udp.is_some());
    ExchangeResults {
        cpu_util_total: inp.cpu.total_pct,
        cpu_util_user: inp.cpu.user_pct,
        cpu_util_system: inp.cpu.system_pct,
        // iperf3: -1 for a receiver only, 1 for a TCP sender with retransmit counts, 0 otherwise.
        sender_has_retransmits: if !any_sender {
            -1
        } else if udp {
            0
        } else {
            1
        },
        congestion_used: inp.congestion.clone(),
        server_output_json: None,
        server_output_text: None,
        watch: None,
        streams: inp
            .streams
            .iter()
            .map(|l| match &l.totals.udp {
                Some(u) => crate::summary_udp::result(l, u, peer_stream(inp.peer, l.wire_id)),
                None => StreamResult {
                    id: l.wire_id,
                    bytes: l.totals.bytes,
                    retransmits: if l.sender { l.totals.retransmits as i64 } else { -1 },
                    omitted_errors: Some(0),
                    omitted_packets: Some(0),
                    end_time: l.totals.secs,
                    ..Default::default()
                },
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sampler::StreamTotals;

    fn ls(socket: i32, wire_id: i32, sender: bool, bytes: u64) -> LocalStream {
        LocalStream {
            socket,
            wire_id,
            sender,
            totals: StreamTotals { bytes, secs: 2.0, retransmits: 3, ..Default::default() },
        }
    }

    #[test]
    fn reverse_client_takes_sender_half_from_peer() {
        let streams = [ls(5, 1, false, 1000)];
        let peer = ExchangeResults {
            sender_has_retransmits: 1,
            streams: vec![StreamResult { id: 1, bytes: 1000, retransmits: 7, end_time: 2.5, ..Default::default() }],
            ..Default::default()
        };
        let inp = EndInputs {
            streams: &streams,
            peer: Some(&peer),
            cpu: CpuUtil::default(),
            congestion: None,
            bidir_split: None,
        };
        let end = build_end(&inp);
        let s = end.streams[0].sender.as_ref().unwrap();
        assert_eq!((s.bytes, s.retransmits, s.end, s.sender), (1000, Some(7), 2.5, false));
        let sum = end.sum_sent.unwrap();
        assert!(!sum.sender);
        assert_eq!(sum.bits_per_second, 1000.0 * 8.0 / 2.5);
        assert_eq!(local_results(&inp).sender_has_retransmits, -1);
    }

    #[test]
    fn bidir_splits_sums_by_direction() {
        let streams = [ls(5, 1, true, 10), ls(7, 3, false, 20)];
        let inp = EndInputs {
            streams: &streams,
            peer: None,
            cpu: CpuUtil::default(),
            congestion: None,
            bidir_split: Some(1),
        };
        let end = build_end(&inp);
        assert_eq!(end.sum_sent.unwrap().bytes, 10);
        assert_eq!(end.sum_received_bidir_reverse.unwrap().bytes, 20);
    }
}
