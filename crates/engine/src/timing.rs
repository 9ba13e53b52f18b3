//! The pure maths of datagram timing, shared by the iperf3 streams here and the iperf 2 engine
//! (`wireperf-iperf2`): the pacing schedule of a sender and RFC 3550 jitter at a receiver.
//!
//! No clock is read here: callers pass seconds since their own start and transit times they
//! measured, so the formulas are tested directly and both engines get the same numbers.

/// A sender's schedule: slot `k` is due `k·len·8/rate` seconds after the start, in groups of
/// `burst` slots that are due together (`-b RATE/BURST`).
///
/// Pacing by schedule, not by gap: a late wake-up is made good by the slots already due, so the
/// average rate over a test meets the target even though sleeps overshoot.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pacing {
    /// Seconds per group of `burst` slots.
    group_secs: f64,
    burst: u64,
}

impl Pacing {
    /// The schedule for `len`-byte datagrams at `rate` bit/s; `None` when `rate` is 0
    /// (unpaced). A `burst` of 0 means 1.
    pub fn new(len: usize, rate: u64, burst: u32) -> Option<Self> {
        let burst = u64::from(burst.max(1));
        (rate > 0).then(|| Self { group_secs: (burst * len as u64 * 8) as f64 / rate as f64, burst })
    }

    /// How many slots are due `elapsed` seconds after the start: every slot of each group
    /// that has begun.
    pub fn due(&self, elapsed: f64) -> u64 {
        ((elapsed / self.group_secs).floor() as u64 + 1) * self.burst
    }

    /// When slot `slot` (from 0) is due, in seconds after the start: when its group begins.
    pub fn slot_time(&self, slot: u64) -> f64 {
        (slot / self.burst) as f64 * self.group_secs
    }

    /// How many slots a batching sender (one GSO send, or one `sendmmsg`, of at most `max`
    /// datagrams) lets come due before it sends: those of [`BATCH_GATHER_SECS`], from 1 to
    /// `max`. With an explicit burst (`-b RATE/BURST`) 1: each group goes out as it comes due.
    ///
    /// Sending whatever one wake-up found due made a fast sender's batches as small as its
    /// sleeps were short: at 6 Gbit/s (a 1448-byte slot every 1.9 µs) a sender that wakes
    /// every ~12 µs sent GSO packets of 6 datagrams, so both ends paid per-packet work (a
    /// send, a socket-queue entry, a receive wake-up) for every 6 datagrams instead of 45.
    pub fn batch(&self, max: u64) -> u64 {
        if self.burst > 1 {
            return 1;
        }
        ((BATCH_GATHER_SECS / self.group_secs) as u64).clamp(1, max.max(1))
    }

    /// What a sender that has used `slots` slots and sends `batch` at a time does `elapsed`
    /// seconds after the start: send the slots due (at least `batch`), or wait until `batch`
    /// are.
    pub fn step(&self, elapsed: f64, slots: u64, batch: u64) -> PaceStep {
        let due = self.due(elapsed);
        let batch = batch.max(1);
        if due >= slots + batch {
            PaceStep::Send(due - slots)
        } else {
            PaceStep::WaitUntil(self.slot_time(slots + batch - 1))
        }
    }
}

/// Longest a batching sender lets due datagrams gather ([`Pacing::batch`]): 100 µs. Long enough
/// for whole GSO batches (45 datagrams of 1448 bytes) from about 5 Gbit/s up and 25 at
/// 3 Gbit/s, where the per-packet work decides the rate; short enough that the batch adds little jitter behind a slower link (its
/// datagrams leave together and queue there for at most about this long). Below about
/// 120 Mbit/s (1448-byte datagrams) it is less than one slot, and every datagram goes out
/// on its own, as before.
pub const BATCH_GATHER_SECS: f64 = 100e-6;

/// [`Pacing::step`]'s answer.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PaceStep {
    /// Send this many slots (or as many as one call takes) now.
    Send(u64),
    /// Sleep until this many seconds after the start.
    WaitUntil(f64),
}

/// Interarrival jitter, RFC 3550 §6.4.1 (RFC 1889 §A.8), the estimate iperf3 and iperf 2 both
/// report: for each datagram `D = |transit − previous transit|` and `J += (D − J)/16`.
///
/// The first transit time after the start or a [`Jitter::reset`] only primes the estimate.
/// Transit times are the caller's (arrival − send, on whichever clocks it has): only their
/// differences matter, so clocks need not agree, only tick at the same rate.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Jitter {
    value: f64,
    prev_transit: Option<f64>,
}

