//! Interval sampling: stream counters and TCP_INFO into `-J` interval objects, and the
//! per-stream totals the `end` object is built from.
//!
//! Times are seconds since the stream's start, which moves to the end of the omit period when
//! `-O` is used, exactly as iperf3 restarts its interval numbering.

use crate::stream::Stream;
use std::sync::atomic::Ordering;
use std::time::Instant;
use wireperf_protocol::schema::{Interval, IntervalStream, IntervalSum};

/// Sampling state of one stream.
#[derive(Clone, Debug)]
pub(crate) struct StreamSampler {
    /// Stream start (test start, or end of omit).
    start: Instant,
    last_t: Instant,
    last_bytes: u64,
    /// Byte total at the start (omit end): reported figures exclude the omit period.
    base_bytes: u64,
    last_retrans: u32,
    base_retrans: u32,
    /// `tcpi_dsack_dups` at the last sample and at the start (`None`: the kernel lacks it).
    last_dsack: Option<u32>,
    base_dsack: Option<u32>,
    /// TCP figures of the sender side.
    pub max_cwnd: u64,
    /// Largest peer window.
    pub max_wnd: u64,
    /// Largest RTT (µs).
    pub max_rtt: u64,
    /// Smallest RTT (µs).
    pub min_rtt: u64,
    rtt_sum: u64,
    rtt_n: u64,
    /// Reordering events seen at the last sample (cumulative, as iperf3 reports it).
    reorder: u64,
    /// TCP_INFO "limited-by" times (µs) at the last sample: busy, receive-window limited,
    /// send-buffer limited; and the delivery rate (bytes/s).
    limited: Limited,
    /// Stream duration at the final sample.
    pub end_secs: Option<f64>,
    /// UDP: figures at the last sample and at the start (omit end).
    udp_last: UdpMark,
    udp_base: UdpMark,
}

/// UDP counters at one moment.
#[derive(Clone, Copy, Debug, Default)]
struct UdpMark {
    packets: u64,
    lost: u64,
    unique: u64,
    out_of_order: u64,
    duplicates: u64,
    untimed: u64,
    socket_drops: u32,
    gro: bool,
    send_drops: u64,
}

impl UdpMark {
    fn read(s: &Stream) -> Self {
        if !s.is_udp() {
            return Self::default();
        }
        let u = &s.counters.udp;
        let r = u.recv_totals();
        Self {
            packets: u.packets.load(Ordering::Relaxed),
            lost: r.lost(),
            unique: r.unique,
            out_of_order: r.out_of_order,
            duplicates: r.duplicates,
            untimed: r.untimed,
            socket_drops: if s.sender { 0 } else { s.socket_drops() },
            gro: u.gro.load(Ordering::Relaxed),
            send_drops: u.send_drops.load(Ordering::Relaxed),
        }
    }
}

/// UDP totals of one stream. Counts are totals since the stream started, with the values at
/// the end of the omit period beside them (the results exchange carries both, as iperf3 3.14+);
/// drops and duplicates are after omit.
#[derive(Clone, Debug, Default)]
pub(crate) struct UdpTotals {
    /// Sender: datagrams sent. Receiver: highest sequence number seen.
    pub packets: u64,
    /// `packets` at omit end.
    pub omitted_packets: u64,
    /// Receiver: distinct datagrams received.
    pub unique: u64,
    /// Receiver: lost below the highest number (highest − unique).
    pub lost: u64,
    /// `lost` at omit end.
    pub omitted_lost: u64,
    /// Receiver: out-of-order datagrams.
    pub out_of_order: u64,
    /// `out_of_order` at omit end.
    pub omitted_out_of_order: u64,
    /// Receiver: duplicates after omit.
    pub duplicates: u64,
    /// Receiver: jitter, seconds.
    pub jitter: f64,
    /// Receiver: datagrams after omit that had no receive time of their own (GRO-coalesced),
    /// so jitter was measured without them.
    pub untimed: u64,
    /// Receiver: datagrams the receiving socket dropped after omit (packets when `gro`).
    pub socket_drops: u64,
    /// Receiver: the socket had UDP GRO on, so `socket_drops` counts coalesced packets.
    pub gro: bool,
    /// Sender: datagrams the kernel refused after omit.
    pub send_drops: u64,
}

