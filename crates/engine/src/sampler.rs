//! Interval sampling: stream counters and TCP_INFO into `-J` interval objects, and the
//! per-stream totals the `end` object is built from.
//!
//! Times are seconds since the stream's start, which moves to the end of the omit period when
//! `-O` is used, exactly as iperf3 restarts its interval numbering.

use crate::stream::Stream;
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
    /// Stream duration at the final sample.
    pub end_secs: Option<f64>,
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
}

impl StreamSampler {
    pub(crate) fn new(now: Instant, s: &Stream) -> Self {
        let retrans = if s.sender { retrans_of(s) } else { 0 };
        Self {
            start: now,
            last_t: now,
            last_bytes: s.counters.bytes(),
            base_bytes: s.counters.bytes(),
            last_retrans: retrans,
            base_retrans: retrans,
            max_cwnd: 0,
            max_wnd: 0,
            max_rtt: 0,
            min_rtt: 0,
            rtt_sum: 0,
            rtt_n: 0,
            end_secs: None,
        }
    }

    /// Restarts the clock and the baselines at the end of the omit period.
    pub(crate) fn reset_for_omit(&mut self, now: Instant, s: &Stream) {
        *self = Self::new(now, s);
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
        if s.sender {
            if let Ok(ti) = wireperf_sys::tcp_info(s.socket_ref()) {
                let retrans = ti.total_retrans.saturating_sub(self.last_retrans);
                self.last_retrans = ti.total_retrans;
                let cwnd = ti.cwnd_bytes();
                let rtt = u64::from(ti.rtt_us);
                out.retransmits = Some(u64::from(retrans));
                out.snd_cwnd = Some(cwnd);
                out.snd_wnd = Some(u64::from(ti.snd_wnd));
                out.rtt = Some(rtt);
                out.rttvar = Some(u64::from(ti.rttvar_us));
                out.pmtu = Some(u64::from(ti.pmtu));
                self.max_cwnd = self.max_cwnd.max(cwnd);
                self.max_wnd = self.max_wnd.max(u64::from(ti.snd_wnd));
                self.max_rtt = self.max_rtt.max(rtt);
                self.min_rtt = if self.rtt_n == 0 { rtt } else { self.min_rtt.min(rtt) };
                self.rtt_sum += rtt;
                self.rtt_n += 1;
            } else {
                out.retransmits = Some(0);
            }
        }
        self.last_t = now;
        self.last_bytes = bytes_now;
        out
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
        }
    }
}

fn retrans_of(s: &Stream) -> u32 {
    wireperf_sys::tcp_info(s.socket_ref()).map(|t| t.total_retrans).unwrap_or(0)
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
    IntervalSum {
        start,
        end,
        seconds,
        bytes,
        bits_per_second: rate(bytes, seconds),
        retransmits,
        omitted,
        sender,
        ..Default::default()
    }
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
        let a = IntervalStream { start: 0.0, end: 1.0, seconds: 1.0, bytes: 100, retransmits: Some(2), sender: true, ..Default::default() };
        let b = IntervalStream { start: 0.0, end: 1.1, seconds: 1.1, bytes: 50, retransmits: Some(1), sender: true, ..Default::default() };
        let s = sum_streams(&[&a, &b], false, true);
        assert_eq!((s.bytes, s.retransmits, s.seconds), (150, Some(3), 1.0));
        assert_eq!(s.bits_per_second, 1200.0);
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
