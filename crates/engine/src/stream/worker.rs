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
//! stream's CPU time is not known on its own here: as a stream ends, the worker gives it the
//! share of its own thread's CPU time that the stream's bytes are of all its streams' bytes
//! (`wireperf_cpu.shared_by` says so), which is what the kernel spends per byte on them.

use super::low_water::{LowWater, Switch};
use super::tx_path::TxPath;
use super::{Budget, Counters, DataSock, LoopEnd, StreamSpec};
use crate::ctrl::Wake;
use crate::error::EngineError;
use crossbeam_channel::Sender;
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
/// The token of the waker that tells a worker to look at its stop flags now.
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

/// A started worker, as the streams on it see it.
#[derive(Clone)]
pub(crate) struct WorkerLink {
    waker: Arc<Waker>,
    exited: Arc<AtomicBool>,
}

impl WorkerLink {
    /// Makes the worker look at its streams' stop flags now instead of at its next timeout.
    pub(crate) fn wake(&self) {
        // A failed wake only delays the stop until the worker's next timeout (POLL).
        let _ = self.waker.wake();
    }

    /// True once the worker thread is gone (all its streams ended, or it failed).
    pub(crate) fn exited(&self) -> bool {
        self.exited.load(Ordering::Acquire)
    }
}

/// Sets the flag when the worker thread leaves, however it leaves.
struct ExitFlag(Arc<AtomicBool>);

impl Drop for ExitFlag {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Release);
    }
}

/// Starts a worker for `members`, all sending (`sender`) or all receiving.
pub(crate) fn spawn(
    name: String,
    sender: bool,
    members: Vec<Member>,
    spec: &StreamSpec,
    notify: Sender<Wake>,
) -> Result<(JoinHandle<()>, WorkerLink), EngineError> {
    let fail = |op| move |err| EngineError::Stream { op, err };
    let poll = Poll::new().map_err(fail("watch"))?;
    let waker = Arc::new(Waker::new(poll.registry(), WAKE).map_err(fail("watch"))?);
    let interest = if sender { Interest::WRITABLE } else { Interest::READABLE };
    let mut socks = Vec::with_capacity(members.len());
    for (i, m) in members.iter().enumerate() {
        let DataSock::Tcp(s) = &*m.sock else {
            let err = std::io::Error::new(ErrorKind::InvalidInput, "a shared worker moves TCP streams only");
            return Err(EngineError::Stream { op: "watch", err });
        };
        s.set_nonblocking(true).map_err(fail(if sender { "write to" } else { "read from" }))?;
        poll.registry().register(&mut SourceFd(&s.as_raw_fd()), Token(i), interest).map_err(fail("watch"))?;
        socks.push(Arc::clone(&m.sock));
    }
    let exited = Arc::new(AtomicBool::new(false));
    let link = WorkerLink { waker, exited: Arc::clone(&exited) };
    let spec = spec.clone();
    let handle = std::thread::Builder::new()
        .name(name)
        .spawn(move || {
            let _flag = ExitFlag(exited);
            if let Some(cpu) = spec.affinity {
                let _ = wireperf_sys::set_thread_affinity(cpu);
            }
            let mut w = Worker { poll, events: Events::with_capacity(members.len().clamp(16, 256)), notify };
            if sender {
                w.send(members, &spec);
            } else {
                w.receive(members, &spec);
            }
        })
        .map_err(fail("start a thread for"))?;
    Ok((handle, link))
}

struct Worker {
    poll: Poll,
    events: Events,
    notify: Sender<Wake>,
}

/// The socket of a member (checked to be TCP when the worker started).
fn tcp(m: &Member) -> Option<&TcpStream> {
    match &*m.sock {
        DataSock::Tcp(s) => Some(s),
        DataSock::Udp(_) => None,
    }
}

impl Worker {
    /// Waits for readiness (or `timeout`) and marks the streams that became ready.
    fn wait(&mut self, timeout: Duration, ready: &mut [bool]) {
        if self.poll.poll(&mut self.events, Some(timeout)).is_err() {
            // EINTR or a broken epoll: try every stream once; their calls tell what is wrong.
            ready.iter_mut().for_each(|r| *r = true);
            return;
        }
        for ev in self.events.iter() {
            if let Some(r) = ready.get_mut(ev.token().0) {
                *r = true;
            }
        }
    }

    /// Rounds of one turn per live stream, until a round moves nothing; a turn that ends its
    /// stream ends it here.
    fn rounds(&self, members: &[Member], done: &mut [bool], live: &mut usize, mut turn: impl FnMut(usize) -> Step) {
        loop {
            let mut moved = false;
            for (i, finished) in done.iter_mut().enumerate().take(members.len()) {
                if *finished {
                    continue;
                }
                match turn(i) {
                    Step::Moved => moved = true,
                    Step::Idle => {}
                    Step::End(res) => {
                        *finished = true;
                        *live -= 1;
                        self.end(members, i, res);
                    }
                }
            }
            if !moved || *live == 0 {
                return;
            }
        }
    }

    /// Stream `i` ended: record its share of the worker's CPU time, tell the test thread what a
    /// stream thread would, and mark it finished.
    fn end(&self, members: &[Member], i: usize, res: Result<LoopEnd, EngineError>) {
        let Some(m) = members.get(i) else { return };
        let all: u64 = members.iter().map(|x| x.counters.bytes()).sum();
        let share = if all > 0 { m.counters.bytes() as f64 / all as f64 } else { 1.0 / members.len() as f64 };
        m.counters.record_shared_cpu(share, members.len());
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
    }

    /// Ends every member: the worker's buffer could not be allocated.
    fn fail_to_allocate(&self, members: &[Member], err: &std::io::Error) {
        for i in 0..members.len() {
            self.end(members, i, Err(EngineError::Stream { op: "allocate a buffer for", err: clone_err(err) }));
        }
    }

