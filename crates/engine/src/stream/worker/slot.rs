//! One stream on a worker ([`Slot`]: the state that moves with it between workers), what one
//! turn of it did ([`Step`]), and the small helpers every part of the worker shares.

use super::member::Member;
use crate::error::EngineError;
use crate::stream::loop_end::LoopEnd;
use crate::stream::sock::DataSock;
use std::net::TcpStream;

/// One stream on a worker: everything that moves with it when it changes workers.
pub(super) struct Slot<S> {
    /// Its id in the crew (and its epoll token).
    pub(super) id: usize,
    pub(super) m: Member,
    /// Its loop state (`TxState` or `RxState`).
    pub(super) st: S,
    /// Known ready for its next call.
    pub(super) ready: bool,
    /// Streams on the worker it was dealt to (its `shared_by`).
    pub(super) dealt: usize,
    /// Its byte count when the worker's period began (or when it arrived).
    pub(super) period_mark: u64,
    /// Its byte count when the worker's CPU time was last shared out.
    pub(super) cpu_mark: u64,
    /// Its share of its workers' CPU time so far, µs (user, system).
    pub(super) cpu_us: (f64, f64),
    /// How it ended, once it has (it leaves the worker after the round).
    pub(super) end: Option<Result<LoopEnd, EngineError>>,
}

/// What one turn of a stream did.
pub(super) enum Step {
    /// Bytes moved: another round may move more.
    Moved,
    /// Nothing to do now (not ready, or not due).
    Idle,
    /// The stream is over.
    End(Result<LoopEnd, EngineError>),
}

/// The socket of a member (checked to be TCP when the worker started).
pub(super) fn tcp(m: &Member) -> Option<&TcpStream> {
    match &*m.sock {
        DataSock::Tcp(s) => Some(s),
        DataSock::Udp(_) => None,
    }
}

/// A copy of `e` for each stream it ends.
pub(super) fn clone_err(e: &std::io::Error) -> std::io::Error {
    // An OS error stays one (so it prints as iperf3 prints it, without " (os error N)").
    e.raw_os_error().map_or_else(|| std::io::Error::new(e.kind(), e.to_string()), std::io::Error::from_raw_os_error)
}
