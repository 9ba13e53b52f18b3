//! Pure counters the stream loops feed; no clocks or sockets, so they are tested directly.

use crate::event::UdpFigures;
use wireperf_engine::timing::Jitter;

/// Bytes and operations since the start and since the last interval.
#[derive(Clone, Debug, Default)]
pub struct Counter {
    /// Whole-run bytes.
    pub bytes: u64,
    /// Whole-run operations.
    pub ops: u64,
    /// Whole-run failed operations.
    pub errs: u64,
    /// Whole-run read-size histogram.
    pub hist: [u64; 8],
    last_bytes: u64,
    last_ops: u64,
    last_errs: u64,
    last_hist: [u64; 8],
    bin_width: usize,
}

/// The figures of one span.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Span {
    /// Bytes.
    pub bytes: u64,
    /// Operations.
    pub ops: u64,
    /// Failed operations.
    pub errs: u64,
    /// Read sizes.
    pub hist: [u64; 8],
}

impl Counter {
    /// A counter whose read histogram splits `len` into eight bins.
    pub fn new(len: usize) -> Self {
        Counter { bin_width: (len / 8).max(1), ..Default::default() }
    }

    /// Counts one successful operation of `n` bytes.
    pub fn add(&mut self, n: usize) {
        self.bytes += n as u64;
        self.ops += 1;
        if n > 0 {
            let bin = ((n - 1) / self.bin_width).min(7);
            self.hist[bin] += 1;
        }
    }

    /// Counts a failed operation.
    pub fn fail(&mut self) {
        self.errs += 1;
    }

    /// The span since the last call, and starts a new one.
    pub fn take_interval(&mut self) -> Span {
        let mut hist = [0u64; 8];
        for (i, h) in hist.iter_mut().enumerate() {
            *h = self.hist[i] - self.last_hist[i];
        }
        let s = Span {
            bytes: self.bytes - self.last_bytes,
            ops: self.ops - self.last_ops,
            errs: self.errs - self.last_errs,
            hist,
        };
        self.last_bytes = self.bytes;
        self.last_ops = self.ops;
        self.last_errs = self.errs;
        self.last_hist = self.hist;
        s
    }

    /// The whole run.
    pub fn total(&self) -> Span {
        Span { bytes: self.bytes, ops: self.ops, errs: self.errs, hist: self.hist }
    }
}

/// Running min/max/mean/variance (Welford), for one-way transit times.
#[derive(Clone, Copy, Debug, Default)]
pub struct Mmm {
    /// Samples.
    pub cnt: u64,
    /// Smallest.
    pub min: f64,
    /// Largest.
    pub max: f64,
    /// Sum.
    pub sum: f64,
    /// Mean.
    pub mean: f64,
    /// Sum of squared deviations.
    pub m2: f64,
}

impl Mmm {
    /// Adds a sample.
    pub fn add(&mut self, v: f64) {
        if self.cnt == 0 {
            self.min = v;
            self.max = v;
        } else {
            self.min = self.min.min(v);
            self.max = self.max.max(v);
        }
        self.cnt += 1;
        self.sum += v;
        let d = v - self.mean;
        self.mean += d / self.cnt as f64;
        self.m2 += d * (v - self.mean);
    }

    /// Sample standard deviation.
    pub fn stdev(&self) -> f64 {
        if self.cnt < 2 { 0.0 } else { (self.m2 / (self.cnt - 1) as f64).sqrt() }
    }
}

/// UDP receiver accounting with iperf 2's rules: a gap in sequence numbers counts as lost, a
/// number below the highest seen counts as out of order (and is taken back from the lost
/// count), jitter is RFC 1889's running estimate over one-way transit times (the engine's
/// [`Jitter`], so iperf3 and iperf 2 tests compute it one way).
#[derive(Clone, Debug, Default)]
pub struct UdpRecv {
    /// Highest sequence number seen (iperf 2's "total datagrams").
    pub max_id: i64,
    /// Gaps seen.
    pub gaps: i64,
    /// Late arrivals.
    pub out_of_order: i64,
    /// Datagrams received.
    pub received: u64,
    /// Jitter over signed transit times (iperf 2 does not take their absolute value).
    pub jitter: Jitter,
    /// Transit statistics, seconds.
    pub transit: Mmm,
    iv_max_id: i64,
    iv_gaps: i64,
    iv_ooo: i64,
    iv_received: u64,
    iv_transit: Mmm,
}

impl UdpRecv {
    /// Accounts for a datagram with sequence `id` (made positive), sent at `sent` and received
    /// at `recv` (seconds, both wall clock).
    pub fn on_datagram(&mut self, id: i64, sent: f64, recv: f64) {
        self.received += 1;
        if id != self.max_id + 1 {
            if id < self.max_id + 1 {
                self.out_of_order += 1;
            } else {
                self.gaps += id - self.max_id - 1;
            }
        }
        if id > self.max_id {
            self.max_id = id;
        }
        let transit = recv - sent;
        self.jitter.add(transit);
        self.transit.add(transit);
        self.iv_transit.add(transit);
    }

    /// Lost datagrams over the run.
    pub fn lost(&self) -> i64 {
        (self.gaps - self.out_of_order).max(0)
    }

    /// Whole-run figures.
    pub fn total(&self) -> UdpFigures {
        UdpFigures {
            jitter_ms: self.jitter.value() * 1e3,
            lost: self.lost(),
            total: self.max_id,
            out_of_order: self.out_of_order,
            received: self.received,
            latency_ms: latency(&self.transit),
        }
    }

    /// Figures since the last interval.
    pub fn take_interval(&mut self) -> UdpFigures {
        let ooo = self.out_of_order - self.iv_ooo;
        let f = UdpFigures {
            jitter_ms: self.jitter.value() * 1e3,
            lost: ((self.gaps - self.iv_gaps) - ooo).max(0),
            total: self.max_id - self.iv_max_id,
            out_of_order: ooo,
            received: self.received - self.iv_received,
            latency_ms: latency(&self.iv_transit),
        };
        self.iv_max_id = self.max_id;
        self.iv_gaps = self.gaps;
        self.iv_ooo = self.out_of_order;
        self.iv_received = self.received;
        self.iv_transit = Mmm::default();
        f
    }
}

fn latency(m: &Mmm) -> Option<[f64; 4]> {
    (m.cnt > 0).then(|| [m.mean * 1e3, m.min * 1e3, m.max * 1e3, m.stdev() * 1e3])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loss_and_reorder_follow_iperf2() {
        let mut u = UdpRecv::default();
        // 1 2 5 3 6: 3 and 4 look lost at 5, 3 then arrives late.
        for id in [1, 2, 5, 3, 6] {
            u.on_datagram(id, 0.0, 0.001);
        }
        assert_eq!(u.max_id, 6);
        assert_eq!(u.out_of_order, 1);
        assert_eq!(u.lost(), 1);
        assert_eq!(u.jitter.value(), 0.0);
    }

    #[test]
    fn jitter_is_rfc1889() {
        let mut u = UdpRecv::default();
        u.on_datagram(1, 0.0, 0.010);
        u.on_datagram(2, 1.0, 1.026);
        assert!((u.jitter.value() - 0.001).abs() < 1e-12);
    }

    #[test]
    fn histogram_bins_are_eighths() {
        let mut c = Counter::new(800);
        c.add(1);
        c.add(100);
        c.add(101);
        c.add(800);
        assert_eq!(c.hist, [2, 1, 0, 0, 0, 0, 0, 1]);
        assert_eq!(c.take_interval().ops, 4);
        assert_eq!(c.take_interval().ops, 0);
    }
}
