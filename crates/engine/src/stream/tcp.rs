//! The TCP send and receive loops.

use super::zerocopy::{BlockSender, receive};
use super::{Budget, Counters, StreamSpec};
use crate::error::EngineError;
use std::io::ErrorKind;
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How often a blocked stream thread looks at its stop flag. Short enough that the end of a
/// test is not delayed noticeably, long enough that an idle thread costs nothing.
const POLL: Duration = Duration::from_millis(50);

/// Why a loop ended without error.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum LoopEnd {
    /// The test thread asked it to stop.
    Stopped,
    /// The `-n`/`-k` budget is spent (sender) or was crossed (receiver).
    Budget,
    /// The peer closed the connection (receiver).
    Eof,
}

/// Fills a block the way iperf3 does: random bytes, or `0123456789` repeated.
pub(crate) fn payload(len: usize, repeating: bool) -> Vec<u8> {
    let mut buf = vec![0u8; len];
    if repeating {
        for (i, b) in buf.iter_mut().enumerate() {
            *b = b'0' + (i % 10) as u8;
        }
    } else if getrandom::fill(&mut buf).is_err() {
        // Content does not matter to any receiver; a fixed pattern is an acceptable fallback.
        for (i, b) in buf.iter_mut().enumerate() {
            *b = (i as u8).wrapping_mul(151);
        }
    }
    buf
}

fn is_transient(kind: ErrorKind) -> bool {
    matches!(kind, ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted)
}

/// Writes blocks until stopped, the budget is spent, or the socket fails.
pub(crate) fn send_loop(
    sock: &TcpStream,
    spec: &StreamSpec,
    counters: &Counters,
    stop: &AtomicBool,
    budget: Option<&Budget>,
) -> Result<LoopEnd, EngineError> {
    sock.set_write_timeout(Some(POLL)).map_err(|err| EngineError::Stream { op: "write to", err })?;
    let mut tx = BlockSender::new(sock, spec, &counters.io);
    let res = send_blocks(&mut tx, spec, counters, stop, budget);
    tx.finish();
    res
}

fn send_blocks(
    tx: &mut BlockSender<'_>,
    spec: &StreamSpec,
    counters: &Counters,
    stop: &AtomicBool,
    budget: Option<&Budget>,
) -> Result<LoopEnd, EngineError> {
    let len = tx.len();
    let start = Instant::now();
    let (mut total, mut blocks) = (0u64, 0u64);
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
        if let Some(b) = budget
            && !b.claim(len as u64)
        {
            return Ok(LoopEnd::Budget);
        }
        let mut off = 0;
        while off < len {
            match tx.send(off) {
                Ok(0) => {
                    let err = std::io::Error::new(ErrorKind::WriteZero, "peer closed the stream");
                    return Err(EngineError::Stream { op: "write to", err });
                }
                Ok(n) => {
                    off += n;
                    total += n as u64;
                    counters.bytes.store(total, Ordering::Relaxed);
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
        blocks += 1;
        counters.blocks.store(blocks, Ordering::Relaxed);
    }
}

/// Reads until EOF, stopped, or failure; counts every byte, including after the test ended
/// (the drain that makes receiver totals exact).
pub(crate) fn recv_loop(
    sock: &TcpStream,
    spec: &StreamSpec,
    counters: &Counters,
    stop: &AtomicBool,
    budget: Option<&Budget>,
    on_budget: &dyn Fn(),
) -> Result<LoopEnd, EngineError> {
    sock.set_read_timeout(Some(POLL)).map_err(|err| EngineError::Stream { op: "read from", err })?;
    let mut buf = vec![0u8; spec.len.clamp(1, 4 * 1024 * 1024)];
    let (mut total, mut blocks) = (0u64, 0u64);
    let mut last_data = Instant::now();
    counters.io.set_receive(spec.skip_rx_copy);
    loop {
        match receive(sock, &mut buf, spec.skip_rx_copy) {
            Ok(0) => return Ok(LoopEnd::Eof),
            Ok(n) => {
                total += n as u64;
                blocks += 1;
                counters.bytes.store(total, Ordering::Relaxed);
                counters.blocks.store(blocks, Ordering::Relaxed);
                last_data = Instant::now();
                if budget.is_some_and(|b| b.record(n as u64)) {
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
