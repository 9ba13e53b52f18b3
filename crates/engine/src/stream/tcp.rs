//! The TCP send and receive loops.

use super::budget::Claim;
use super::context::LoopCtx;
use super::counters::Counters;
use super::loop_end::LoopEnd;
use super::low_water::{LowWater, Switch};
use super::recv_path::receive;
use super::send_path::{SendBuffer, StreamPath};
use crate::error::EngineError;
use std::io::ErrorKind;
use std::net::TcpStream;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// How often a blocked stream thread looks at its stop flag. Short enough that the end of a
/// test is not delayed noticeably, long enough that an idle thread costs nothing.
const POLL: Duration = Duration::from_millis(50);

/// The read timeout while the low-water mark is set. The kernel does not wake a reader
/// blocked below the mark when the mark is lowered, only on new data or at the timeout, so a
/// stream's last partial block (the sender stopped) waits at most this long.
const LOW_WATER_POLL: Duration = Duration::from_millis(10);

/// The largest buffer one stream thread uses for one system call.
pub(super) const MAX_CALL: usize = 4 * 1024 * 1024;

fn is_transient(kind: ErrorKind) -> bool {
    matches!(kind, ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted)
}

/// Writes blocks until stopped, the budget is spent, or the socket fails.
pub(crate) fn send_loop(sock: &TcpStream, ctx: &LoopCtx<'_>) -> Result<LoopEnd, EngineError> {
    let LoopCtx { spec, counters, .. } = *ctx;
    sock.set_write_timeout(Some(POLL)).map_err(|err| EngineError::Stream { op: "write to", err })?;
    let tx =
        SendBuffer::new(spec, usize::MAX).map_err(|err| EngineError::Stream { op: "allocate a buffer for", err })?;
    let mut path = tx.start(sock, &counters.io);
    let res = send_blocks(&tx, &mut path, sock, ctx);
    path.finish(sock, &counters.io);
    res
}

fn send_blocks(
    tx: &SendBuffer,
    path: &mut StreamPath,
    sock: &TcpStream,
    ctx: &LoopCtx<'_>,
) -> Result<LoopEnd, EngineError> {
    let LoopCtx { spec, counters, stop, budget, .. } = *ctx;
    let (block, per_call) = (tx.block_len(), tx.blocks_per_call());
    let start = Instant::now();
    let mut total = 0u64;
    let mut notsent = super::notsent::NotsentGate::new(spec, budget, start);
    loop {
        if stop.load(Ordering::Relaxed) {
            return Ok(LoopEnd::Stopped);
        }
        if spec.rate > 0 {
            // Pace on the average since the stream started, as iperf3 does, but sleep until
            // the next block is due instead of spinning.
            let due = start + Duration::from_secs_f64(total as f64 * 8.0 / spec.rate as f64);
            let now = Instant::now();
            if now < due {
                std::thread::sleep((due - now).min(POLL));
                continue;
            }
        }
        let granted = match budget.map(|b| b.claim(per_call, block as u64)) {
            None => per_call,
            Some(Claim::Granted(n)) => n,
            Some(Claim::Spent) => return Ok(LoopEnd::Spent),
            Some(Claim::Done) => return Ok(LoopEnd::Budget),
        };
        let mut end = granted * block;
        let mut off = 0;
        while off < end {
            match tx.send(path, sock, off, end, &counters.io) {
                Ok(0) => {
                    let err = std::io::Error::new(ErrorKind::WriteZero, "peer closed the stream");
                    return Err(EngineError::Stream { op: "write to", err });
                }
                Ok(n) => {
                    off += n;
                    total += n as u64;
                    counters.bytes.store(total, Ordering::Relaxed);
                    notsent.poll(sock, &counters.io);
                    // On a slow path a many-block call takes a while: when the test ends,
                    // finish only the block in progress, as a one-block call would.
                    if off < end && stop.load(Ordering::Relaxed) {
                        end = off.next_multiple_of(block);
                    }
                }
                Err(e) if is_transient(e.kind()) => {
                    if stop.load(Ordering::Relaxed) {
                        return Ok(LoopEnd::Stopped);
                    }
                }
                Err(err) => {
                    if stop.load(Ordering::Relaxed) {
                        return Ok(LoopEnd::Stopped);
                    }
                    return Err(EngineError::Stream { op: "write to", err });
                }
            }
        }
        // Written in full, unless the test was stopped meanwhile (then it ends anyway).
        if let Some(b) = budget {
            b.written(granted);
        }
    }
}

