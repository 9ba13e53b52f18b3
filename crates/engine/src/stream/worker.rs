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

use super::balance::Observation;
use super::crew::{Crew, Group};
use super::low_water::{LowWater, Switch};
use super::tx_path::TxPath;
use super::{Budget, Counters, DataSock, LoopEnd, StreamSpec};
use crate::ctrl::Wake;
use crate::error::EngineError;
use crossbeam_channel::{Receiver, Sender};
use mio::unix::SourceFd;
use mio::{Events, Interest, Poll, Token, Waker};
use std::io::ErrorKind;
use std::net::TcpStream;
use std::os::fd::AsRawFd;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Longest wait in epoll: how often the stop flags, `--rcv-timeout` and the omit/draining
/// state are looked at when nothing happens, as a blocked stream thread does (`tcp::POLL`).
const POLL: Duration = Duration::from_millis(50);
/// While a receiver's low-water mark is set, its socket is read at least this often, so the
/// last partial block of a stream is counted at most this late (as `tcp::LOW_WATER_POLL`).
const LOW_WATER_POLL: Duration = Duration::from_millis(10);
/// The most one send call of a worker moves for one stream (a receiving worker reads at most
/// `buffer::WORKER_RECEIVE` per call). Smaller than a lone stream's 1 MiB:
/// the worker's streams take turns, so the cost of a call is shared anyway, and a worker's
/// buffer is the memory every stream on it uses.
const WORKER_CALL: usize = 512 * 1024;
/// How often a worker reports its figures to the balancer (on its own clock).
const PERIOD: Duration = Duration::from_millis(100);
/// The token of the waker that tells a worker to look at its stop flags and inbox now.
const WAKE: Token = Token(usize::MAX);

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
    crew: Arc<Crew>,
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

/// Tells the crew when the worker thread leaves, however it leaves.
struct ExitFlag(Arc<Crew>);

impl Drop for ExitFlag {
    fn drop(&mut self) {
        self.0.worker_left(std::thread::panicking());
    }
}

/// One stream on a worker: everything that moves with it when it changes workers.
pub(super) struct Slot<S> {
    /// Its id in the crew (and its epoll token).
    id: usize,
    m: Member,
    /// Its loop state (`TxState` or `RxState`).
    st: S,
    /// Known ready for its next call.
    ready: bool,
    /// Streams on the worker it was dealt to (its `shared_by`).
    dealt: usize,
    /// Its byte count when the worker's period began (or when it arrived).
    period_mark: u64,
    /// Its byte count when the worker's CPU time was last shared out.
    cpu_mark: u64,
    /// Its share of its workers' CPU time so far, µs (user, system).
    cpu_us: (f64, f64),
    /// How it ended, once it has (it leaves the worker after the round).
    end: Option<Result<LoopEnd, EngineError>>,
}

/// Starts the workers of one direction, one per member list, all sending (`sender`) or all
/// receiving. Their streams may move between them (`balance`, `crew`).
pub(crate) fn spawn(
    name: &str,
    sender: bool,
    workers: Vec<Vec<Member>>,
    spec: &StreamSpec,
    notify: Sender<Wake>,
) -> Result<(Vec<JoinHandle<()>>, WorkerLink), EngineError> {
    if sender {
        spawn_as::<TxState>(name, true, workers, spec, notify)
    } else {
        spawn_as::<RxState>(name, false, workers, spec, notify)
    }
}

