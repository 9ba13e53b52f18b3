//! A shared worker: one thread that moves the data of many TCP streams of one direction, on
//! nonblocking sockets watched with epoll (`mio`).
//!
//! Why: a thread per stream costs a stack, a buffer of up to 1 MiB and a scheduler entity per
//! stream; at `-P 128` that was about 40 MB per side. A worker has one buffer for all its
//! streams (a sender's holds the repeated block, which never changes; a receiver's is scratch
//! space whose contents nobody reads), so memory no longer grows with the stream count.
//!
//! Every figure stays per stream and exact: each stream keeps its own [`Counters`], updated
//! after every system call on its socket, its own stop flag, its share of the `-n`/`-k`
//! budget, its own pacing schedule and low-water state, and ends with the same [`LoopEnd`] and
//! notifications as a stream on its own thread (`tcp.rs`), whose rules this follows call for
//! call. Streams take turns: one call each per round, so a fast stream cannot starve the
//! others of the worker.
//!
//! What a worker does not do (those streams keep their own threads, see `schedule`): UDP, `-F`
//! files and `MSG_ZEROCOPY` (its completion queue wants a thread that can wait on it). A
//! stream's CPU time is not known on its own here: every period (and as a stream ends or
//! leaves) the worker shares its thread's CPU time since the last time out among its streams
//! by the bytes each moved meanwhile (`wireperf_cpu.shared_by` says so), which is what the
//! kernel spends per byte on them.
//!
//! The workers of a direction form a crew (`crew`): every `PERIOD` each reports its figures
//! (time waited in epoll, CPU time, bytes per stream) to the balancer (`balance`), and hands
//! the streams it is told to move, with their whole state (a `Slot`), to the target worker's
//! inbox. A worker leaves only when no stream of the crew is left, as one may still come to it.

//!
//! # Layout
//! Leaves first; each file imports only files listed above it.
//! - `member`: what a worker is given per stream, and the streams' link to their workers.
//! - `slot`: one stream on a worker (what moves with it) and what one turn did.
//! - `poll`: the loop both directions share: epoll, rounds of turns, arrivals, ends.
//! - `accounting`: CPU time shared out among the streams, the period's report, the moves.
//! - `send` / `recv`: each direction's loop and one stream's turn.
//! - `spawn`: starting a direction's workers.

mod accounting;
mod member;
mod poll;
mod recv;
mod send;
mod slot;
mod spawn;
#[cfg(test)]
mod tests;

pub(crate) use member::{Member, WorkerLink};
pub(crate) use spawn::spawn;
