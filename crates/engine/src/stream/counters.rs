//! Per-stream counters shared between a stream's thread and the test thread.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};


/// Written only by the stream's own thread; read by the sampler. Relaxed ordering is enough:
/// every value is a monotonic total read on its own.
#[derive(Debug, Default)]
pub(crate) struct Counters {
    /// Bytes written or read since the stream started (omit period included).
    pub bytes: AtomicU64,
    /// Successful write or read calls.
    pub blocks: AtomicU64,
    /// Thread CPU time (user, system) in microseconds, stored when the thread ends.
    pub cpu_user_us: AtomicU64,
    /// See `cpu_user_us`.
    pub cpu_system_us: AtomicU64,
    /// The receive loop may stop waiting for data (test over, draining).
    pub draining: AtomicBool,
    /// The thread has exited.
    pub finished: AtomicBool,
}

impl Counters {
    /// Stores the calling thread's CPU time (called by the stream thread as it exits).
    pub(crate) fn record_thread_cpu(&self) {
        if let Ok(t) = wireperf_sys::thread_cpu_times() {
            self.cpu_user_us.store(t.user.as_micros() as u64, Ordering::Relaxed);
            self.cpu_system_us.store(t.system.as_micros() as u64, Ordering::Relaxed);
        }
    }

    /// Current byte total.
    pub(crate) fn bytes(&self) -> u64 {
        self.bytes.load(Ordering::Relaxed)
    }
}

