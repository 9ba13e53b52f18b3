//! A sending worker: its loop (`Runs for Worker<TxState>`) and one sender's turn, following
//! `tcp::send_blocks` call for call, through the one send path (`send_path`).

use super::member::Member;
use super::poll::{POLL, Runs, Worker};
use super::slot::{Step, tcp};
use crate::error::EngineError;
use crate::stream::budget::Claim;
use crate::stream::loop_end::LoopEnd;
use crate::stream::notsent::NotsentGate;
use crate::stream::send_path::{SendBuffer, StreamPath};
use crate::stream::spec::StreamSpec;
use std::io::ErrorKind;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// The most one send call of a worker moves for one stream (a receiving worker reads at most
/// `buffer::WORKER_RECEIVE` per call). Smaller than a lone stream's 1 MiB:
/// the worker's streams take turns, so the cost of a call is shared anyway, and a worker's
/// buffer is the memory every stream on it uses.
const WORKER_CALL: usize = 512 * 1024;

impl Runs for Worker<TxState> {
    fn run(&mut self, members: Vec<(usize, Member)>, spec: &StreamSpec) {
        // Paced streams move one block per call, the pacing step (as on a thread of their own).
        let tx = SendBuffer::new(spec, WORKER_CALL);
        let dealt = members.len();
        let start = Instant::now();
        for (id, m) in members {
            let path = match (&tx, tcp(&m)) {
                (Ok(tx), Some(sock)) => tx.start(sock, &m.counters.io),
                _ => StreamPath::without_buffer(&m.counters.io),
            };
            let st = TxState::new(&m, path, start, spec);
            self.slots.push(Self::slot(id, m, st, dealt));
        }
        let tx = match tx {
            Ok(tx) => tx,
            Err(err) => return self.fail_to_allocate(&err),
        };
        loop {
            self.take_arrivals();
            let mut turn = TxTurn { tx: &tx, rate: spec.rate, next_due: None };
            let busy = self.rounds(|s| s.st.step(&s.m, &mut s.ready, &mut turn));
            let next_due = turn.next_due;
            self.report_if_due();
            if self.finished() {
                break;
            }
            let timeout = if busy {
                Duration::ZERO
            } else {
                next_due.map_or(POLL, |d| d.saturating_duration_since(Instant::now()).min(POLL))
            };
            self.wait(timeout);
        }
    }
}

/// A sending stream's place in its calls: bytes `off..end` of the worker's buffer are the
/// rest of the current call.
pub(super) struct TxState {
    total: u64,
    off: usize,
    end: usize,
    /// Blocks of the current call claimed from the budget, released once they are written.
    held: usize,
    /// When the stream started: its pacing schedule counts from here, on whichever worker.
    start: Instant,
    /// This stream's own path choice (a refused sendfile falls back for this stream only).
    path: StreamPath,
    /// Its look at whether the path is host-local (`notsent`).
    notsent: NotsentGate,
}

/// What a sender's turn is given besides its own state: the worker's send buffer, the test's
/// rate (bit/s, 0 = unpaced), and the earliest moment a paced stream of this round is due
/// (which the turn lowers).
struct TxTurn<'a> {
    tx: &'a SendBuffer,
    rate: u64,
    next_due: Option<Instant>,
}

impl TxState {
    fn new(m: &Member, path: StreamPath, start: Instant, spec: &StreamSpec) -> Self {
        let notsent = NotsentGate::new(spec, m.budget.as_deref(), start);
        TxState { total: 0, off: 0, end: 0, held: 0, start, path, notsent }
    }

    /// One turn, following `tcp::send_blocks` call for call.
    fn step(&mut self, m: &Member, ready: &mut bool, turn: &mut TxTurn<'_>) -> Step {
        let (block, per_call, rate) = (turn.tx.block_len(), turn.tx.blocks_per_call(), turn.rate);
        let next_due = &mut turn.next_due;
        let stopping = m.stop.load(Ordering::Relaxed);
        if self.off >= self.end {
            // The call's blocks are written (or cut short by the stop: the test ends anyway).
            if let Some(b) = m.budget.as_ref().filter(|_| self.held > 0) {
                b.written(std::mem::take(&mut self.held));
            }
            if stopping {
                return Step::End(Ok(LoopEnd::Stopped));
            }
            if rate > 0 {
                let due = self.start + Duration::from_secs_f64(self.total as f64 * 8.0 / rate as f64);
                if Instant::now() < due {
                    *next_due = Some(next_due.map_or(due, |d| d.min(due)));
                    return Step::Idle;
                }
            }
            // Claimed even when not writable, as a thread claims before its write blocks: the
            // last stream to write a claimed block must find the budget done at once (the test
            // waits for that), not when its socket drains.
            let granted = match m.budget.as_ref().map(|b| b.claim(per_call, block as u64)) {
                None => per_call,
                Some(Claim::Granted(n)) => {
                    self.held = n;
                    n
                }
                Some(Claim::Spent) => return Step::End(Ok(LoopEnd::Spent)),
                Some(Claim::Done) => return Step::End(Ok(LoopEnd::Budget)),
            };
            self.off = 0;
            self.end = granted * block;
        } else if stopping {
            // Finish only the block in progress, as a thread does when the test ends.
            self.end = self.off.next_multiple_of(block).min(self.end);
            if self.off >= self.end {
                return Step::End(Ok(LoopEnd::Stopped));
            }
        }
        // A stopping stream tries once even when not known writable: a blocked thread's
        // write ends the same way, at its timeout, with what went out.
        if !*ready && !stopping {
            return Step::Idle;
        }
        let Some(sock) = tcp(m) else { return Step::End(Ok(LoopEnd::Stopped)) };
        match turn.tx.send(&mut self.path, sock, self.off, self.end, &m.counters.io) {
            Ok(0) => {
                let err = std::io::Error::new(ErrorKind::WriteZero, "peer closed the stream");
                Step::End(Err(EngineError::Stream { op: "write to", err }))
            }
            Ok(n) => {
                self.off += n;
                self.total += n as u64;
                m.counters.bytes.store(self.total, Ordering::Relaxed);
                self.notsent.poll(sock, &m.counters.io);
                Step::Moved
            }
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                *ready = false;
                if stopping { Step::End(Ok(LoopEnd::Stopped)) } else { Step::Idle }
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => Step::Moved,
            Err(err) => {
                if m.stop.load(Ordering::Relaxed) {
                    return Step::End(Ok(LoopEnd::Stopped));
                }
                Step::End(Err(EngineError::Stream { op: "write to", err }))
            }
        }
    }
}
