//! The `-n` / `-k` budget shared by the streams of one direction.
//!
//! iperf3 ends a test when the client's streams together have sent (or received) `-n` bytes or
//! `-k` blocks. Senders claim a block from the budget before writing it, so the total written
//! overshoots by at most one block in all; receivers add what they read and announce when the
//! limit is crossed.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// A shared byte or block budget.
#[derive(Debug)]
pub(crate) struct Budget {
    limit_bytes: u64,
    limit_blocks: u64,
    used_bytes: AtomicU64,
    used_blocks: AtomicU64,
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

    /// Sender: claims one block of `len` bytes. False when the budget is spent.
    pub(crate) fn claim(&self, len: u64) -> bool {
        if !self.armed.load(Ordering::Acquire) {
            return true;
        }
        if self.limit_blocks > 0 {
            return self.used_blocks.fetch_add(1, Ordering::Relaxed) < self.limit_blocks;
        }
        self.used_bytes.fetch_add(len, Ordering::Relaxed) < self.limit_bytes
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
        assert!(b.claim(128) && b.claim(128) && b.claim(128));
        assert!(!b.claim(128));
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
        assert!(b.claim(100) && b.claim(100));
        b.arm();
        assert!(b.claim(5) && b.claim(5) && !b.claim(5));
    }
}