/// Per-stream totals after the test.
#[derive(Clone, Debug, Default)]
pub(crate) struct StreamTotals {
    /// Bytes after omit.
    pub bytes: u64,
    /// Seconds from stream start to the final sample.
    pub secs: f64,
    /// Retransmits after omit (TCP senders).
    pub retransmits: u64,
    /// Largest cwnd (bytes).
    pub max_cwnd: u64,
    /// Largest send window.
    pub max_wnd: u64,
    /// Largest RTT.
    pub max_rtt: u64,
    /// Smallest RTT.
    pub min_rtt: u64,
    /// Mean of the per-interval RTTs.
    pub mean_rtt: u64,
    /// Reordering events seen at the last sample.
    pub reorder: u64,
    /// Of `retransmits`, those reported back as duplicates (DSACK): spurious.
    pub spurious: Option<u64>,
    /// UDP figures (UDP streams only).
    pub udp: Option<UdpTotals>,
    /// TCP sender: what limited it, from TCP_INFO at the last sample.
    pub limited: Limited,
}

/// TCP_INFO's account of what held a sender back (cumulative over the connection).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Limited {
    /// `tcpi_busy_time`: time with data in flight.
    pub busy_us: u64,
    /// `tcpi_rwnd_limited`: time stalled by the receiver's window.
    pub rwnd_us: u64,
    /// `tcpi_sndbuf_limited`: time stalled by the local send buffer.
    pub sndbuf_us: u64,
    /// `tcpi_delivery_rate`, bytes/s.
    pub delivery_rate: u64,
}

impl StreamSampler {
    pub(crate) fn new(now: Instant, s: &Stream) -> Self {
        let (retrans, dsack) = if s.sender { retrans_of(s) } else { (0, None) };
        Self {
            start: now,
            last_t: now,
            last_bytes: s.counters.bytes(),
            base_bytes: s.counters.bytes(),
            last_retrans: retrans,
            base_retrans: retrans,
            last_dsack: dsack,
            base_dsack: dsack,
            max_cwnd: 0,
            max_wnd: 0,
            max_rtt: 0,
            min_rtt: 0,
            rtt_sum: 0,
            rtt_n: 0,
            reorder: 0,
            limited: Limited::default(),
            end_secs: None,
            // At the start every UDP count is zero since the socket was created, including drops
            // that happen before this sample is taken (the peer may already be sending).
            udp_last: UdpMark::default(),
            udp_base: UdpMark::default(),
        }
    }

    /// Restarts the clock and the baselines at the end of the omit period.
    pub(crate) fn reset_for_omit(&mut self, now: Instant, s: &Stream) {
        *self = Self::new(now, s);
        self.udp_base = UdpMark::read(s);
        self.udp_last = self.udp_base;
        s.counters.udp.reset_jitter.store(true, Ordering::Relaxed);
    }

    /// Samples one interval ending at `now`.
    pub(crate) fn sample(&mut self, now: Instant, s: &Stream, omitted: bool) -> IntervalStream {
        let bytes_now = s.counters.bytes();
        let bytes = bytes_now.saturating_sub(self.last_bytes);
        let start = self.last_t.duration_since(self.start).as_secs_f64();
        let end = now.duration_since(self.start).as_secs_f64();
        let seconds = (end - start).max(0.0);
        let mut out = IntervalStream {
            socket: s.socket,
            start,
            end,
            seconds,
            bytes,
            bits_per_second: rate(bytes, seconds),
            omitted,
            sender: s.sender,
            ..Default::default()
        };
        if s.is_udp() {
            let m = UdpMark::read(s);
            let packets = m.packets.saturating_sub(self.udp_last.packets) as i64;
            out.packets = Some(packets);
            if !s.sender {
                let lost = m.lost as i64 - self.udp_last.lost as i64;
                out.jitter_ms = Some(f64::from_bits(s.counters.udp.jitter_bits.load(Ordering::Relaxed)) * 1000.0);
                out.lost_packets = Some(lost);
                out.lost_percent = Some(percent(lost, packets));
                out.wireperf_jitter_untimed = Some(m.untimed.saturating_sub(self.udp_last.untimed));
            }
            self.udp_last = m;
        } else if s.sender {
            if let Ok(ti) = wireperf_sys::tcp_info(s.socket_ref()) {
                let retrans = ti.total_retrans.saturating_sub(self.last_retrans);
                self.last_retrans = ti.total_retrans;
                if ti.has_dsack_dups() {
                    self.last_dsack = Some(ti.dsack_dups);
                }
                let cwnd = ti.cwnd_bytes();
                let rtt = u64::from(ti.rtt_us);
                out.retransmits = Some(u64::from(retrans));
                out.snd_cwnd = Some(cwnd);
                out.snd_wnd = Some(u64::from(ti.snd_wnd));
                out.rtt = Some(rtt);
                out.rttvar = Some(u64::from(ti.rttvar_us));
                out.pmtu = Some(u64::from(ti.pmtu));
                out.reorder = Some(u64::from(ti.reord_seen));
                self.reorder = u64::from(ti.reord_seen);
                self.max_cwnd = self.max_cwnd.max(cwnd);
                self.max_wnd = self.max_wnd.max(u64::from(ti.snd_wnd));
                self.max_rtt = self.max_rtt.max(rtt);
                self.min_rtt = if self.rtt_n == 0 { rtt } else { self.min_rtt.min(rtt) };
                self.rtt_sum += rtt;
                self.rtt_n += 1;
                self.limited = Limited {
                    busy_us: ti.busy_time_us,
                    rwnd_us: ti.rwnd_limited_us,
                    sndbuf_us: ti.sndbuf_limited_us,
                    delivery_rate: ti.delivery_rate,
                };
            } else {
                out.retransmits = Some(0);
            }
        }
        self.last_t = now;
        self.last_bytes = bytes_now;
        out
    }

