//! When a TCP receiver should ask the kernel to wake it only for a whole block
//! (`SO_RCVLOWAT`), decided from the stream's own rate. Sans-I/O: the receive loop reports
//! reads and timeouts, and applies the switches this returns.
//!
//! Why: on a fast stream a plain blocking `read()` wakes for every segment batch the kernel
//! queues, about one wake-up per 100 KiB at 15 Gbit/s on loopback. Each wake-up is paid by the
//! *sender's* CPU (on loopback and veth the receive path runs in the sender's context), so the
//! receiver decides the sender's speed. With the low-water mark at the block size the reader
//! sleeps until a whole block is queued, and the backlog is processed in its own context:
//! measured on the 2-vCPU VM, a stock iperf3 3.12 client went from 14.5 to 23 Gbit/s into a
//! wireperf server (iperf3's own server: 17.5).
//!
//! Why adaptive: while the mark is set, bytes are counted only when a block is complete or the
//! 50 ms read timeout fires. For a slow (e.g. paced) stream that would move bytes across
//! interval boundaries. So the mark is set only while a block arrives within
//! [`ON_FILL`], and cleared when it takes longer than [`OFF_FILL`] or a read times out.
//! It is cleared for good once the test drains. While the mark is set the loop reads with a
//! 10 ms timeout, because the kernel wakes a reader below the mark only for new data (lowering
//! the mark from outside does not wake it): the last partial block of a stream is counted at
//! most 10 ms late.

use std::time::{Duration, Instant};

/// Set the mark when a block fills this fast on average (128 KiB: ≥ 0.5 Gbit/s).
const ON_FILL: Duration = Duration::from_millis(2);
/// Clear it when a block takes longer than this (128 KiB: < 0.13 Gbit/s): hysteresis, so a
/// rate near the threshold does not flip the option every window.
const OFF_FILL: Duration = Duration::from_millis(8);
/// The rate is judged over windows at least this long.
const WINDOW: Duration = Duration::from_millis(100);

/// What the receive loop should do to the socket.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Switch {
    /// Set `SO_RCVLOWAT` to this many bytes.
    On(usize),
    /// Set it back to 1 (the kernel default).
    Off,
}

/// The decision state of one receiving stream.
#[derive(Debug)]
pub(crate) struct LowWater {
    block: usize,
    on: bool,
    /// Once off for good (test draining), never on again.
    retired: bool,
    window_start: Instant,
    window_bytes: u64,
}

impl LowWater {
    /// A receiver that reads `block` bytes at a time, starting at `now` with the mark off.
    pub(crate) fn new(block: usize, now: Instant) -> Self {
        LowWater { block, on: false, retired: false, window_start: now, window_bytes: 0 }
    }

    /// Whether the mark is currently set.
    pub(crate) fn is_on(&self) -> bool {
        self.on
    }

    /// A read returned `n > 0` bytes at `now`.
    pub(crate) fn on_read(&mut self, n: usize, now: Instant) -> Option<Switch> {
        self.window_bytes += n as u64;
        let elapsed = now.saturating_duration_since(self.window_start);
        if elapsed < WINDOW {
            return None;
        }
        // Time one block took to arrive, on average over the window.
        let blocks = self.window_bytes as f64 / self.block.max(1) as f64;
        let fill = elapsed.div_f64(blocks.max(f64::MIN_POSITIVE));
        self.window_start = now;
        self.window_bytes = 0;
        if !self.on && !self.retired && self.block > 1 && fill <= ON_FILL {
            self.on = true;
            return Some(Switch::On(self.block));
        }
        if self.on && fill > OFF_FILL {
            self.on = false;
            return Some(Switch::Off);
        }
        None
    }

    /// A read timed out with nothing: the stream is slow or stalled now.
    pub(crate) fn on_timeout(&mut self, now: Instant) -> Option<Switch> {
        self.window_start = now;
        self.window_bytes = 0;
        self.turn_off()
    }

    /// The test is draining: clear the mark and keep it cleared.
    pub(crate) fn retire(&mut self) -> Option<Switch> {
        self.retired = true;
        self.turn_off()
    }

    fn turn_off(&mut self) -> Option<Switch> {
        if self.on {
            self.on = false;
            return Some(Switch::Off);
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BLOCK: usize = 128 * 1024;

    /// Feeds `reads` reads of `n` bytes spread evenly over `span`, returning every switch.
    fn feed(lw: &mut LowWater, start: Instant, span: Duration, reads: u32, n: usize) -> Vec<Switch> {
        (1..=reads).filter_map(|i| lw.on_read(n, start + span * i / reads)).collect()
    }

    #[test]
    fn fast_stream_turns_the_mark_on_after_one_window() {
        let t0 = Instant::now();
        let mut lw = LowWater::new(BLOCK, t0);
        // 10 Gbit/s: 1.25 GB/s, about 950 blocks per 100 ms.
        let got = feed(&mut lw, t0, Duration::from_millis(100), 950, BLOCK);
        assert_eq!(got, vec![Switch::On(BLOCK)]);
        assert!(lw.is_on());
    }

    #[test]
    fn slow_stream_never_sets_it() {
        let t0 = Instant::now();
        let mut lw = LowWater::new(BLOCK, t0);
        // 100 Mbit/s for 2 s in 8 KiB reads.
        let got = feed(&mut lw, t0, Duration::from_secs(2), 3050, 8192);
        assert!(got.is_empty(), "{got:?}");
        assert!(!lw.is_on());
    }

    #[test]
    fn slowing_down_turns_it_off_with_hysteresis() {
        let t0 = Instant::now();
        let mut lw = LowWater::new(BLOCK, t0);
        assert_eq!(feed(&mut lw, t0, Duration::from_millis(100), 500, BLOCK), vec![Switch::On(BLOCK)]);
        // One block per 4 ms: between the thresholds, so it stays on.
        let t1 = t0 + Duration::from_millis(100);
        assert!(feed(&mut lw, t1, Duration::from_millis(200), 50, BLOCK).is_empty());
        assert!(lw.is_on());
        // One block per 20 ms: off.
        let t2 = t1 + Duration::from_millis(200);
        assert_eq!(feed(&mut lw, t2, Duration::from_millis(200), 10, BLOCK), vec![Switch::Off]);
        assert!(!lw.is_on());
    }

    #[test]
    fn a_timeout_clears_it_and_the_drain_retires_it() {
        let t0 = Instant::now();
        let mut lw = LowWater::new(BLOCK, t0);
        feed(&mut lw, t0, Duration::from_millis(100), 500, BLOCK);
        let t1 = t0 + Duration::from_millis(150);
        assert_eq!(lw.on_timeout(t1), Some(Switch::Off));
        assert_eq!(lw.on_timeout(t1), None);
        assert_eq!(feed(&mut lw, t1, Duration::from_millis(100), 500, BLOCK), vec![Switch::On(BLOCK)]);
        assert_eq!(lw.retire(), Some(Switch::Off));
        let t2 = t1 + Duration::from_millis(100);
        assert!(feed(&mut lw, t2, Duration::from_millis(500), 2500, BLOCK).is_empty(), "retired stays off");
    }

    #[test]
    fn one_byte_blocks_never_set_it() {
        let t0 = Instant::now();
        let mut lw = LowWater::new(1, t0);
        assert!(feed(&mut lw, t0, Duration::from_millis(300), 100_000, 1).is_empty());
    }
}
