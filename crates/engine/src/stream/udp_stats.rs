//! UDP receiver accounting: loss, order, duplicates and jitter, exactly and sans-I/O.
//!
//! iperf3 counts a gap in the sequence numbers as lost and, when a datagram below the highest
//! number arrives, counts it out of order and takes one off the loss count, whether the datagram
//! filled a gap or was a duplicate (so duplicates hide real loss). wireperf remembers which
//! numbers arrived, in a sliding bitmap window behind the highest number, so:
//! * `lost` = `highest` − datagrams received once: a datagram lost on the path counts once, a
//!   reordered one not at all (it is counted out of order when it arrives late);
//! * a second copy of a datagram counts as a duplicate and changes nothing else.
//!
//! A datagram older than the window (more than [`WINDOW`] numbers behind the highest) cannot be
//! told apart; it is treated as iperf3 treats it (late, fills a gap) unless nothing is missing.
//!
//! Jitter is iperf3's (RFC 1889 §A.8, [`crate::timing::Jitter`]) so the numbers are comparable:
//! for every datagram, `transit = |arrival − sent|`, `D = |transit − previous transit|`,
//! `jitter += (D − jitter)/16`, with the first datagram after a reset only priming
//! `previous transit`.
//!
//! What is fed in decides whether the figure means anything. `arrival` is the kernel's receive
//! time of that very datagram (`SO_TIMESTAMPNS`), not the time the thread read a batch, which
//! would give all the datagrams of one `recvmmsg` one arrival and flatten jitter towards 0. A
//! datagram that arrived inside a GRO-coalesced packet has no receive time of its own (the
//! packet has one): it is recorded without one ([`UdpRecvStats::record`] with `None`), feeds
//! no transit time, and is counted in [`UdpRecvTotals::untimed`] so the output can say that
//! jitter was measured on the other datagrams only.

use crate::timing::Jitter;

/// Sequence numbers remembered behind the highest one (bits; 128 KiB per stream).
pub(crate) const WINDOW: u64 = 1 << 20;

/// What the receiver has counted so far (all totals since the stream started).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct UdpRecvTotals {
    /// Highest sequence number seen (iperf3's receiver `packets`).
    pub highest: u64,
    /// Distinct sequence numbers received.
    pub unique: u64,
    /// Datagrams that arrived after a higher number (and were not duplicates).
    pub out_of_order: u64,
    /// Second and later copies of a datagram.
    pub duplicates: u64,
    /// Jitter in seconds.
    pub jitter: f64,
    /// Datagrams without a receive time of their own (GRO-coalesced): not in the jitter.
    pub untimed: u64,
}

impl UdpRecvTotals {
    /// Datagrams missing below the highest number seen.
    pub(crate) fn lost(&self) -> u64 {
        self.highest.saturating_sub(self.unique)
    }
}

/// The receiver's state for one stream.
#[derive(Debug)]
pub(crate) struct UdpRecvStats {
    totals: UdpRecvTotals,
    /// Bit `seq % WINDOW` is set when `seq` (within the window behind `highest`) arrived.
    seen: Vec<u64>,
    jitter: Jitter,
}

impl Default for UdpRecvStats {
    fn default() -> Self {
        Self::new()
    }
}

impl UdpRecvStats {
    /// A receiver that has seen nothing.
    pub(crate) fn new() -> Self {
        Self { totals: UdpRecvTotals::default(), seen: vec![0; (WINDOW / 64) as usize], jitter: Jitter::default() }
    }

    /// The counts so far.
    pub(crate) fn totals(&self) -> UdpRecvTotals {
        self.totals
    }

    /// Restarts jitter (end of the omit period, as iperf3 does); the counts go on, the caller
    /// keeps a baseline.
    pub(crate) fn reset_jitter(&mut self) {
        self.jitter.reset();
        self.totals.jitter = self.jitter.value();
    }

    fn bit(&self, seq: u64) -> bool {
        let i = (seq % WINDOW) as usize;
        self.seen[i / 64] & (1 << (i % 64)) != 0
    }

    fn set(&mut self, seq: u64, on: bool) {
        let i = (seq % WINDOW) as usize;
        if on {
            self.seen[i / 64] |= 1 << (i % 64);
        } else {
            self.seen[i / 64] &= !(1 << (i % 64));
        }
    }

    /// Clears the bits of the numbers the window slides over when `highest` moves to `seq`.
    fn advance_to(&mut self, seq: u64) {
        let from = self.totals.highest + 1;
        if seq - from >= WINDOW {
            self.seen.iter_mut().for_each(|w| *w = 0);
            return;
        }
        for s in from..seq {
            self.set(s, false);
        }
    }

    /// Records one datagram with sequence number `seq`, sent at `sent` and received at `arrival`
    /// (seconds on each host's monotonic clock); `arrival` is `None` when the datagram has no
    /// receive time of its own (it came coalesced behind another).
    pub(crate) fn record(&mut self, seq: u64, sent: f64, arrival: Option<f64>) {
        match arrival {
            Some(arrival) => {
                self.jitter.add((arrival - sent).abs());
                self.totals.jitter = self.jitter.value();
            }
            None => self.totals.untimed += 1,
        }
        self.count(seq);
    }

