//! Per-stream counters shared between a stream's thread and the test thread.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};

/// Written only by the stream's own thread; read by the sampler. Relaxed ordering is enough:
/// every value is a monotonic total read on its own.
#[derive(Debug, Default)]
pub(crate) struct Counters {
    /// Bytes written or read since the stream started (omit period included).
    pub bytes: AtomicU64,
    /// Thread CPU time (user, system) in microseconds, stored when the thread ends.
    pub cpu_user_us: AtomicU64,
    /// See `cpu_user_us`.
    pub cpu_system_us: AtomicU64,
    /// The CPU figures are stored (by the stream's thread, or by its shared worker).
    pub cpu_recorded: AtomicBool,
    /// 0: the CPU figures are the stream's own thread's. Else the stream shared a worker with
    /// this many streams (itself included) and the figures are its share of the worker's.
    pub cpu_shared_by: AtomicU64,
    /// Times a shared worker handed the stream to another (`stream::balance`), counted as it
    /// happens.
    pub worker_moves: AtomicU32,
    /// The receive loop may stop waiting for data (test over, draining).
    pub draining: AtomicBool,
    /// The thread has exited.
    pub finished: AtomicBool,
    /// UDP figures (unused by TCP streams).
    pub udp: UdpCounters,
    /// TCP: which send/receive path ran, and any zero-copy fallback.
    pub io: super::io_report::IoReport,
}

/// UDP figures of one stream, written by its thread.
#[derive(Debug, Default)]
pub(crate) struct UdpCounters {
    /// Sender: datagrams sent (= last sequence number used). Receiver: highest number seen.
    pub packets: AtomicU64,
    /// Sender: datagrams the kernel refused (ENOBUFS/EAGAIN); they used no sequence number.
    pub send_drops: AtomicU64,
    /// Receiver: distinct sequence numbers received.
    pub unique: AtomicU64,
    /// Receiver: datagrams that arrived late (not duplicates).
    pub out_of_order: AtomicU64,
    /// Receiver: duplicate datagrams.
    pub duplicates: AtomicU64,
    /// Receiver: jitter in seconds, as `f64` bits.
    pub jitter_bits: AtomicU64,
    /// Receiver: datagrams without a receive time of their own (GRO-coalesced), not in jitter.
    pub untimed: AtomicU64,
    /// Receiver: the test thread asks for a jitter restart (end of omit).
    pub reset_jitter: AtomicBool,
    /// Receiver: the socket has UDP GRO on, so its drop counter counts coalesced packets, not
    /// datagrams.
    pub gro: AtomicBool,
    /// Receiver: when the last datagram arrived, µs after the stream's start (for the drain).
    pub last_rx_us: AtomicU64,
}

impl UdpCounters {
    /// Publishes the receiver's totals.
    pub(crate) fn store_recv(&self, t: &super::udp_stats::UdpRecvTotals) {
        self.unique.store(t.unique, Ordering::Relaxed);
        self.out_of_order.store(t.out_of_order, Ordering::Relaxed);
        self.duplicates.store(t.duplicates, Ordering::Relaxed);
        self.jitter_bits.store(t.jitter.to_bits(), Ordering::Relaxed);
        self.untimed.store(t.untimed, Ordering::Relaxed);
        self.packets.store(t.highest, Ordering::Relaxed);
    }

    /// A snapshot of the receiver's totals.
    pub(crate) fn recv_totals(&self) -> super::udp_stats::UdpRecvTotals {
        super::udp_stats::UdpRecvTotals {
            highest: self.packets.load(Ordering::Relaxed),
            unique: self.unique.load(Ordering::Relaxed),
            out_of_order: self.out_of_order.load(Ordering::Relaxed),
            duplicates: self.duplicates.load(Ordering::Relaxed),
            jitter: f64::from_bits(self.jitter_bits.load(Ordering::Relaxed)),
            untimed: self.untimed.load(Ordering::Relaxed),
        }
    }
}

impl Counters {
    /// Stores the calling thread's CPU time (called by the stream thread as it exits).
    pub(crate) fn record_thread_cpu(&self) {
        if let Ok(t) = wireperf_sys::thread_cpu_times() {
            self.cpu_user_us.store(t.user.as_micros() as u64, Ordering::Relaxed);
            self.cpu_system_us.store(t.system.as_micros() as u64, Ordering::Relaxed);
            self.cpu_recorded.store(true, Ordering::Relaxed);
        }
    }

    /// Stores the CPU time a shared worker gave this stream (µs, user and system: its share,
    /// period by period, of the worker threads it ran on) and the streams on the worker it was
    /// dealt to.
    pub(crate) fn record_cpu_share(&self, (user_us, system_us): (f64, f64), dealt: usize) {
        self.cpu_user_us.store(user_us.max(0.0).round() as u64, Ordering::Relaxed);
        self.cpu_system_us.store(system_us.max(0.0).round() as u64, Ordering::Relaxed);
        self.cpu_shared_by.store(dealt as u64, Ordering::Relaxed);
        self.cpu_recorded.store(true, Ordering::Relaxed);
    }

    /// Current byte total.
    pub(crate) fn bytes(&self) -> u64 {
        self.bytes.load(Ordering::Relaxed)
    }
}
