//! What a shared worker is given for each stream ([`Member`]), and what the streams keep of
//! their direction's workers ([`WorkerLink`]: wake them, see whether they are gone).

use crate::stream::budget::Budget;
use crate::stream::counters::Counters;
use crate::stream::crew::Crew;
use crate::stream::sock::DataSock;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

/// What a worker is given for one stream.
pub(crate) struct Member {
    /// Its socket (the test thread keeps another reference for TCP_INFO and shutdown).
    pub sock: Arc<DataSock>,
    /// Its counters.
    pub counters: Arc<Counters>,
    /// Its stop flag.
    pub stop: Arc<AtomicBool>,
    /// The `-n`/`-k` budget of its direction.
    pub budget: Option<Arc<Budget>>,
}

/// The workers of a direction, as the streams on them see them.
#[derive(Clone)]
pub(crate) struct WorkerLink {
    pub(super) crew: Arc<Crew>,
}

impl WorkerLink {
    /// Makes the workers look at their streams' stop flags now instead of at their next
    /// timeout (the stream may be on any of them, or on its way between two).
    pub(crate) fn wake(&self) {
        self.crew.wake_all();
    }

    /// True once the worker threads are gone (all their streams ended, or one failed).
    pub(crate) fn exited(&self) -> bool {
        self.crew.exited()
    }

    /// Orders worker `from` to hand stream `id` (its place among all the direction's streams,
    /// as dealt) to worker `to` at its next report.
    #[cfg(test)]
    pub(crate) fn order_move(&self, from: usize, id: usize, to: usize) {
        self.crew.order(from, id, to);
    }
}
