//! What a stream's I/O path did, for the `wireperf_io` JSON extras: the send path asked for
//! and the one used (with the reason for a fallback), the `MSG_ZEROCOPY` completions, the
//! receive path, and the low-water marks set. Written by the stream's loop with relaxed atomic
//! stores (no lock, no allocation per call), read after it ended.

use crate::config::SendMode;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};
use wireperf_protocol::schema::StreamIo;

/// What a stream's I/O path did, written by the stream thread, read after it ended.
#[derive(Debug, Default)]
pub(crate) struct IoReport {
    requested: AtomicU8,
    used: AtomicU8,
    /// Receive side: 1 = read, 2 = MSG_TRUNC.
    recv: AtomicU8,
    fallback: OnceLock<String>,
    zc_completed: AtomicU64,
    zc_copied: AtomicU64,
    /// Receive side: the highest `SO_RCVLOWAT` the loop set (0 = never).
    low_water: AtomicU64,
    /// Send side: the `TCP_NOTSENT_LOWAT` set on a host-local path (0 = never; `notsent`).
    notsent_lowat: AtomicU64,
}

impl IoReport {
    /// Marks a sender asking for `mode` (what it uses, until a fallback says otherwise).
    pub(super) fn set_send(&self, mode: SendMode) {
        self.requested.store(mode.code(), Ordering::Relaxed);
        self.used.store(mode.code(), Ordering::Relaxed);
    }

    pub(super) fn fall_back(&self, why: String) {
        let _ = self.fallback.set(why);
        self.used.store(SendMode::Write.code(), Ordering::Relaxed);
    }

    /// Records the `MSG_ZEROCOPY` completions so far (`completed` sends, `copied` of them
    /// copied by the kernel anyway).
    pub(super) fn set_zerocopy(&self, completed: u64, copied: u64) {
        self.zc_completed.store(completed, Ordering::Relaxed);
        self.zc_copied.store(copied, Ordering::Relaxed);
    }

    /// Adds completions reaped after the sender stopped asking for `MSG_ZEROCOPY`.
    pub(super) fn add_zerocopy(&self, completed: u64, copied: u64) {
        self.zc_completed.fetch_add(completed, Ordering::Relaxed);
        self.zc_copied.fetch_add(copied, Ordering::Relaxed);
    }

    /// Marks a receiver (`skip` = MSG_TRUNC).
    pub(crate) fn set_receive(&self, skip: bool) {
        self.recv.store(if skip { 2 } else { 1 }, Ordering::Relaxed);
    }

    /// Records a receive low-water mark the kernel accepted.
    pub(crate) fn note_low_water(&self, bytes: usize) {
        self.low_water.fetch_max(bytes as u64, Ordering::Relaxed);
    }

    /// Records the unsent-queue mark a host-local sender set (`notsent`).
    pub(crate) fn note_notsent_lowat(&self, bytes: usize) {
        self.notsent_lowat.store(bytes as u64, Ordering::Relaxed);
    }

    /// The unsent-queue mark the sender set, if it set one.
    pub(crate) fn notsent_lowat(&self) -> Option<u64> {
        Some(self.notsent_lowat.load(Ordering::Relaxed)).filter(|&b| b > 0)
    }

    /// The JSON extras, once the stream ran (None before).
    pub(crate) fn snapshot(&self) -> Option<StreamIo> {
        match self.recv.load(Ordering::Relaxed) {
            1 | 2 => {
                let name = if self.recv.load(Ordering::Relaxed) == 2 { "msg_trunc" } else { "read" };
                return Some(StreamIo {
                    direction: "receive".into(),
                    requested: name.into(),
                    used: name.into(),
                    low_water_bytes: Some(self.low_water.load(Ordering::Relaxed)).filter(|&b| b > 0),
                    ..Default::default()
                });
            }
            _ => {}
        }
        let requested = SendMode::from_code(self.requested.load(Ordering::Relaxed))?;
        let used = SendMode::from_code(self.used.load(Ordering::Relaxed)).unwrap_or(requested);
        let zc = requested == SendMode::MsgZerocopy;
        Some(StreamIo {
            direction: "send".into(),
            requested: requested.name().into(),
            used: used.name().into(),
            fallback: self.fallback.get().cloned(),
            zerocopy_completed: zc.then(|| self.zc_completed.load(Ordering::Relaxed)),
            zerocopy_copied: zc.then(|| self.zc_copied.load(Ordering::Relaxed)),
            low_water_bytes: None,
            notsent_lowat_bytes: self.notsent_lowat(),
        })
    }
}