    /// Spurious retransmits since the start: the DSACK duplicates, at most the retransmits (a
    /// duplicate can also be an original that was delayed, never retransmitted).
    fn spurious(&self) -> Option<u64> {
        let dups = self.last_dsack?.wrapping_sub(self.base_dsack?);
        Some(u64::from(dups).min(u64::from(self.last_retrans.saturating_sub(self.base_retrans))))
    }

    /// Marks the final sample time (TEST_END).
    pub(crate) fn finish(&mut self, now: Instant) {
        self.end_secs = Some(now.duration_since(self.start).as_secs_f64());
    }

    /// Totals after the final sample (call after the stream's counters are final).
    pub(crate) fn totals(&self, s: &Stream) -> StreamTotals {
        let secs = self.end_secs.unwrap_or_else(|| self.last_t.duration_since(self.start).as_secs_f64());
        StreamTotals {
            bytes: s.counters.bytes().saturating_sub(self.base_bytes),
            secs,
            retransmits: u64::from(self.last_retrans.saturating_sub(self.base_retrans)),
            max_cwnd: self.max_cwnd,
            max_wnd: self.max_wnd,
            max_rtt: self.max_rtt,
            min_rtt: self.min_rtt,
            mean_rtt: self.rtt_sum.checked_div(self.rtt_n).unwrap_or(0),
            reorder: self.reorder,
            spurious: self.spurious(),
            limited: self.limited,
            udp: s.is_udp().then(|| {
                let (m, b) = (UdpMark::read(s), self.udp_base);
                UdpTotals {
                    packets: m.packets,
                    omitted_packets: b.packets,
                    unique: m.unique,
                    lost: m.lost,
                    omitted_lost: b.lost,
                    out_of_order: m.out_of_order,
                    omitted_out_of_order: b.out_of_order,
                    duplicates: m.duplicates.saturating_sub(b.duplicates),
                    jitter: f64::from_bits(s.counters.udp.jitter_bits.load(Ordering::Relaxed)),
                    untimed: m.untimed.saturating_sub(b.untimed),
                    socket_drops: u64::from(m.socket_drops.wrapping_sub(b.socket_drops)),
                    gro: m.gro,
                    send_drops: m.send_drops.saturating_sub(b.send_drops),
                }
            }),
        }
    }
}

/// One local stream's identity and totals.
#[derive(Clone, Debug)]
pub(crate) struct LocalStream {
    /// Bracket number.
    pub socket: i32,
    /// Wire id.
    pub wire_id: i32,
    /// This host sends on it.
    pub sender: bool,
    /// Totals.
    pub totals: StreamTotals,
}

/// A TCP stream's `tcpi_total_retrans` and `tcpi_dsack_dups` (when the kernel has it).
fn retrans_of(s: &Stream) -> (u32, Option<u32>) {
    if s.is_udp() {
        return (0, None);
    }
    wireperf_sys::tcp_info(s.socket_ref())
        .map(|t| (t.total_retrans, t.has_dsack_dups().then_some(t.dsack_dups)))
        .unwrap_or((0, None))
}

/// Loss percentage, 0 when nothing was expected.
pub(crate) fn percent(lost: i64, total: i64) -> f64 {
    if total > 0 { 100.0 * lost as f64 / total as f64 } else { 0.0 }
}

/// Bits per second, 0 for an empty interval.
pub(crate) fn rate(bytes: u64, secs: f64) -> f64 {
    if secs > 0.0 { bytes as f64 * 8.0 / secs } else { 0.0 }
}

