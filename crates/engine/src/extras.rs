//! wireperf's per-stream JSON extras in `end.streams[]`: the stream thread's own CPU time
//! (`wireperf_cpu`) and its I/O path (`wireperf_io`: write/sendfile/MSG_ZEROCOPY,
//! read/MSG_TRUNC, and why a zero-copy path fell back).
//!
//! Kept apart from `summary`, which builds the iperf3-identical part of `end`: these keys
//! exist only in wireperf's output, and only for the local side's streams.

use crate::stream::Stream;
use std::sync::atomic::Ordering;
use wireperf_protocol::schema::{End, StreamCpu};

/// The stream thread's CPU time, once the thread has ended (it records it as it exits); for a
/// stream on a shared worker, its share of the worker's, recorded by the worker as the stream
/// ends (`shared_by` says so).
fn cpu_of(s: &Stream) -> Option<StreamCpu> {
    let c = &s.counters;
    if !c.finished.load(Ordering::Acquire) || !c.cpu_recorded.load(Ordering::Relaxed) {
        return None;
    }
    let user = c.cpu_user_us.load(Ordering::Relaxed) as f64 / 1e6;
    let system = c.cpu_system_us.load(Ordering::Relaxed) as f64 / 1e6;
    let total = user + system;
    let bytes_per_cpu_second = if total > 0.0 { c.bytes() as f64 / total } else { 0.0 };
    let shared_by = match c.cpu_shared_by.load(Ordering::Relaxed) {
        0 => None,
        n => Some(u32::try_from(n).unwrap_or(u32::MAX)),
    };
    let worker_moves = shared_by.map(|_| c.worker_moves.load(Ordering::Relaxed));
    Some(StreamCpu { user_seconds: user, system_seconds: system, bytes_per_cpu_second, shared_by, worker_moves })
}

/// Adds the extras to `end.streams`, which lists the local streams in creation order.
pub(crate) fn attach(end: &mut End, streams: &[Stream]) {
    if end.streams.len() != streams.len() {
        return;
    }
    for (e, s) in end.streams.iter_mut().zip(streams) {
        e.wireperf_cpu = cpu_of(s);
        e.wireperf_io = if s.is_udp() { None } else { s.counters.io.snapshot() };
    }
}