    /// Loss, order and duplicate accounting for one datagram.
    fn count(&mut self, seq: u64) {
        let t = &mut self.totals;
        if seq > t.highest {
            self.advance_to(seq);
            self.set(seq, true);
            let t = &mut self.totals;
            t.highest = seq;
            t.unique += 1;
        } else if t.highest - seq < WINDOW && seq > 0 {
            if self.bit(seq) {
                self.totals.duplicates += 1;
            } else {
                self.set(seq, true);
                self.totals.unique += 1;
                self.totals.out_of_order += 1;
            }
        } else if t.unique < t.highest {
            // Too old to tell: assume it fills a gap, as iperf3 does.
            t.unique += 1;
            t.out_of_order += 1;
        } else {
            t.duplicates += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(seqs: &[u64]) -> UdpRecvTotals {
        let mut s = UdpRecvStats::new();
        for &q in seqs {
            s.record(q, 0.0, Some(0.0));
        }
        s.totals()
    }

    #[test]
    fn in_order_has_no_loss() {
        let t = run(&[1, 2, 3, 4, 5]);
        assert_eq!((t.highest, t.lost(), t.out_of_order, t.duplicates), (5, 0, 0, 0));
    }

    #[test]
    fn gaps_are_lost_once() {
        let t = run(&[1, 2, 5, 6, 9]);
        assert_eq!((t.highest, t.lost(), t.out_of_order), (9, 4, 0));
    }

    #[test]
    fn reordered_datagrams_are_not_lost() {
        let t = run(&[1, 3, 2, 5, 4, 6]);
        assert_eq!((t.highest, t.lost(), t.out_of_order, t.duplicates), (6, 0, 2, 0));
    }

    #[test]
    fn duplicates_do_not_hide_loss() {
        // iperf3 would report 0 lost here: the duplicate of 3 cancels the loss of 2.
        let t = run(&[1, 3, 3, 4]);
        assert_eq!((t.highest, t.lost(), t.out_of_order, t.duplicates), (4, 1, 0, 1));
        let t = run(&[1, 2, 2, 2, 3]);
        assert_eq!((t.lost(), t.duplicates), (0, 2));
    }

    #[test]
    fn late_duplicate_of_a_reordered_datagram() {
        let t = run(&[1, 4, 2, 2, 3, 3]);
        assert_eq!((t.highest, t.lost(), t.out_of_order, t.duplicates), (4, 0, 2, 2));
    }

    #[test]
    fn loss_at_the_start_counts() {
        let t = run(&[3, 4]);
        assert_eq!(t.lost(), 2);
    }

    #[test]
    fn a_jump_beyond_the_window_clears_it() {
        let far = 1 + WINDOW * 3 + 7;
        let t = run(&[1, far, far - 1]);
        assert_eq!((t.highest, t.unique, t.out_of_order, t.duplicates), (far, 3, 1, 0));
        // A number far behind the window is taken as filling a gap.
        let t = run(&[1, far, 2]);
        assert_eq!((t.unique, t.out_of_order), (3, 1));
        // The window still remembers what arrived after the jump.
        let t = run(&[1, far, far]);
        assert_eq!(t.duplicates, 1);
    }

    #[test]
    fn window_bits_are_reused_correctly() {
        // Stream well past the window size, losing every 1000th datagram.
        let mut s = UdpRecvStats::new();
        let n = WINDOW * 2 + 500;
        for q in 1..=n {
            if q % 1000 != 0 {
                s.record(q, 0.0, Some(0.0));
            }
        }
        let t = s.totals();
        assert_eq!((t.highest, t.lost(), t.duplicates, t.out_of_order), (n, n / 1000, 0, 0));
        // An old number that was lost, still inside the window, arrives late.
        s.record(n / 1000 * 1000, 0.0, Some(0.0));
        assert_eq!((s.totals().lost(), s.totals().out_of_order), (n / 1000 - 1, 1));
    }

    #[test]
    fn jitter_follows_rfc1889() {
        let mut s = UdpRecvStats::new();
        // Transit times 10, 12, 11 ms.
        s.record(1, 0.0, Some(0.010));
        assert_eq!(s.totals().jitter, 0.0);
        s.record(2, 1.0, Some(1.012));
        let j1 = 0.002 / 16.0;
        assert!((s.totals().jitter - j1).abs() < 1e-12);
        s.record(3, 2.0, Some(2.011));
        let j2 = j1 + (0.001 - j1) / 16.0;
        assert!((s.totals().jitter - j2).abs() < 1e-12);
        // After a reset the next datagram only primes the transit time.
        s.reset_jitter();
        s.record(4, 3.0, Some(3.050));
        assert_eq!(s.totals().jitter, 0.0);
    }

    #[test]
    fn sequence_zero_is_ignored_as_a_duplicate() {
        let t = run(&[0]);
        assert_eq!((t.highest, t.unique, t.duplicates), (0, 0, 1));
    }

    /// Known transit times through the accounting: a stream paced every 1 ms whose transit
    /// alternates 10 ms / 10.4 ms has |ΔT| = 0.4 ms for every datagram, so the estimator
    /// converges on 0.4 ms. The same stream with every other datagram coalesced behind the one
    /// before (no receive time of its own) feeds only the 10 ms transits: jitter 0, which is why
    /// those datagrams are counted in `untimed` and the output says jitter was not measured on
    /// them, instead of printing the 0 as if it were measured.
    #[test]
    fn jitter_from_known_transit_times_and_untimed_datagrams() {
        let transit = |k: u64| if k.is_multiple_of(2) { 0.010 } else { 0.0104 };
        let mut timed = UdpRecvStats::new();
        let mut coalesced = UdpRecvStats::new();
        for k in 1..=2000u64 {
            let sent = k as f64 * 0.001;
            timed.record(k, sent, Some(sent + transit(k)));
            coalesced.record(k, sent, k.is_multiple_of(2).then(|| sent + transit(k)));
        }
        let (t, c) = (timed.totals(), coalesced.totals());
        assert!((t.jitter - 0.0004).abs() < 1e-9, "{}", t.jitter);
        assert_eq!((t.untimed, t.lost()), (0, 0));
        assert!(c.jitter.abs() < 1e-12, "{}", c.jitter);
        assert_eq!((c.untimed, c.lost(), c.unique), (1000, 0, 2000));
    }
}