/// Sums the streams of one direction, iperf3-style (times from the first stream).
pub(crate) fn sum_streams(streams: &[&IntervalStream], omitted: bool, sender: bool) -> IntervalSum {
    let first = streams.first();
    let start = first.map_or(0.0, |s| s.start);
    let end = first.map_or(0.0, |s| s.end);
    let seconds = first.map_or(0.0, |s| s.seconds);
    let bytes: u64 = streams.iter().map(|s| s.bytes).sum();
    let retransmits = if streams.iter().any(|s| s.retransmits.is_some()) {
        Some(streams.iter().filter_map(|s| s.retransmits).sum())
    } else {
        None
    };
    let mut sum = IntervalSum {
        start,
        end,
        seconds,
        bytes,
        bits_per_second: rate(bytes, seconds),
        retransmits,
        omitted,
        sender,
        ..Default::default()
    };
    // UDP, as iperf3: packets add up; a receiving direction also gets lost, loss % and the
    // mean of the streams' jitters.
    if streams.iter().any(|s| s.packets.is_some()) {
        let packets: i64 = streams.iter().filter_map(|s| s.packets).sum();
        sum.packets = Some(packets);
        if streams.iter().any(|s| s.jitter_ms.is_some()) {
            let lost: i64 = streams.iter().filter_map(|s| s.lost_packets).sum();
            let jit: f64 = streams.iter().filter_map(|s| s.jitter_ms).sum();
            sum.jitter_ms = Some(jit / streams.len().max(1) as f64);
            sum.lost_packets = Some(lost);
            sum.lost_percent = Some(percent(lost, packets));
        }
        if streams.iter().any(|s| s.wireperf_jitter_untimed.is_some()) {
            sum.wireperf_jitter_untimed = Some(streams.iter().filter_map(|s| s.wireperf_jitter_untimed).sum());
        }
    }
    sum
}

/// Builds one interval object from per-stream samples; with `bidir`, the first `split`
/// streams form `sum` and the rest `sum_bidir_reverse`.
pub(crate) fn build_interval(samples: Vec<IntervalStream>, split: Option<usize>, omitted: bool) -> Interval {
    let (a, b): (Vec<&IntervalStream>, Vec<&IntervalStream>) = match split {
        Some(n) => (samples.iter().take(n).collect(), samples.iter().skip(n).collect()),
        None => (samples.iter().collect(), Vec::new()),
    };
    let sender_a = a.first().is_some_and(|s| s.sender);
    let sum = sum_streams(&a, omitted, sender_a);
    let sum_bidir_reverse = split.map(|_| {
        let sender_b = b.first().is_some_and(|s| s.sender);
        sum_streams(&b, omitted, sender_b)
    });
    Interval { streams: samples, sum, sum_bidir_reverse }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_use_the_first_streams_times_and_add_bytes() {
        let a = IntervalStream {
            start: 0.0,
            end: 1.0,
            seconds: 1.0,
            bytes: 100,
            retransmits: Some(2),
            sender: true,
            ..Default::default()
        };
        let b = IntervalStream {
            start: 0.0,
            end: 1.1,
            seconds: 1.1,
            bytes: 50,
            retransmits: Some(1),
            sender: true,
            ..Default::default()
        };
        let s = sum_streams(&[&a, &b], false, true);
        assert_eq!((s.bytes, s.retransmits, s.seconds), (150, Some(3), 1.0));
        assert_eq!(s.bits_per_second, 1200.0);
    }

    /// A receiving direction's sum says how many of its datagrams the jitter left out, so a
    /// `-P 2` interval under GRO is flagged like its streams; a sending direction (no receiver
    /// figure) stays without the key.
    #[test]
    fn interval_sum_adds_the_streams_untimed_datagrams() {
        let rx = |untimed| IntervalStream {
            packets: Some(1000),
            jitter_ms: Some(0.01),
            lost_packets: Some(0),
            wireperf_jitter_untimed: Some(untimed),
            ..Default::default()
        };
        let s = sum_streams(&[&rx(0), &rx(640)], false, false);
        assert_eq!((s.packets, s.wireperf_jitter_untimed), (Some(2000), Some(640)));
        let tx = IntervalStream { packets: Some(1000), sender: true, ..Default::default() };
        assert_eq!(sum_streams(&[&tx], false, true).wireperf_jitter_untimed, None);
    }

    #[test]
    fn bidir_interval_splits_sums() {
        let tx = IntervalStream { bytes: 10, seconds: 1.0, sender: true, ..Default::default() };
        let rx = IntervalStream { bytes: 20, seconds: 1.0, sender: false, ..Default::default() };
        let i = build_interval(vec![tx, rx], Some(1), false);
        assert_eq!(i.sum.bytes, 10);
        assert!(i.sum.sender);
        let r = i.sum_bidir_reverse.unwrap();
        assert_eq!((r.bytes, r.sender), (20, false));
    }
}
