//! The shared workers of one direction as a crew: where each worker's period figures meet the
//! [`Balancer`], where its orders wait, and the inboxes streams are handed over through.
//!
//! A worker reports an [`Observation`] each period ([`Group::publish`]); once every worker of
//! the crew has reported since the last decision, the balancer decides, and each move becomes
//! an order for the worker that holds the stream, which it finds in the answer to its next
//! report. The worker carries an order out by taking the stream's whole state off its epoll
//! set and sending it to the target's inbox ([`Group::hand`]), which wakes the target.
//!
//! The crew also counts its live streams: a stream in an inbox is still live, so no worker
//! leaves while a stream may still come to it, and every worker leaves once none is left.

use super::balance::{Balancer, Observation};
use crossbeam_channel::{Receiver, Sender};
use mio::Waker;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// What every worker and every stream of a crew share, whatever the stream state's type.
pub(crate) struct Crew {
    wakers: Vec<Arc<Waker>>,
    /// Streams not ended yet (on a worker or in an inbox).
    live: AtomicUsize,
    /// Worker threads that have left.
    exited: AtomicUsize,
    /// A worker thread panicked: its streams will never end on their own.
    broken: AtomicBool,
    board: Mutex<Board>,
}

impl Crew {
    /// Makes worker `w` look at its streams and inbox now.
    pub(crate) fn wake(&self, w: usize) {
        if let Some(k) = self.wakers.get(w) {
            // A failed wake only delays the worker until its next timeout.
            let _ = k.wake();
        }
    }

    /// Wakes every worker (a stop may concern a stream on any of them, or in an inbox).
    pub(crate) fn wake_all(&self) {
        (0..self.wakers.len()).for_each(|w| self.wake(w));
    }

    /// A stream ended; the last one wakes every worker so the idle ones leave.
    pub(crate) fn stream_ended(&self) {
        if self.live.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.wake_all();
        }
    }

    /// True once a worker with no streams may leave: none is live anywhere, or the crew broke.
    pub(crate) fn done(&self) -> bool {
        self.live.load(Ordering::Acquire) == 0 || self.broken.load(Ordering::Acquire)
    }

    /// True once every worker thread has left, or one of them panicked.
    pub(crate) fn exited(&self) -> bool {
        self.exited.load(Ordering::Acquire) >= self.wakers.len() || self.broken.load(Ordering::Acquire)
    }

    /// Worker `w`'s figures for a period; returns the streams it is to hand over (id, target).
    pub(crate) fn publish(&self, w: usize, obs: Observation) -> Vec<(usize, usize)> {
        // A poisoned board only means a worker panicked while holding it; its figures are
        // plain data, still usable.
        let mut b = self.board.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let Some(slot) = b.pending.get_mut(w) else { return Vec::new() };
        match slot {
            Some(p) => p.merge(obs),
            None => *slot = Some(obs),
        }
        if b.pending.iter().all(Option::is_some) {
            let figures = std::mem::replace(&mut b.pending, vec![None; self.wakers.len()]);
            let moves = b.balancer.decide(&figures);
            for m in moves {
                if let Some(o) = b.orders.get_mut(m.from) {
                    o.push((m.stream, m.to));
                }
            }
        }
        b.orders.get_mut(w).map(std::mem::take).unwrap_or_default()
    }

    /// Orders worker `from` to hand stream `id` to worker `to` at its next report, as the
    /// balancer would (tests of the hand-over itself).
    #[cfg(test)]
    pub(crate) fn order(&self, from: usize, id: usize, to: usize) {
        let mut b = self.board.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(o) = b.orders.get_mut(from) {
            o.push((id, to));
        }
    }

    /// The crew will not run as a whole (a worker could not be started): the workers that
    /// did start leave once their own streams have ended.
    pub(crate) fn abandon(&self) {
        self.broken.store(true, Ordering::Release);
        self.wake_all();
    }

    /// A worker thread leaves (`panicked`: by unwinding).
    pub(crate) fn worker_left(&self, panicked: bool) {
        if panicked {
            self.abandon();
        }
        self.exited.fetch_add(1, Ordering::AcqRel);
    }
}

