//! The `-n` / `-k` budget shared by the streams of one direction.
//!
//! iperf3 ends a test when the client's streams together have sent (or received) `-n` bytes or
//! `-k` blocks. Senders claim a block from the budget before writing it, so the total written
//! overshoots by at most one block in all; receivers add what they read and announce when the
//! limit is crossed.
//!
//! A sender that finds the budget spent may not end the test by itself: with `-P`, other
//! streams may still be writing blocks they claimed, and a test ended then (the streams
//! stopped) would cut those blocks short, leaving a total that is not whole blocks (or even
//! below `-n`). So the budget also counts the blocks claimed and not yet written, and tells
//! the sender that finds it spent with none left out ([`Claim::Done`]) that the test may end.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// What a sender's [`Budget::claim`] got.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Claim {
    /// This many blocks (at least one) are the sender's to write in full; it says so with
    /// [`Budget::written`].
    Granted(usize),
    /// The budget is spent, but other streams still write blocks they claimed: the last of
    /// them ends the test.
    Spent,
    /// The budget is spent and every block claimed from it is written: the test may end.
    Done,
}

/// A shared byte or block budget.
#[derive(Debug)]
pub(crate) struct Budget {
    limit_bytes: u64,
    limit_blocks: u64,
    used_bytes: AtomicU64,
    used_blocks: AtomicU64,
    /// Blocks claimed (or being claimed) and not yet written, armed or not.
    held: AtomicU64,
    /// Off during `-O`: the budget counts from the end of the omit period, as iperf3's does.
    armed: AtomicBool,
}

impl Budget {
    /// A budget of `bytes` (0 = none) or `blocks` (0 = none).
    pub(crate) fn new(bytes: u64, blocks: u64, armed: bool) -> Self {
        Self {
            limit_bytes: bytes,
            limit_blocks: blocks,
            used_bytes: AtomicU64::new(0),
            used_blocks: AtomicU64::new(0),
            held: AtomicU64::new(0),
            armed: AtomicBool::new(armed),
        }
    }

    /// True for a `-k` budget (blocks), false for `-n` (bytes).
    pub(crate) fn counts_blocks(&self) -> bool {
        self.limit_blocks > 0
    }

    /// Starts counting (at the end of the omit period).
    pub(crate) fn arm(&self) {
        self.used_bytes.store(0, Ordering::Relaxed);
        self.used_blocks.store(0, Ordering::Relaxed);
        self.armed.store(true, Ordering::Release);
    }

    /// Sender: claims up to `want` blocks of `len` bytes, each on its own (so -n/-k end where
    /// iperf3's would, however many blocks go out in one call).
    ///
    /// The blocks are counted as held before the budget is looked at, and all these counters
    /// are sequentially consistent: a sender that finds the budget spent and sees nothing held
    /// but its own attempt is the last, as every block granted before its look was held first.
    pub(crate) fn claim(&self, want: usize, len: u64) -> Claim {
        self.held.fetch_add(want as u64, Ordering::SeqCst);
        let granted = (0..want).take_while(|_| self.claim_one(len)).count();
        let unused = (want - granted) as u64;
        let held_before = if unused > 0 { self.held.fetch_sub(unused, Ordering::SeqCst) } else { 0 };
        match granted {
            0 if held_before == unused => Claim::Done,
            0 => Claim::Spent,
            n => Claim::Granted(n),
        }
    }

    /// Sender: the `blocks` of a [`Claim::Granted`] are written (or will never be: the stream
    /// stopped or failed, which ends the test anyway).
    pub(crate) fn written(&self, blocks: usize) {
        self.held.fetch_sub(blocks as u64, Ordering::SeqCst);
    }

    fn claim_one(&self, len: u64) -> bool {
        if !self.armed.load(Ordering::Acquire) {
            return true;
        }
        if self.limit_blocks > 0 {
            return self.used_blocks.fetch_add(1, Ordering::SeqCst) < self.limit_blocks;
        }
        self.used_bytes.fetch_add(len, Ordering::SeqCst) < self.limit_bytes
    }

    /// TCP receiver: records a read of `n` bytes, which may hold several (or part of one) of
    /// the sender's `block`-byte blocks. True when this read crossed the limit.
    pub(crate) fn record_stream(&self, n: u64, block: u64) -> bool {
        if !self.armed.load(Ordering::Acquire) {
            return false;
        }
        let limit = if self.limit_blocks > 0 { self.limit_blocks.saturating_mul(block) } else { self.limit_bytes };
        let before = self.used_bytes.fetch_add(n, Ordering::Relaxed);
        before < limit && before + n >= limit
    }

    /// UDP receiver: records one datagram of `n` bytes. True when it crossed the limit.
    pub(crate) fn record(&self, n: u64) -> bool {
        if !self.armed.load(Ordering::Acquire) {
            return false;
        }
        if self.limit_blocks > 0 {
            let before = self.used_blocks.fetch_add(1, Ordering::Relaxed);
            return before < self.limit_blocks && before + 1 >= self.limit_blocks;
        }
        let before = self.used_bytes.fetch_add(n, Ordering::Relaxed);
        before < self.limit_bytes && before + n >= self.limit_bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_budget_allows_exactly_enough_blocks() {
        let b = Budget::new(300, 0, true);
        assert_eq!(b.claim(2, 128), Claim::Granted(2));
        assert_eq!(b.claim(4, 128), Claim::Granted(1), "the third block crosses 300 bytes");
        b.written(2);
        assert_eq!(b.claim(1, 128), Claim::Spent, "one block is still being written");
        b.written(1);
        assert_eq!(b.claim(1, 128), Claim::Done);
        assert_eq!(b.claim(3, 128), Claim::Done, "and stays done");
    }

    #[test]
    fn stream_reads_count_blocks_by_bytes() {
        // -k 3 of 100-byte blocks: crossed by the read that brings the total to 300 bytes,
        // however the reads split them.
        let b = Budget::new(0, 3, true);
        assert!(!b.record_stream(250, 100));
        assert!(b.record_stream(60, 100));
        assert!(!b.record_stream(500, 100), "crossed only once");
        let n = Budget::new(1000, 0, true);
        assert!(!n.record_stream(999, 128));
        assert!(n.record_stream(1, 128));
    }

    #[test]
    fn block_budget_and_receiver_crossing() {
        let b = Budget::new(0, 2, true);
        assert!(!b.record(10));
        assert!(b.record(10));
        assert!(!b.record(10));
    }

    #[test]
    fn unarmed_budget_counts_nothing() {
        let b = Budget::new(10, 0, false);
        assert_eq!(b.claim(2, 100), Claim::Granted(2));
        b.arm();
        assert_eq!(b.claim(3, 5), Claim::Granted(2));
        b.written(2);
        assert_eq!(b.claim(1, 5), Claim::Spent, "the blocks claimed during omit are still held");
        b.written(2);
        assert_eq!(b.claim(1, 5), Claim::Done);
    }
}
