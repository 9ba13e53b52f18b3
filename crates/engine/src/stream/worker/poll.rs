//! A worker's poll loop, the part both directions share: the wait in epoll, the rounds of
//! one turn per stream, taking in the streams handed over by another worker, and ending
//! streams (what a stream thread would tell the test thread). The direction's turns are in
//! `send` and `recv`, the period's figures and the moves in `accounting`.

use super::member::Member;
use super::slot::{Slot, Step, clone_err, tcp};
use crate::ctrl::Wake;
use crate::error::EngineError;
use crate::stream::crew::Group;
use crate::stream::loop_end::LoopEnd;
use crate::stream::spec::StreamSpec;
use crossbeam_channel::{Receiver, Sender};
use mio::unix::SourceFd;
use mio::{Events, Interest, Poll, Token};
use std::io::ErrorKind;
use std::os::fd::AsRawFd;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// Longest wait in epoll: how often the stop flags, `--rcv-timeout` and the omit/draining
/// state are looked at when nothing happens, as a blocked stream thread does (`tcp::POLL`).
pub(super) const POLL: Duration = Duration::from_millis(50);
/// How often a worker reports its figures to the balancer (on its own clock).
pub(super) const PERIOD: Duration = Duration::from_millis(100);
/// The token of the waker that tells a worker to look at its stop flags and inbox now.
pub(super) const WAKE: Token = Token(usize::MAX);

/// The loop of a worker of one direction.
pub(super) trait Runs {
    /// Runs the worker's first `members` (with their crew ids), and whatever streams come
    /// later, until the crew has no stream left.
    fn run(&mut self, members: Vec<(usize, Member)>, spec: &StreamSpec);
}

/// One worker thread: its epoll set, its streams (`S` is the direction's loop state) and the
/// figures of its current period.
pub(super) struct Worker<S> {
    pub(super) index: usize,
    pub(super) poll: Poll,
    pub(super) interest: Interest,
    pub(super) events: Events,
    pub(super) notify: Sender<Wake>,
    pub(super) group: Arc<Group<Slot<S>>>,
    pub(super) inbox: Receiver<Slot<S>>,
    pub(super) slots: Vec<Slot<S>>,
    pub(super) period_start: Instant,
    /// Time spent in epoll this period.
    pub(super) waited: Duration,
    /// The thread's CPU time when it was last shared out among the streams.
    pub(super) cpu_mark: (Duration, Duration),
    /// The thread's CPU time when the period began.
    pub(super) period_cpu: (Duration, Duration),
}

impl<S> Worker<S> {
    pub(super) fn slot(id: usize, m: Member, st: S, dealt: usize) -> Slot<S> {
        let bytes = m.counters.bytes();
        Slot { id, m, st, ready: true, dealt, period_mark: bytes, cpu_mark: bytes, cpu_us: (0.0, 0.0), end: None }
    }

    /// Waits for readiness (or `timeout`) and marks the streams that became ready.
    pub(super) fn wait(&mut self, timeout: Duration) {
        let before = Instant::now();
        let res = self.poll.poll(&mut self.events, Some(timeout));
        self.waited += before.elapsed();
        if res.is_err() {
            // EINTR or a broken epoll: try every stream once; their calls tell what is wrong.
            self.slots.iter_mut().for_each(|s| s.ready = true);
            return;
        }
        for ev in self.events.iter() {
            let id = ev.token().0;
            if let Some(s) = self.slots.iter_mut().find(|s| s.id == id) {
                s.ready = true;
            }
        }
    }

    /// Rounds of one turn per live stream, until a round moves nothing or the period is over;
    /// a turn that ends its stream ends it after its round. True when the last round moved
    /// bytes (the streams may be ready still).
    pub(super) fn rounds(&mut self, mut turn: impl FnMut(&mut Slot<S>) -> Step) -> bool {
        loop {
            let mut moved = false;
            let mut ended = false;
            for s in self.slots.iter_mut() {
                match turn(s) {
                    Step::Moved => moved = true,
                    Step::Idle => {}
                    Step::End(res) => {
                        s.end = Some(res);
                        ended = true;
                    }
                }
            }
            if ended {
                self.finish_ended();
            }
            if !moved || self.slots.is_empty() {
                return false;
            }
            if self.period_start.elapsed() >= PERIOD {
                return true;
            }
        }
    }

    /// Ends the streams whose turn ended them: their CPU share, what a stream thread would
    /// tell the test thread, and the crew's count.
    pub(super) fn finish_ended(&mut self) {
        self.share_cpu();
        let mut i = 0;
        while i < self.slots.len() {
            if self.slots[i].end.is_none() {
                i += 1;
                continue;
            }
            let mut s = self.slots.remove(i);
            if let Some(sock) = tcp(&s.m) {
                let _ = self.poll.registry().deregister(&mut SourceFd(&sock.as_raw_fd()));
            }
            let res = s.end.take().unwrap_or(Ok(LoopEnd::Stopped));
            self.end(&s, res);
        }
    }

    /// Stream `s` ended: record its CPU share, tell the test thread what a stream thread
    /// would, and mark it finished.
    fn end(&self, s: &Slot<S>, res: Result<LoopEnd, EngineError>) {
        let m = &s.m;
        m.counters.record_cpu_share(s.cpu_us, s.dealt);
        match res {
            Ok(LoopEnd::Budget) => {
                let _ = self.notify.send(Wake::BudgetReached);
            }
            Ok(_) => {}
            Err(e) if !m.stop.load(Ordering::Relaxed) => {
                let _ = self.notify.send(Wake::StreamFailed(e));
            }
            Err(_) => {}
        }
        m.counters.finished.store(true, Ordering::Release);
        self.group.crew.stream_ended();
    }

    /// Takes in the streams handed to this worker: watched here from now on, tried at once.
    pub(super) fn take_arrivals(&mut self) {
        while let Ok(mut s) = self.inbox.try_recv() {
            let registered = match tcp(&s.m) {
                Some(sock) => {
                    self.poll.registry().register(&mut SourceFd(&sock.as_raw_fd()), Token(s.id), self.interest)
                }
                None => Err(std::io::Error::new(ErrorKind::InvalidInput, "a shared worker moves TCP streams only")),
            };
            let bytes = s.m.counters.bytes();
            (s.period_mark, s.cpu_mark, s.ready) = (bytes, bytes, true);
            match registered {
                Ok(()) => self.slots.push(s),
                Err(err) => {
                    s.end = Some(Err(EngineError::Stream { op: "watch", err }));
                    self.slots.push(s);
                    self.finish_ended();
                }
            }
        }
    }

    /// Ends every stream handed to this worker so far: its buffer could not be allocated.
    pub(super) fn fail_to_allocate(&mut self, err: &std::io::Error) {
        for s in &mut self.slots {
            s.end = Some(Err(EngineError::Stream { op: "allocate a buffer for", err: clone_err(err) }));
        }
        self.finish_ended();
    }

    /// True when the worker may leave: no stream of its own and none left in the crew.
    pub(super) fn finished(&self) -> bool {
        self.slots.is_empty() && self.group.crew.done()
    }
}