/// Reads until EOF, stopped, or failure; counts every byte, including after the test ended
/// (the drain that makes receiver totals exact).
pub(crate) fn recv_loop(sock: &TcpStream, ctx: &LoopCtx<'_>) -> Result<LoopEnd, EngineError> {
    let LoopCtx { spec, counters, stop, budget, on_budget } = *ctx;
    sock.set_read_timeout(Some(POLL)).map_err(|err| EngineError::Stream { op: "read from", err })?;
    let block = spec.len.clamp(1, MAX_CALL);
    let mut buf = super::buffer::zeroed(spec.call_bytes.clamp(block, MAX_CALL))
        .map_err(|err| EngineError::Stream { op: "allocate a buffer for", err })?;
    let mut total = 0u64;
    let mut last_data = Instant::now();
    // The peer writes `block` bytes at a time; waking for less than that gains nothing.
    let mut low_water = LowWater::new(block, last_data);
    counters.io.set_receive(spec.skip_rx_copy);
    loop {
        match receive(sock, &mut buf, spec.skip_rx_copy) {
            Ok(0) => return Ok(LoopEnd::Eof),
            Ok(n) => {
                total += n as u64;
                counters.bytes.store(total, Ordering::Relaxed);
                last_data = Instant::now();
                let switch = if counters.draining.load(Ordering::Relaxed) {
                    low_water.retire()
                } else {
                    low_water.on_read(n, last_data)
                };
                apply_low_water(sock, switch, &low_water, counters);
                if budget.is_some_and(|b| b.record_stream(n as u64, block as u64)) {
                    // Tell the test thread, but keep reading: the peer must not block, and
                    // what is still in flight is counted in the drain.
                    on_budget();
                }
                if stop.load(Ordering::Relaxed) {
                    return Ok(LoopEnd::Stopped);
                }
            }
            Err(e) => {
                let transient = is_transient(e.kind());
                if transient {
                    apply_low_water(sock, low_water.on_timeout(Instant::now()), &low_water, counters);
                }
                let fail = |err| EngineError::Stream { op: "read from", err };
                let silent = last_data.elapsed();
                if let Some(end) = super::after_read_error(e, transient, stop, counters, silent, spec.rcv_timeout, fail)
                {
                    return end;
                }
            }
        }
    }
}

/// Applies a low-water switch to the socket. A kernel that refuses `SO_RCVLOWAT` only costs
/// the optimisation, so the error is dropped. The mark shown in the JSON extras is the one the
/// kernel kept: it caps the mark at half the receive buffer (e.g. with a small `-w`).
fn apply_low_water(sock: &TcpStream, switch: Option<Switch>, low_water: &LowWater, counters: &Counters) {
    let (bytes, timeout) = match switch {
        None => return,
        Some(Switch::On(bytes)) => (bytes, LOW_WATER_POLL),
        Some(Switch::Off) => (1, POLL),
    };
    if wireperf_sys::sockopt::set_recv_lowat(sock, bytes).is_ok() {
        // Same socket, same valid duration: cannot fail in a way the mark did not.
        let _ = sock.set_read_timeout(Some(timeout));
        if low_water.is_on() {
            counters.io.note_low_water(wireperf_sys::sockopt::recv_lowat(sock).unwrap_or(bytes));
        }
    }
}
