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