fn spawn_as<S: Send + 'static>(
    name: &str,
    sender: bool,
    workers: Vec<Vec<Member>>,
    spec: &StreamSpec,
    notify: Sender<Wake>,
) -> Result<(Vec<JoinHandle<()>>, WorkerLink), EngineError>
where
    Worker<S>: Runs,
{
    let fail = |op| move |err| EngineError::Stream { op, err };
    let interest = if sender { Interest::WRITABLE } else { Interest::READABLE };
    let mut polls = Vec::with_capacity(workers.len());
    let mut wakers = Vec::with_capacity(workers.len());
    let mut next_id = 0;
    let mut dealt = Vec::with_capacity(workers.len());
    for members in &workers {
        let poll = Poll::new().map_err(fail("watch"))?;
        wakers.push(Arc::new(Waker::new(poll.registry(), WAKE).map_err(fail("watch"))?));
        let mut ids = Vec::with_capacity(members.len());
        for m in members {
            let Some(s) = tcp(m) else {
                let err = std::io::Error::new(ErrorKind::InvalidInput, "a shared worker moves TCP streams only");
                return Err(EngineError::Stream { op: "watch", err });
            };
            s.set_nonblocking(true).map_err(fail(if sender { "write to" } else { "read from" }))?;
            poll.registry().register(&mut SourceFd(&s.as_raw_fd()), Token(next_id), interest).map_err(fail("watch"))?;
            ids.push(next_id);
            next_id += 1;
        }
        dealt.push(ids);
        polls.push(poll);
    }
    let (group, inboxes) = Group::<Slot<S>>::new(wakers, next_id);
    let link = WorkerLink { crew: Arc::clone(&group.crew) };
    let mut handles = Vec::with_capacity(workers.len());
    let parts = polls.into_iter().zip(inboxes).zip(workers).zip(dealt).enumerate();
    for (index, (((poll, inbox), members), ids)) in parts {
        let spec = spec.clone();
        let mine = Arc::clone(&group);
        let notify = notify.clone();
        let flag = ExitFlag(Arc::clone(&group.crew));
        let handle = std::thread::Builder::new()
            .name(format!("{name}{index}"))
            .spawn(move || {
                let _flag = flag;
                if let Some(cpu) = spec.affinity {
                    let _ = wireperf_sys::set_thread_affinity(cpu);
                }
                let n = members.len();
                let mut w = Worker::<S> {
                    index,
                    poll,
                    interest,
                    events: Events::with_capacity(n.clamp(16, 256)),
                    notify,
                    group: mine,
                    inbox,
                    slots: Vec::with_capacity(n),
                    period_start: Instant::now(),
                    waited: Duration::ZERO,
                    cpu_mark: thread_cpu(),
                    period_cpu: thread_cpu(),
                };
                w.run(ids.into_iter().zip(members).collect(), &spec);
            })
            .map_err(fail("start a thread for"));
        match handle {
            Ok(h) => handles.push(h),
            Err(e) => {
                // The streams of the workers not started never end: let the others go.
                group.crew.abandon();
                return Err(e);
            }
        }
    }
    Ok((handles, link))
}

/// The calling thread's CPU time so far (user, system); zero when the kernel cannot say.
fn thread_cpu() -> (Duration, Duration) {
    wireperf_sys::thread_cpu_times().map_or((Duration::ZERO, Duration::ZERO), |t| (t.user, t.system))
}

/// The loop of a worker of one direction.
pub(super) trait Runs {
    /// Runs the worker's first `members` (with their crew ids), and whatever streams come
    /// later, until the crew has no stream left.
    fn run(&mut self, members: Vec<(usize, Member)>, spec: &StreamSpec);
}

pub(super) struct Worker<S> {
    index: usize,
    poll: Poll,
    interest: Interest,
    events: Events,
    notify: Sender<Wake>,
    group: Arc<Group<Slot<S>>>,
    inbox: Receiver<Slot<S>>,
    slots: Vec<Slot<S>>,
    period_start: Instant,
    /// Time spent in epoll this period.
    waited: Duration,
    /// The thread's CPU time when it was last shared out among the streams.
    cpu_mark: (Duration, Duration),
    /// The thread's CPU time when the period began.
    period_cpu: (Duration, Duration),
}

/// The socket of a member (checked to be TCP when the worker started).
fn tcp(m: &Member) -> Option<&TcpStream> {
    match &*m.sock {
        DataSock::Tcp(s) => Some(s),
        DataSock::Udp(_) => None,
    }
}

impl<S> Worker<S> {
    fn slot(id: usize, m: Member, st: S, dealt: usize) -> Slot<S> {
        let bytes = m.counters.bytes();
        Slot { id, m, st, ready: true, dealt, period_mark: bytes, cpu_mark: bytes, cpu_us: (0.0, 0.0), end: None }
    }

