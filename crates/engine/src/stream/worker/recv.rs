//! A receiving worker: its loop (`Runs for Worker<RxState>`), one receiver's read, following
//! `tcp::recv_loop` read for read, and its timers (the low-water poll, `--rcv-timeout`).

use super::member::Member;
use super::poll::{POLL, Runs, Worker};
use super::slot::{Step, tcp};
use crate::ctrl::Wake;
use crate::error::EngineError;
use crate::stream::counters::Counters;
use crate::stream::loop_end::LoopEnd;
use crate::stream::low_water::{LowWater, Switch};
use crate::stream::recv_path::receive;
use crate::stream::spec::StreamSpec;
use crossbeam_channel::Sender;
use std::io::ErrorKind;
use std::net::TcpStream;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// While a receiver's low-water mark is set, its socket is read at least this often, so the
/// last partial block of a stream is counted at most this late (as `tcp::LOW_WATER_POLL`).
const LOW_WATER_POLL: Duration = Duration::from_millis(10);

impl Runs for Worker<RxState> {
    fn run(&mut self, members: Vec<(usize, Member)>, spec: &StreamSpec) {
        let block = spec.len.clamp(1, crate::stream::tcp::MAX_CALL);
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
        let mut buf =
            match crate::stream::buffer::zeroed(crate::stream::buffer::worker_receive_len(spec.call_bytes, block)) {
                Ok(b) => b,
                Err(err) => return self.fail_to_allocate(&err),
            };
        loop {
            self.take_arrivals();
            let notify = self.notify.clone();
            let mut turn = RxTurn { buf: &mut buf, spec, block, notify: &notify };
            let busy = self.rounds(|s| s.st.step(&s.m, &mut s.ready, &mut turn));
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

/// A receiving stream's state, as `tcp::recv_loop` keeps it.
pub(super) struct RxState {
    total: u64,
    last_data: Instant,
    low_water: LowWater,
    /// When the stream's silence was last reported to `low_water`.
    quiet_checked: Instant,
    /// The timer asked for a read below the low-water mark.
    probing: bool,
}

/// What a receiver's turn is given besides its own state: the worker's scratch buffer, the
/// test's spec, the block length (the unit of `-k` and of the low-water mark) and the test
/// thread's channel.
struct RxTurn<'a> {
    buf: &'a mut [u8],
    spec: &'a StreamSpec,
    block: usize,
    notify: &'a Sender<Wake>,
}

impl RxState {
    /// One read when the socket is ready, following `tcp::recv_loop` read for read.
    fn step(&mut self, m: &Member, ready: &mut bool, turn: &mut RxTurn<'_>) -> Step {
        let (spec, block, notify) = (turn.spec, turn.block, turn.notify);
        let buf = &mut *turn.buf;
        if m.stop.load(Ordering::Relaxed) {
            return Step::End(Ok(LoopEnd::Stopped));
        }
        if !*ready {
            return Step::Idle;
        }
        let Some(sock) = tcp(m) else { return Step::End(Ok(LoopEnd::Stopped)) };
        match receive(sock, buf, spec.skip_rx_copy) {
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
                match crate::stream::loop_end::after_read_error(
                    err,
                    false,
                    &m.stop,
                    &m.counters,
                    silent,
                    spec.rcv_timeout,
                    fail,
                ) {
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