impl Jitter {
    /// Adds one datagram's transit time, in seconds.
    pub fn add(&mut self, transit: f64) {
        if let Some(prev) = self.prev_transit {
            self.value += ((transit - prev).abs() - self.value) / 16.0;
        }
        self.prev_transit = Some(transit);
    }

    /// The estimate in seconds (0 before two datagrams).
    pub fn value(&self) -> f64 {
        self.value
    }

    /// Starts over (iperf3 does at the end of the omit period).
    pub fn reset(&mut self) {
        *self = Self::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unpaced_has_no_schedule() {
        assert_eq!(Pacing::new(1000, 0, 4), None);
    }

    #[test]
    fn slots_follow_the_rate() {
        // 1250-byte datagrams at 1 Mbit/s: one every 10 ms.
        let p = Pacing::new(1250, 1_000_000, 0).unwrap();
        assert_eq!(p.due(0.0), 1, "the first slot is due at once");
        assert_eq!(p.due(0.0099), 1);
        assert_eq!(p.due(0.0101), 2);
        assert!((p.slot_time(3) - 0.03).abs() < 1e-12);
    }

    #[test]
    fn bursts_are_due_together() {
        let p = Pacing::new(1250, 1_000_000, 4).unwrap();
        assert_eq!(p.due(0.0), 4);
        assert_eq!(p.due(0.041), 8);
        assert_eq!(p.slot_time(3), 0.0);
        assert!((p.slot_time(4) - 0.04).abs() < 1e-12);
    }

    #[test]
    fn batches_gather_100_microseconds_of_slots() {
        let at = |rate: u64| Pacing::new(1448, rate, 0).unwrap().batch(45);
        assert_eq!(at(6_000_000_000), 45, "whole batches at high rates");
        assert_eq!(at(1_000_000_000), 8);
        assert_eq!(at(100_000_000), 1, "below one slot per 100 µs each datagram goes alone");
        assert_eq!(Pacing::new(1448, 6_000_000_000, 4).unwrap().batch(45), 1, "an explicit burst is the batch");
        assert_eq!(Pacing::new(1448, 6_000_000_000, 0).unwrap().batch(0), 1);
    }

    /// The bug: a sender that sent what each wake-up found due, waking every 12 µs at
    /// 6 Gbit/s, sent 6-datagram batches. Stepped by [`Pacing::step`] it sends whole batches
    /// however short its sleeps, and keeps the rate.
    #[test]
    fn a_fast_paced_sender_sends_whole_batches_however_often_it_wakes() {
        let p = Pacing::new(1448, 6_000_000_000, 0).unwrap();
        let batch = p.batch(45);
        for wake_up in [1e-6, 12e-6, 150e-6] {
            let (mut t, mut slots, mut sends) = (0.0, 0u64, Vec::new());
            while t < 0.05 {
                match p.step(t, slots, batch) {
                    PaceStep::Send(n) => {
                        let n = n.min(45);
                        sends.push(n);
                        slots += n;
                    }
                    PaceStep::WaitUntil(at) => t = f64::max(t, at) + wake_up,
                }
            }
            assert!(sends.iter().all(|&n| n == 45), "wake-ups every {wake_up} s: {sends:?}");
            let due = p.due(t);
            assert!(slots <= due && due - slots <= 46 + (wake_up / 1.93e-6) as u64, "{slots} of {due} due");
        }
    }

    #[test]
    fn a_slow_paced_sender_sends_each_datagram_when_due() {
        let p = Pacing::new(1448, 10_000_000, 0).unwrap();
        assert_eq!(p.step(0.0, 0, p.batch(45)), PaceStep::Send(1));
        assert_eq!(p.step(0.0001, 1, p.batch(45)), PaceStep::WaitUntil(p.slot_time(1)));
        let b = Pacing::new(1448, 10_000_000, 4).unwrap();
        assert_eq!(b.step(0.0, 0, b.batch(45)), PaceStep::Send(4), "a burst group at once");
    }

    #[test]
    fn jitter_follows_rfc3550() {
        let mut j = Jitter::default();
        // Transit times 10, 12, 11 ms.
        j.add(0.010);
        assert_eq!(j.value(), 0.0);
        j.add(0.012);
        let j1 = 0.002 / 16.0;
        assert!((j.value() - j1).abs() < 1e-15);
        j.add(0.011);
        assert!((j.value() - (j1 + (0.001 - j1) / 16.0)).abs() < 1e-15);
        j.reset();
        j.add(0.050);
        assert_eq!(j.value(), 0.0, "after a reset the next datagram only primes");
    }
}
