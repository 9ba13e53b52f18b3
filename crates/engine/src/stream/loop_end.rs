//! How a stream loop ends: [`LoopEnd`] when it ends well, and the one rule every receive loop
//! (TCP and UDP) applies to a failed read.

use super::Counters;
use crate::error::EngineError;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Why a loop ended without error.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum LoopEnd {
    /// The test thread asked it to stop.
    Stopped,
    /// The `-n`/`-k` budget is spent and every block claimed from it written (sender), or it
    /// was crossed (receiver): the test may end.
    Budget,
    /// Sender: the budget is spent, but other streams still write blocks they claimed; the
    /// last of them ends with [`LoopEnd::Budget`]. Ending the test here would cut them short.
    Spent,
    /// The peer closed the connection (receiver).
    Eof,
}

/// What a receive loop does after a failed read, the same for TCP and UDP: stop when asked;
/// on a transient error (timeout, would-block) keep waiting unless the stream has been silent
/// past `--rcv-timeout` while the test runs; on any other error fail, unless the test is
/// already stopping or draining. `None` means: read again.
pub(crate) fn after_read_error(
    err: std::io::Error,
    transient: bool,
    stop: &AtomicBool,
    counters: &Counters,
    silent_for: Duration,
    rcv_timeout: Duration,
    fail: impl FnOnce(std::io::Error) -> EngineError,
) -> Option<Result<LoopEnd, EngineError>> {
    let stopping = stop.load(Ordering::Relaxed);
    let draining = counters.draining.load(Ordering::Relaxed);
    if transient {
        if stopping {
            return Some(Ok(LoopEnd::Stopped));
        }
        if !draining && silent_for > rcv_timeout {
            return Some(Err(EngineError::RecvTimeout));
        }
        return None;
    }
    if stopping || draining {
        return Some(Ok(LoopEnd::Stopped));
    }
    Some(Err(fail(err)))
}