/// The balancer's side of the crew: the figures each worker reported since the last decision,
/// and the orders not yet picked up.
struct Board {
    balancer: Balancer,
    pending: Vec<Option<Observation>>,
    /// Per worker: (stream id, target worker).
    orders: Vec<Vec<(usize, usize)>>,
}

/// A crew whose streams are handed over as values of type `S`.
pub(crate) struct Group<S> {
    pub crew: Arc<Crew>,
    inboxes: Vec<Sender<S>>,
}

impl<S> Group<S> {
    /// A crew of one worker per waker, with `live` streams; also the inbox receiver of each.
    pub(crate) fn new(wakers: Vec<Arc<Waker>>, live: usize) -> (Arc<Self>, Vec<Receiver<S>>) {
        let n = wakers.len();
        let (inboxes, receivers): (Vec<_>, Vec<_>) = (0..n).map(|_| crossbeam_channel::unbounded()).unzip();
        let board = Board { balancer: Balancer::new(n), pending: vec![None; n], orders: vec![Vec::new(); n] };
        let crew = Arc::new(Crew {
            wakers,
            live: AtomicUsize::new(live),
            exited: AtomicUsize::new(0),
            broken: AtomicBool::new(false),
            board: Mutex::new(board),
        });
        (Arc::new(Group { crew, inboxes }), receivers)
    }

    /// Sends a stream to worker `to` and wakes it; gives the stream back if that worker is gone.
    pub(crate) fn hand(&self, to: usize, stream: S) -> Result<(), S> {
        let Some(inbox) = self.inboxes.get(to) else { return Err(stream) };
        inbox.send(stream).map_err(|e| e.0)?;
        self.crew.wake(to);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn wakers(n: usize) -> (Vec<mio::Poll>, Vec<Arc<Waker>>) {
        let polls: Vec<mio::Poll> = (0..n).map(|_| mio::Poll::new().unwrap()).collect();
        let wakers = polls.iter().map(|p| Arc::new(Waker::new(p.registry(), mio::Token(0)).unwrap())).collect();
        (polls, wakers)
    }

    fn busy(streams: &[usize]) -> Observation {
        Observation {
            period: Duration::from_millis(100),
            waited: Duration::ZERO,
            cpu: Duration::from_millis(100),
            streams: streams.iter().map(|&s| (s, 1_000_000)).collect(),
        }
    }

    fn idle() -> Observation {
        Observation { period: Duration::from_millis(100), waited: Duration::from_millis(100), ..Default::default() }
    }

    #[test]
    fn orders_go_to_the_worker_that_holds_the_stream() {
        let (_polls, w) = wakers(2);
        let (g, inboxes) = Group::<u32>::new(w, 3);
        // Worker 0 holds three busy streams, worker 1 none; the move is wanted twice, so the
        // second decision orders it, and worker 0 learns at its next report.
        for _ in 0..2 {
            assert!(g.crew.publish(0, busy(&[0, 2, 4])).is_empty());
            assert!(g.crew.publish(1, idle()).is_empty(), "worker 1 is not the one to hand over");
        }
        assert_eq!(g.crew.publish(0, busy(&[0, 2, 4])), [(0, 1)]);
        g.hand(1, 7).unwrap();
        assert_eq!(inboxes[1].try_recv(), Ok(7));
        assert!(!g.crew.done());
        for _ in 0..3 {
            g.crew.stream_ended();
        }
        assert!(g.crew.done());
        drop(inboxes);
        assert_eq!(g.hand(1, 8), Err(8), "a worker that is gone gives the stream back");
        assert_eq!(g.hand(5, 9), Err(9));
    }

    #[test]
    fn no_decision_until_every_worker_reported() {
        let (_polls, w) = wakers(2);
        let (g, _inboxes) = Group::<u32>::new(w, 3);
        for _ in 0..10 {
            assert!(g.crew.publish(0, busy(&[0, 2, 4])).is_empty(), "worker 1 never reports");
        }
        assert!(!g.crew.exited());
        g.crew.worker_left(false);
        assert!(!g.crew.exited());
        g.crew.worker_left(true);
        assert!(g.crew.exited() && g.crew.done(), "a panicked worker breaks the crew");
    }
}