    fn send(&mut self, members: Vec<Member>, spec: &StreamSpec) {
        let block = spec.len.max(1);
        // Paced streams move one block per call, the pacing step (as `BlockSender`).
        let per_call = if spec.rate > 0 { 1 } else { (spec.call_bytes.min(WORKER_CALL) / block).max(1) };
        let payload = super::buffer::payload(block, spec.repeating_payload);
        // write() keeps one unit and repeats it per call; sendfile's memory file needs it all.
        let copies = super::buffer::copies_kept(block, per_call, spec.send_mode == crate::config::SendMode::Sendfile);
        let buf = match super::buffer::repeated(&payload, copies) {
            Ok(b) => b,
            Err(err) => return self.fail_to_allocate(&members, &err),
        };
        let mut tx = TxPath::new(&buf, spec.send_mode);
        let mut st: Vec<TxState> = members.iter().map(|m| TxState::new(m, &mut tx)).collect();
        let mut ready = vec![true; members.len()];
        let mut done = vec![false; members.len()];
        let start = Instant::now();
        let mut live = members.len();
        while live > 0 {
            let mut next_due: Option<Instant> = None;
            self.rounds(&members, &mut done, &mut live, |i| {
                st[i].step(&members[i], &tx, &buf, &mut ready[i], block, per_call, spec.rate, start, &mut next_due)
            });
            if live == 0 {
                break;
            }
            let timeout = next_due.map_or(POLL, |d| d.saturating_duration_since(Instant::now()).min(POLL));
            self.wait(timeout, &mut ready);
        }
    }

    fn receive(&mut self, members: Vec<Member>, spec: &StreamSpec) {
        let block = spec.len.clamp(1, super::tcp::MAX_CALL);
        let mut buf = match super::buffer::zeroed(super::buffer::worker_receive_len(spec.call_bytes, block)) {
            Ok(b) => b,
            Err(err) => return self.fail_to_allocate(&members, &err),
        };
        let now = Instant::now();
        let mut st: Vec<RxState> = members
            .iter()
            .map(|m| {
                m.counters.io.set_receive(spec.skip_rx_copy);
                RxState {
                    total: 0,
                    last_data: now,
                    low_water: LowWater::new(block, now),
                    quiet_checked: now,
                    probing: false,
                }
            })
            .collect();
        let mut ready = vec![true; members.len()];
        let mut done = vec![false; members.len()];
        let mut live = members.len();
        while live > 0 {
            let notify = self.notify.clone();
            self.rounds(&members, &mut done, &mut live, |i| {
                st[i].step(&members[i], &mut buf, &mut ready[i], spec, block, &notify)
            });
            if live == 0 {
                break;
            }
            // Timers: a stream with its mark set is read anyway after LOW_WATER_POLL (the
            // kernel does not wake a reader for a partial block); a silent one is checked
            // against --rcv-timeout.
            let now = Instant::now();
            let mut low_water_on = false;
            for (i, m) in members.iter().enumerate() {
                if done[i] {
                    continue;
                }
                if let Some(res) = st[i].on_timer(m, now, spec, &mut ready[i]) {
                    done[i] = true;
                    live -= 1;
                    self.end(&members, i, res);
                    continue;
                }
                low_water_on |= st[i].low_water.is_on();
            }
            if live == 0 {
                break;
            }
            self.wait(if low_water_on { LOW_WATER_POLL } else { POLL }, &mut ready);
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
    /// This stream's own path choice (a refused sendfile falls back for this stream only).
    pub(super) path: super::tx_path::Chosen,
}

impl TxState {
    fn new(m: &Member, tx: &mut TxPath) -> Self {
        TxState { total: 0, off: 0, end: 0, path: tx.start(&m.counters.io) }
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
        start: Instant,
        next_due: &mut Option<Instant>,
    ) -> Step {
        let stopping = m.stop.load(Ordering::Relaxed);
        if self.off >= self.end {
            if stopping {
                return Step::End(Ok(LoopEnd::Stopped));
            }
            if rate > 0 {
                let due = start + Duration::from_secs_f64(self.total as f64 * 8.0 / rate as f64);
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
        let (t, _link) = spawn("test-tx".into(), true, members, &spec(mode), note).unwrap();
        t.join().unwrap();
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
        let (t, link) = spawn("test-rx".into(), false, members, &spec(SendMode::Write), note).unwrap();
        for w in writers {
            w.join().unwrap();
        }
        t.join().unwrap();
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
        let (t, link) = spawn("test-stop".into(), true, members, &spec(SendMode::Write), note).unwrap();
        std::thread::sleep(Duration::from_millis(100));
        handles[0].1.store(true, Ordering::Relaxed);
        link.wake();
        let asked = Instant::now();
        while !handles[0].0.finished.load(Ordering::Acquire) {
            assert!(asked.elapsed() < Duration::from_secs(5), "stream 0 did not stop");
            std::thread::sleep(Duration::from_millis(1));
        }
        let before = handles[1].0.bytes();
        std::thread::sleep(Duration::from_millis(50));
        assert!(handles[1].0.bytes() > before, "the other streams keep sending");
        for (_, stop) in &handles {
            stop.store(true, Ordering::Relaxed);
        }
        link.wake();
        t.join().unwrap();
        for s in &socks {
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
        let (t, _link) = spawn("test-silent".into(), false, vec![m], &sp, note).unwrap();
        t.join().unwrap();
        assert!(c.finished.load(Ordering::Acquire));
        assert!(matches!(wakes.try_recv(), Ok(Wake::StreamFailed(EngineError::RecvTimeout))));
    }
}