    /// Waits for readiness (or `timeout`) and marks the streams that became ready.
    fn wait(&mut self, timeout: Duration) {
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
    fn rounds(&mut self, mut turn: impl FnMut(&mut Slot<S>) -> Step) -> bool {
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

    /// Shares the thread's CPU time since the last call out among its streams, by the bytes
    /// each moved since then (evenly when none moved any).
    fn share_cpu(&mut self) {
        let now = thread_cpu();
        let (user, system) = (now.0.saturating_sub(self.cpu_mark.0), now.1.saturating_sub(self.cpu_mark.1));
        self.cpu_mark = now;
        let moved: Vec<u64> = self.slots.iter().map(|s| s.m.counters.bytes().saturating_sub(s.cpu_mark)).collect();
        let all: u64 = moved.iter().sum();
        let n = self.slots.len();
        for (s, b) in self.slots.iter_mut().zip(moved) {
            let share = if all > 0 { b as f64 / all as f64 } else { 1.0 / n as f64 };
            s.cpu_us.0 += user.as_micros() as f64 * share;
            s.cpu_us.1 += system.as_micros() as f64 * share;
            s.cpu_mark += b;
        }
    }

    /// Ends the streams whose turn ended them: their CPU share, what a stream thread would
    /// tell the test thread, and the crew's count.
    fn finish_ended(&mut self) {
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
    fn take_arrivals(&mut self) {
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

    /// At the end of a period: reports the period's figures and hands over the streams the
    /// balancer moves away from this worker.
    fn report_if_due(&mut self) {
        let now = Instant::now();
        let period = now.saturating_duration_since(self.period_start);
        if period < PERIOD {
            return;
        }
        self.share_cpu();
        let cpu = (self.cpu_mark.0 + self.cpu_mark.1).saturating_sub(self.period_cpu.0 + self.period_cpu.1);
        // Each stream's bytes this period, read once: the same reading starts the next period.
        let streams = self
            .slots
            .iter_mut()
            .map(|s| {
                let bytes = s.m.counters.bytes();
                let moved = bytes.saturating_sub(s.period_mark);
                s.period_mark = bytes;
                (s.id, moved)
            })
            .collect();
        let obs = Observation { period, waited: self.waited, cpu, streams };
        self.period_start = now;
        self.period_cpu = self.cpu_mark;
        self.waited = Duration::ZERO;
        for (id, to) in self.group.crew.publish(self.index, obs) {
            self.give(id, to);
        }
    }

    /// Hands stream `id` (if it is still here) with its whole state to worker `to`.
    fn give(&mut self, id: usize, to: usize) {
        let Some(i) = self.slots.iter().position(|s| s.id == id && s.end.is_none()) else { return };
        // Its CPU share up to here stays its own (share_cpu ran at this report).
        let Some(sock) = tcp(&self.slots[i].m) else { return };
        let fd = sock.as_raw_fd();
        if self.poll.registry().deregister(&mut SourceFd(&fd)).is_err() {
            return;
        }
        let mut s = self.slots.remove(i);
        s.m.counters.worker_moves.fetch_add(1, Ordering::Relaxed);
        if let Err(back) = self.group.hand(to, s) {
            // The target is gone: the stream stays.
            s = back;
            s.m.counters.worker_moves.fetch_sub(1, Ordering::Relaxed);
            match self.poll.registry().register(&mut SourceFd(&fd), Token(s.id), self.interest) {
                Ok(()) => {
                    s.ready = true;
                    self.slots.push(s);
                }
                Err(err) => {
                    s.end = Some(Err(EngineError::Stream { op: "watch", err }));
                    self.slots.push(s);
                    self.finish_ended();
                }
            }
        }
    }

    /// Ends every stream handed to this worker so far: its buffer could not be allocated.
    fn fail_to_allocate(&mut self, err: &std::io::Error) {
        for s in &mut self.slots {
            s.end = Some(Err(EngineError::Stream { op: "allocate a buffer for", err: clone_err(err) }));
        }
        self.finish_ended();
    }

    /// True when the worker may leave: no stream of its own and none left in the crew.
    fn finished(&self) -> bool {
        self.slots.is_empty() && self.group.crew.done()
    }
}

impl Runs for Worker<TxState> {
    fn run(&mut self, members: Vec<(usize, Member)>, spec: &StreamSpec) {
        let block = spec.len.max(1);
        // Paced streams move one block per call, the pacing step (as `BlockSender`).
        let per_call = if spec.rate > 0 { 1 } else { (spec.call_bytes.min(WORKER_CALL) / block).max(1) };
        let payload = super::buffer::payload(block, spec.repeating_payload);
        // write() keeps one unit and repeats it per call; sendfile's memory file needs it all.
        let copies = super::buffer::copies_kept(block, per_call, spec.send_mode == crate::config::SendMode::Sendfile);
        let dealt = members.len();
        let start = Instant::now();
        let (buf, mut tx) = match super::buffer::repeated(&payload, copies) {
            Ok(b) => {
                let tx = TxPath::new(&b, spec.send_mode);
                (Ok(b), tx)
            }
            Err(err) => (Err(err), TxPath::new(&[], crate::config::SendMode::Write)),
        };
        for (id, m) in members {
            let st = TxState::new(&m, &mut tx, start, spec);
            self.slots.push(Self::slot(id, m, st, dealt));
        }
        let buf = match buf {
            Ok(b) => b,
            Err(err) => return self.fail_to_allocate(&err),
        };
        loop {
            self.take_arrivals();
            let mut next_due: Option<Instant> = None;
            let busy =
                self.rounds(|s| s.st.step(&s.m, &tx, &buf, &mut s.ready, block, per_call, spec.rate, &mut next_due));
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

impl Runs for Worker<RxState> {
    fn run(&mut self, members: Vec<(usize, Member)>, spec: &StreamSpec) {
        let block = spec.len.clamp(1, super::tcp::MAX_CALL);
        let now = Instant::now();
        let dealt = members.len();
        for (id, m) in members {
            m.counters.io.set_receive(spec.skip_rx_copy);
            let st = RxState {
                total: 0,
                last_data: now,
                low_water: LowWater::new(block, now),
                quiet_checked: now,
                probing: false,
            };
            self.slots.push(Self::slot(id, m, st, dealt));
        }
        let mut buf = match super::buffer::zeroed(super::buffer::worker_receive_len(spec.call_bytes, block)) {
            Ok(b) => b,
            Err(err) => return self.fail_to_allocate(&err),
        };
        loop {
            self.take_arrivals();
            let notify = self.notify.clone();
            let busy = self.rounds(|s| s.st.step(&s.m, &mut buf, &mut s.ready, spec, block, &notify));
            // Timers: a stream with its mark set is read anyway after LOW_WATER_POLL (the
            // kernel does not wake a reader for a partial block); a silent one is checked
            // against --rcv-timeout.
            let now = Instant::now();
            let mut low_water_on = false;
            let mut ended = false;
            for s in &mut self.slots {
                if let Some(res) = s.st.on_timer(&s.m, now, spec, &mut s.ready) {
                    s.end = Some(res);
                    ended = true;
                    continue;
                }
                low_water_on |= s.st.low_water.is_on();
            }
            if ended {
                self.finish_ended();
            }
            self.report_if_due();
            if self.finished() {
                break;
            }
            let timeout = match (busy, low_water_on) {
                (true, _) => Duration::ZERO,
                (false, true) => LOW_WATER_POLL,
                (false, false) => POLL,
            };
            self.wait(timeout);
        }
    }
}

fn clone_err(e: &std::io::Error) -> std::io::Error {
    // An OS error stays one (so it prints as iperf3 prints it, without " (os error N)").
    e.raw_os_error().map_or_else(|| std::io::Error::new(e.kind(), e.to_string()), std::io::Error::from_raw_os_error)
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

/// A sending stream's place in its calls: bytes `off..end` of the worker's buffer are the
/// rest of the current call.
pub(super) struct TxState {
    total: u64,
    off: usize,
    end: usize,
    /// When the stream started: its pacing schedule counts from here, on whichever worker.
    start: Instant,
    /// This stream's own path choice (a refused sendfile falls back for this stream only).
    pub(super) path: super::tx_path::Chosen,
    /// Its look at whether the path is host-local (`notsent`).
    notsent: super::notsent::NotsentGate,
}

impl TxState {
    fn new(m: &Member, tx: &mut TxPath, start: Instant, spec: &StreamSpec) -> Self {
        let notsent = super::notsent::NotsentGate::new(spec, m.budget.as_deref(), start);
        TxState { total: 0, off: 0, end: 0, start, path: tx.start(&m.counters.io), notsent }
    }

    /// One turn, following `tcp::send_blocks` call for call.
    #[allow(clippy::too_many_arguments)]
    fn step(
        &mut self,
        m: &Member,
        tx: &TxPath,
        buf: &[u8],
        ready: &mut bool,
        block: usize,
        per_call: usize,
        rate: u64,
        next_due: &mut Option<Instant>,
    ) -> Step {
        let stopping = m.stop.load(Ordering::Relaxed);
        if self.off >= self.end {
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
            if !*ready {
                return Step::Idle;
            }
            // Each block is claimed on its own, so -n/-k end where iperf3's would.
            let granted = match &m.budget {
                Some(b) => (0..per_call).take_while(|_| b.claim(block as u64)).count(),
                None => per_call,
            };
            if granted == 0 {
                return Step::End(Ok(LoopEnd::Budget));
            }
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
        match tx.send(&mut self.path, sock, buf, self.off, self.end, &m.counters.io) {
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

/// A receiving stream's state, as `tcp::recv_loop` keeps it.
struct RxState {
    total: u64,
    last_data: Instant,
    low_water: LowWater,
    /// When the stream's silence was last reported to `low_water`.
    quiet_checked: Instant,
    /// The timer asked for a read below the low-water mark.
    probing: bool,
}

impl RxState {
    /// One read when the socket is ready, following `tcp::recv_loop` read for read.
    fn step(
        &mut self,
        m: &Member,
        buf: &mut [u8],
        ready: &mut bool,
        spec: &StreamSpec,
        block: usize,
        notify: &Sender<Wake>,
    ) -> Step {
        if m.stop.load(Ordering::Relaxed) {
            return Step::End(Ok(LoopEnd::Stopped));
        }
        if !*ready {
            return Step::Idle;
        }
        let Some(sock) = tcp(m) else { return Step::End(Ok(LoopEnd::Stopped)) };
        match super::zerocopy::receive(sock, buf, spec.skip_rx_copy) {
            Ok(0) => Step::End(Ok(LoopEnd::Eof)),
            Ok(n) => {
                self.total += n as u64;
                m.counters.bytes.store(self.total, Ordering::Relaxed);
                self.last_data = Instant::now();
                self.quiet_checked = self.last_data;
                self.probing = false;
                let switch = if m.counters.draining.load(Ordering::Relaxed) {
                    self.low_water.retire()
                } else {
                    self.low_water.on_read(n, self.last_data)
                };
                apply_low_water(sock, switch, &self.low_water, &m.counters);
                if m.budget.as_ref().is_some_and(|b| b.record_stream(n as u64, block as u64)) {
                    // Tell the test thread, but keep reading: the peer must not block, and
                    // what is still in flight is counted in the drain.
                    let _ = notify.send(Wake::BudgetReached);
                }
                if m.stop.load(Ordering::Relaxed) {
                    return Step::End(Ok(LoopEnd::Stopped));
                }
                Step::Moved
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => {
                *ready = false;
                if std::mem::take(&mut self.probing) {
                    // The read a timed-out blocking read would have been: nothing at all came.
                    apply_low_water(sock, self.low_water.on_timeout(Instant::now()), &self.low_water, &m.counters);
                }
                Step::Idle
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => Step::Moved,
            Err(err) => {
                let fail = |err| EngineError::Stream { op: "read from", err };
                let silent = self.last_data.elapsed();
                match super::after_read_error(err, false, &m.stop, &m.counters, silent, spec.rcv_timeout, fail) {
                    Some(end) => Step::End(end),
                    None => Step::Idle,
                }
            }
        }
    }

    /// The timers of a stream that did not become ready: the low-water poll, the silence that
    /// turns the mark off, and `--rcv-timeout`.
    fn on_timer(
        &mut self,
        m: &Member,
        now: Instant,
        spec: &StreamSpec,
        ready: &mut bool,
    ) -> Option<Result<LoopEnd, EngineError>> {
        if m.stop.load(Ordering::Relaxed) {
            return Some(Ok(LoopEnd::Stopped));
        }
        let silent = now.saturating_duration_since(self.last_data);
        if self.low_water.is_on() {
            if silent >= LOW_WATER_POLL {
                // Read what is queued below the mark, as the thread's 10 ms read timeout does.
                *ready = true;
                self.probing = true;
            }
        } else if silent >= POLL && now.saturating_duration_since(self.quiet_checked) >= POLL {
            // A blocking read would have timed out here.
            self.quiet_checked = now;
            if let Some(s) = tcp(m) {
                apply_low_water(s, self.low_water.on_timeout(now), &self.low_water, &m.counters);
            }
        }
        let draining = m.counters.draining.load(Ordering::Relaxed);
        if draining {
            if let Some(s) = tcp(m) {
                apply_low_water(s, self.low_water.retire(), &self.low_water, &m.counters);
            }
        } else if silent > spec.rcv_timeout {
            return Some(Err(EngineError::RecvTimeout));
        }
        None
    }
}

/// Applies a low-water switch (no read timeout to adjust: the worker's wait does that).
fn apply_low_water(sock: &TcpStream, switch: Option<Switch>, low_water: &LowWater, counters: &Counters) {
    let bytes = match switch {
        None => return,
        Some(Switch::On(bytes)) => bytes,
        Some(Switch::Off) => 1,
    };
    if wireperf_sys::sockopt::set_recv_lowat(sock, bytes).is_ok() && low_water.is_on() {
        counters.io.note_low_water(wireperf_sys::sockopt::recv_lowat(sock).unwrap_or(bytes));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::SendMode;
    use std::io::{Read, Write};

    use crate::stream::zerocopy::tests::{pair, spec};

    fn member(sock: TcpStream, budget: Option<Arc<Budget>>) -> Member {
        Member {
            sock: Arc::new(DataSock::Tcp(sock)),
            counters: Arc::new(Counters::default()),
            stop: Arc::new(AtomicBool::new(false)),
            budget,
        }
    }

    fn join(t: Vec<JoinHandle<()>>) {
        for t in t {
            t.join().unwrap();
        }
    }

    fn handle(m: &Member) -> (Arc<Counters>, Arc<AtomicBool>) {
        (Arc::clone(&m.counters), Arc::clone(&m.stop))
    }

    fn count_until_eof(mut s: TcpStream) -> std::thread::JoinHandle<u64> {
        std::thread::spawn(move || {
            let mut buf = vec![0u8; 65536];
            let mut n = 0u64;
            loop {
                match s.read(&mut buf) {
                    Ok(0) | Err(_) => return n,
                    Ok(k) => n += k as u64,
                }
            }
        })
    }

    /// Five senders on one worker share a block budget: exactly the budget goes out in all,
    /// and each stream's counter is what its peer read.
    fn budgeted_senders(mode: SendMode) {
        let blocks = 37;
        let budget = Arc::new(Budget::new(0, blocks, true));
        let mut members = Vec::new();
        let mut readers = Vec::new();
        let mut socks = Vec::new();
        for _ in 0..5 {
            let (tx, rx) = pair();
            socks.push(tx.try_clone().unwrap());
            members.push(member(tx, Some(Arc::clone(&budget))));
            readers.push(count_until_eof(rx));
        }
        let handles: Vec<_> = members.iter().map(handle).collect();
        let (note, wakes) = crossbeam_channel::unbounded();
        let (t, _link) = spawn("test-tx", true, vec![members], &spec(mode), note).unwrap();
        join(t);
        for s in &socks {
            s.shutdown(std::net::Shutdown::Write).unwrap();
        }
        let read: Vec<u64> = readers.into_iter().map(|r| r.join().unwrap()).collect();
        let counted: Vec<u64> = handles.iter().map(|(c, _)| c.bytes()).collect();
        assert_eq!(read, counted, "{mode:?}: every stream's count is what its peer read");
        assert_eq!(counted.iter().sum::<u64>(), blocks * 128 * 1024, "{mode:?}");
        assert!(handles.iter().all(|(c, _)| c.finished.load(Ordering::Acquire)));
        for (c, _) in &handles {
            assert!(c.cpu_recorded.load(Ordering::Relaxed), "{mode:?}: a share of the worker's CPU");
            assert_eq!(c.cpu_shared_by.load(Ordering::Relaxed), 5, "{mode:?}: shared by all five");
        }
        assert_eq!(wakes.try_iter().filter(|w| matches!(w, Wake::BudgetReached)).count(), 5);
        let io = handles[0].0.io.snapshot().unwrap();
        assert_eq!((io.requested.as_str(), io.fallback), (mode.name(), None), "{mode:?}");
    }

    #[test]
    fn shared_senders_spend_a_block_budget_exactly() {
        budgeted_senders(SendMode::Write);
        budgeted_senders(SendMode::Sendfile);
    }

    #[test]
    fn shared_receivers_count_every_byte_of_every_stream() {
        let sizes = [0usize, 1, 128 * 1024 - 1, 3 * 1024 * 1024 + 17, 10_000_000];
        let mut members = Vec::new();
        let mut writers = Vec::new();
        for &n in &sizes {
            let (mut tx, rx) = pair();
            members.push(member(rx, None));
            writers.push(std::thread::spawn(move || {
                tx.write_all(&vec![5u8; n]).unwrap();
            }));
        }
        let handles: Vec<_> = members.iter().map(handle).collect();
        let (note, wakes) = crossbeam_channel::unbounded();
        let (t, link) = spawn("test-rx", false, vec![members], &spec(SendMode::Write), note).unwrap();
        for w in writers {
            w.join().unwrap();
        }
        join(t);
        assert!(link.exited());
        let counted: Vec<u64> = handles.iter().map(|(c, _)| c.bytes()).collect();
        assert_eq!(counted, sizes.map(|n| n as u64));
        assert!(wakes.try_iter().next().is_none(), "EOF is a clean end");
        assert_eq!(handles[0].0.io.snapshot().unwrap().used, "read");
    }

    #[test]
    fn a_stop_ends_shared_streams_promptly_and_others_run_on() {
        let mut members = Vec::new();
        let mut readers = Vec::new();
        for _ in 0..3 {
            let (tx, rx) = pair();
            members.push(member(tx, None));
            readers.push(count_until_eof(rx));
        }
        let handles: Vec<_> = members.iter().map(handle).collect();
        let socks: Vec<_> = members.iter().map(|m| Arc::clone(&m.sock)).collect();
        let (note, _wakes) = crossbeam_channel::unbounded();
        let (t, link) = spawn("test-stop", true, vec![members], &spec(SendMode::Write), note).unwrap();
        std::thread::sleep(Duration::from_millis(100));
        stop_one_then_all(&handles, &link, t, &socks, readers, Duration::from_secs(5));
    }

    /// Stops stream 0 and waits (up to `limit`) until it has ended while the others send on,
    /// then stops them all: every stream's count is what its peer read.
    fn stop_one_then_all(
        handles: &[(Arc<Counters>, Arc<AtomicBool>)],
        link: &WorkerLink,
        t: Vec<JoinHandle<()>>,
        socks: &[Arc<DataSock>],
        readers: Vec<std::thread::JoinHandle<u64>>,
        limit: Duration,
    ) {
        handles[0].1.store(true, Ordering::Relaxed);
        link.wake();
        let asked = Instant::now();
        while !handles[0].0.finished.load(Ordering::Acquire) {
            assert!(asked.elapsed() < limit, "stream 0 did not stop");
            std::thread::sleep(Duration::from_millis(1));
        }
        // The others must move on. Within `limit`, not a fixed 50 ms: with the short unsent
        // queue of a loopback sender (`notsent`) a stream only moves while its reader thread
        // runs, and under a full suite's load that reader was once off its CPU for 50 ms.
        let before = handles[1].0.bytes();
        let since = Instant::now();
        while handles[1].0.bytes() == before {
            assert!(since.elapsed() < limit, "the other streams keep sending");
            std::thread::sleep(Duration::from_millis(1));
        }
        for (_, stop) in handles {
            stop.store(true, Ordering::Relaxed);
        }
        link.wake();
        join(t);
        for s in socks {
            s.shutdown(std::net::Shutdown::Write);
        }
        let read: Vec<u64> = readers.into_iter().map(|r| r.join().unwrap()).collect();
        let counted: Vec<u64> = handles.iter().map(|(c, _)| c.bytes()).collect();
        assert_eq!(read, counted, "a stopped stream's count is what went out");
    }

    #[test]
    fn a_silent_shared_receiver_times_out() {
        let (_tx, rx) = pair();
        let m = member(rx, None);
        let (c, _) = handle(&m);
        let (note, wakes) = crossbeam_channel::unbounded();
        let sp = StreamSpec { rcv_timeout: Duration::from_millis(120), ..spec(SendMode::Write) };
        let (t, _link) = spawn("test-silent", false, vec![vec![m]], &sp, note).unwrap();
        join(t);
        assert!(c.finished.load(Ordering::Acquire));
        assert!(matches!(wakes.try_recv(), Ok(Wake::StreamFailed(EngineError::RecvTimeout))));
    }

    /// A pair whose buffers are small, so a transfer lasts as long as its reader takes.
    fn small_pair() -> (TcpStream, TcpStream) {
        let (tx, rx) = pair();
        socket2::SockRef::from(&tx).set_send_buffer_size(32 * 1024).unwrap();
        socket2::SockRef::from(&rx).set_recv_buffer_size(32 * 1024).unwrap();
        (tx, rx)
    }

    /// Reads to EOF at about `per_ms` bytes per millisecond.
    fn slow_reader(mut s: TcpStream, per_ms: usize) -> std::thread::JoinHandle<u64> {
        std::thread::spawn(move || {
            let mut buf = vec![0u8; per_ms];
            let mut n = 0u64;
            loop {
                match s.read(&mut buf) {
                    Ok(0) | Err(_) => return n,
                    Ok(k) => n += k as u64,
                }
                std::thread::sleep(Duration::from_millis(1));
            }
        })
    }

    /// Waits until each of `moved` has changed workers once, and says whether all of them
    /// were still running then.
    fn await_moves(handles: &[(Arc<Counters>, Arc<AtomicBool>)], moved: &[usize]) -> bool {
        let asked = Instant::now();
        while moved.iter().any(|&i| handles[i].0.worker_moves.load(Ordering::Relaxed) == 0) {
            assert!(asked.elapsed() < Duration::from_secs(5), "the ordered moves were not made");
            std::thread::sleep(Duration::from_millis(1));
        }
        moved.iter().all(|&i| !handles[i].0.finished.load(Ordering::Acquire))
    }

    /// Three senders on two workers (0 and 1 on the first, 2 on the second) share a budget
    /// (`-n` bytes, or `-k` blocks); stream 0 moves to the second worker and stream 2 to the
    /// first while their peers still read. Every byte is counted once, on the stream it went
    /// out on, and the budget is spent exactly.
    fn moved_senders(mode: SendMode, by_bytes: bool) {
        let blocks = 60;
        let budget =
            Arc::new(if by_bytes { Budget::new(blocks * 128 * 1024, 0, true) } else { Budget::new(0, blocks, true) });
        let (mut members, mut readers, mut socks) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..3 {
            let (tx, rx) = small_pair();
            socks.push(tx.try_clone().unwrap());
            members.push(member(tx, Some(Arc::clone(&budget))));
            readers.push(slow_reader(rx, 8 * 1024));
        }
        let handles: Vec<_> = members.iter().map(handle).collect();
        let last = members.pop().unwrap();
        let (note, wakes) = crossbeam_channel::unbounded();
        let (t, link) = spawn("test-move-tx", true, vec![members, vec![last]], &spec(mode), note).unwrap();
        assert_eq!(t.len(), 2);
        link.order_move(0, 0, 1);
        link.order_move(1, 2, 0);
        assert!(await_moves(&handles, &[0, 2]), "{mode:?}: the moves happened mid-transfer");
        join(t);
        assert!(link.exited());
        for s in &socks {
            s.shutdown(std::net::Shutdown::Write).unwrap();
        }
        let read: Vec<u64> = readers.into_iter().map(|r| r.join().unwrap()).collect();
        let counted: Vec<u64> = handles.iter().map(|(c, _)| c.bytes()).collect();
        assert_eq!(read, counted, "{mode:?}: every stream's count is what its peer read");
        assert_eq!(counted.iter().sum::<u64>(), blocks * 128 * 1024, "{mode:?}: the budget, exactly");
        assert!(counted.iter().all(|c| c % (128 * 1024) == 0), "{mode:?}: whole blocks {counted:?}");
        let moves: Vec<u32> = handles.iter().map(|(c, _)| c.worker_moves.load(Ordering::Relaxed)).collect();
        assert_eq!(moves, [1, 0, 1], "{mode:?}");
        let dealt: Vec<u64> = handles.iter().map(|(c, _)| c.cpu_shared_by.load(Ordering::Relaxed)).collect();
        assert_eq!(dealt, [2, 2, 1], "{mode:?}: shared_by is the worker each was dealt to");
        assert!(
            handles.iter().all(|(c, _)| c.finished.load(Ordering::Acquire) && c.cpu_recorded.load(Ordering::Relaxed))
        );
        assert_eq!(wakes.try_iter().filter(|w| matches!(w, Wake::BudgetReached)).count(), 3, "{mode:?}");
        for (c, _) in &handles {
            let io = c.io.snapshot().unwrap();
            assert_eq!((io.requested.as_str(), io.fallback), (mode.name(), None), "{mode:?}");
        }
    }

    #[test]
    fn moved_senders_spend_a_budget_exactly() {
        moved_senders(SendMode::Write, true);
        moved_senders(SendMode::Sendfile, false);
    }

    #[test]
    fn moved_receivers_count_every_byte_of_every_stream() {
        let sizes = [3 * 1024 * 1024 + 17, 2 * 1024 * 1024 + 1, 4 * 1024 * 1024 - 5];
        let (mut members, mut writers) = (Vec::new(), Vec::new());
        for &n in &sizes {
            let (mut tx, rx) = small_pair();
            members.push(member(rx, None));
            writers.push(std::thread::spawn(move || {
                // About 16 MB/s, so each transfer outlasts the first report (100 ms).
                let chunk = vec![9u8; 16 * 1024];
                let mut left = n;
                while left > 0 {
                    let k = left.min(chunk.len());
                    tx.write_all(&chunk[..k]).unwrap();
                    left -= k;
                    std::thread::sleep(Duration::from_millis(1));
                }
            }));
        }
        let handles: Vec<_> = members.iter().map(handle).collect();
        let last = members.pop().unwrap();
        let (note, wakes) = crossbeam_channel::unbounded();
        let (t, link) = spawn("test-move-rx", false, vec![members, vec![last]], &spec(SendMode::Write), note).unwrap();
        link.order_move(0, 0, 1);
        link.order_move(1, 2, 0);
        assert!(await_moves(&handles, &[0, 2]), "the moves happened mid-transfer");
        for w in writers {
            w.join().unwrap();
        }
        join(t);
        let counted: Vec<u64> = handles.iter().map(|(c, _)| c.bytes()).collect();
        assert_eq!(counted, sizes.map(|n| n as u64), "every byte, once, on its own stream");
        assert!(wakes.try_iter().next().is_none(), "EOF is a clean end");
        assert_eq!(handles[0].0.io.snapshot().unwrap().used, "read");
    }

    #[test]
    fn a_stop_reaches_a_moved_stream_promptly() {
        let (mut members, mut readers) = (Vec::new(), Vec::new());
        for _ in 0..3 {
            let (tx, rx) = small_pair();
            members.push(member(tx, None));
            readers.push(count_until_eof(rx));
        }
        let handles: Vec<_> = members.iter().map(handle).collect();
        let socks: Vec<_> = members.iter().map(|m| Arc::clone(&m.sock)).collect();
        let last = members.pop().unwrap();
        let (note, _wakes) = crossbeam_channel::unbounded();
        let (t, link) = spawn("test-move-stop", true, vec![members, vec![last]], &spec(SendMode::Write), note).unwrap();
        link.order_move(0, 0, 1);
        assert!(await_moves(&handles, &[0]));
        // Stopped at once, possibly while still on its way to the other worker.
        stop_one_then_all(&handles, &link, t, &socks, readers, Duration::from_secs(1));
    }

    #[test]
    fn a_moved_silent_receiver_still_times_out() {
        // Stream 0 says nothing; it moves to the second worker at the first report (100 ms)
        // and must still end by --rcv-timeout there, counted from its own last data.
        let (quiet_tx, quiet_rx) = pair();
        let (mut talk_tx, talk_rx) = pair();
        let (quiet, talk) = (member(quiet_rx, None), member(talk_rx, None));
        let handles = [handle(&quiet), handle(&talk)];
        let (note, wakes) = crossbeam_channel::unbounded();
        let sp = StreamSpec { rcv_timeout: Duration::from_millis(600), ..spec(SendMode::Write) };
        let started = Instant::now();
        let (t, link) = spawn("test-move-silent", false, vec![vec![quiet], vec![talk]], &sp, note).unwrap();
        link.order_move(0, 0, 1);
        talk_tx.write_all(&[1u8; 1000]).unwrap();
        drop(talk_tx);
        let asked = Instant::now();
        while !handles[0].0.finished.load(Ordering::Acquire) {
            assert!(asked.elapsed() < Duration::from_secs(3), "the moved stream never timed out");
            std::thread::sleep(Duration::from_millis(1));
        }
        assert!(started.elapsed() >= Duration::from_millis(600), "not before its timeout");
        assert_eq!(handles[0].0.worker_moves.load(Ordering::Relaxed), 1);
        join(t);
        drop(quiet_tx);
        assert!(matches!(wakes.try_recv(), Ok(Wake::StreamFailed(EngineError::RecvTimeout))));
        assert_eq!(handles[1].0.bytes(), 1000);
    }
}
