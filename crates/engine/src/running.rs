//! The running phase shared by client and server: stream threads and shared workers, the
//! interval clock, the omit period and the final sample.

use crate::ctrl::Wake;
use crate::error::EngineError;
use crate::event::{Event, Observer};
use crate::sampler::{LocalStream, StreamSampler, build_interval};
use crate::stream::schedule::{self, Candidate, Placement};
use crate::stream::{Budget, Stream, StreamSpec};
use crossbeam_channel::Sender;
use std::sync::Arc;
use std::time::{Duration, Instant};
use wireperf_protocol::schema::Interval;

/// How long a draining UDP receiver waits after the last datagram before calling the rest lost.
pub(crate) const UDP_QUIET: Duration = Duration::from_millis(150);

/// Streams plus their sampling state for one test.
pub(crate) struct TestRun {
    pub streams: Vec<Stream>,
    samplers: Vec<StreamSampler>,
    interval: Option<Duration>,
    next_tick: Option<Instant>,
    omit_end: Option<Instant>,
    bidir_split: Option<usize>,
    pub send_budget: Option<Arc<Budget>>,
    pub recv_budget: Option<Arc<Budget>>,
    /// Every interval reported so far.
    pub intervals: Vec<Interval>,
    /// The shared workers, joined after the streams (declared after them, so dropped after).
    workers: Workers,
}

/// The threads of the shared workers; joined when the run is dropped, by which time every
/// stream on them has been stopped (`Stream`'s drop).
#[derive(Default)]
struct Workers(Vec<std::thread::JoinHandle<()>>);

impl Drop for Workers {
    fn drop(&mut self) {
        for t in self.0.drain(..) {
            let _ = t.join();
        }
    }
}

impl TestRun {
    /// Wraps connected streams; nothing runs yet.
    pub(crate) fn new(streams: Vec<Stream>, interval: Option<Duration>, bidir_split: Option<usize>) -> Self {
        Self {
            streams,
            samplers: Vec::new(),
            interval,
            next_tick: None,
            omit_end: None,
            bidir_split,
            send_budget: None,
            recv_budget: None,
            intervals: Vec::new(),
            workers: Workers::default(),
        }
    }

    /// Installs `-n`/`-k` budgets for both directions (the client, which ends the test on them).
    pub(crate) fn with_budgets(self, bytes: u64, blocks: u64, omitting: bool) -> Self {
        let mut run = self.with_send_budget(bytes, blocks, omitting);
        if bytes > 0 || blocks > 0 {
            run.recv_budget = Some(Arc::new(Budget::new(bytes, blocks, !omitting)));
        }
        run
    }

    /// Installs the `-n`/`-k` budget of the streams this side sends on only.
    pub(crate) fn with_send_budget(mut self, bytes: u64, blocks: u64, omitting: bool) -> Self {
        if bytes > 0 || blocks > 0 {
            self.send_budget = Some(Arc::new(Budget::new(bytes, blocks, !omitting)));
        }
        self
    }

    /// Starts the clocks, the stream threads and the shared workers at `now` (placed by
    /// `stream::schedule`).
    pub(crate) fn start(
        &mut self,
        now: Instant,
        omit: Duration,
        spec: &StreamSpec,
        notify: &Sender<Wake>,
    ) -> Result<(), EngineError> {
        self.samplers = self.streams.iter().map(|s| StreamSampler::new(now, s)).collect();
        self.next_tick = self.interval.map(|i| now + i);
        self.omit_end = (!omit.is_zero()).then(|| now + omit);
        let candidates: Vec<Candidate> = self
            .streams
            .iter()
            .map(|s| if s.shareable(spec) { Candidate::Shareable { sender: s.sender } } else { Candidate::Own })
            .collect();
        let plan = match schedule::workers_per_direction(spec.workers) {
            Some(cap) => schedule::place(&candidates, cap),
            None => schedule::place(&[], 1),
        };
        // The workers of a direction start together: their streams may move between them.
        for sender in [true, false] {
            let crew: Vec<_> = plan.workers.iter().filter(|w| w.sender == sender).collect();
            if crew.is_empty() {
                continue;
            }
            let budget = if sender { &self.send_budget } else { &self.recv_budget };
            let members = crew
                .iter()
                .map(|w| {
                    w.streams.iter().filter_map(|&i| self.streams.get(i)).map(|s| s.member(budget.clone())).collect()
                })
                .collect();
            let name = format!("wireperf-{}-w", if sender { "tx" } else { "rx" });
            let (handles, link) = crate::stream::spawn_workers(&name, sender, members, spec, notify.clone())?;
            self.workers.0.extend(handles);
            for &i in crew.iter().flat_map(|w| &w.streams) {
                if let Some(s) = self.streams.get_mut(i) {
                    s.attach_worker(link.clone());
                }
            }
        }
        for (i, s) in self.streams.iter_mut().enumerate() {
            if plan.placements.get(i).is_none_or(|p| *p == Placement::Own) {
                let budget = if s.sender { self.send_budget.clone() } else { self.recv_budget.clone() };
                s.start(spec, budget, notify.clone())?;
            }
        }
        Ok(())
    }

    /// True while in the `-O` period.
    pub(crate) fn omitting(&self) -> bool {
        self.omit_end.is_some()
    }

    /// The next moment the test thread must wake for the clock.
    pub(crate) fn next_deadline(&self) -> Option<Instant> {
        match (self.next_tick, self.omit_end) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Handles interval ticks and the end of the omit period that are due at `now`.
    pub(crate) fn on_clock(&mut self, now: Instant, obs: &mut dyn Observer) {
        if let Some(tick) = self.next_tick.filter(|&t| now >= t) {
            let omitted = self.omitting();
            self.emit_interval(now, omitted, obs);
            // Schedule from the planned tick, not from when we woke, so late wake-ups on a
            // busy host do not accumulate into drift.
            self.next_tick = self.interval.map(|i| (tick + i).max(now));
        }
        if self.omit_end.is_some_and(|t| now >= t) {
            self.omit_end = None;
            for (s, smp) in self.streams.iter().zip(self.samplers.iter_mut()) {
                smp.reset_for_omit(now, s);
            }
            for b in [&self.send_budget, &self.recv_budget].into_iter().flatten() {
                b.arm();
            }
            self.next_tick = self.interval.map(|i| now + i);
            obs.event(Event::OmitEnded);
        }
    }

    fn emit_interval(&mut self, now: Instant, omitted: bool, obs: &mut dyn Observer) {
        let samples =
            self.streams.iter().zip(self.samplers.iter_mut()).map(|(s, smp)| smp.sample(now, s, omitted)).collect();
        let interval = build_interval(samples, self.bidir_split, omitted);
        obs.event(Event::Interval(&interval));
        self.intervals.push(interval);
    }

    /// Stops and joins the sending threads; their counters are final afterwards.
    ///
    /// Every sender is told first and joined after: joined one by one, the later ones kept
    /// sending while the earlier were waited for, which with `-P 128` on a busy machine
    /// stretched a 1 s test by many seconds.
    pub(crate) fn stop_senders(&mut self) {
        for s in self.streams.iter().filter(|s| s.sender) {
            s.request_stop();
        }
        for s in self.streams.iter_mut().filter(|s| s.sender) {
            s.stop(false);
        }
    }

    /// Waits until the peer acknowledged every byte the TCP senders wrote, or `deadline`.
    ///
    /// A `-n`/`-k`/`-F` test ends on the sender's last write, with data still in flight, and
    /// stock 3.16–3.18 servers close their data sockets the moment TEST_END arrives: a
    /// wireperf client that sent TEST_END at once lost up to a few hundred kB of a `-F` file
    /// (what was still in flight or unread) to a 3.18 server, which iperf3's own client, slower
    /// to end, rarely does. The sender's figures are taken before this wait.
    pub(crate) fn wait_delivered(&self, deadline: Instant) {
        let in_flight = |s: &Stream| {
            s.sender
                && !s.is_udp()
                && wireperf_sys::tcp_info(s.socket_ref()).is_ok_and(|i| i.unacked > 0 || i.notsent_bytes > 0)
        };
        while self.streams.iter().any(in_flight) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// Waits until every receiving stream has what the sender sent, or ended, or `deadline`.
    ///
    /// `target(s)` is the sender's total: bytes for TCP, datagrams for UDP. A UDP stream has
    /// no end-of-stream, and lost datagrams never arrive: it is also done once nothing arrived
    /// for [`UDP_QUIET`] and nothing waits in its socket (everything was sent before TEST_END,
    /// so what is still missing then is lost).
    pub(crate) fn drain_receivers(&mut self, deadline: Instant, target: &dyn Fn(&Stream) -> Option<u64>) {
        for s in self.streams.iter().filter(|s| !s.sender) {
            s.set_draining();
        }
        let started = wireperf_sys::clock::monotonic();
        loop {
            let now = wireperf_sys::clock::monotonic();
            let done = self.streams.iter().filter(|s| !s.sender).all(|s| {
                if s.is_finished() {
                    return true;
                }
                if s.is_udp() {
                    let u = &s.counters.udp;
                    let unique = u.unique.load(std::sync::atomic::Ordering::Relaxed);
                    let last = Duration::from_micros(u.last_rx_us.load(std::sync::atomic::Ordering::Relaxed));
                    let quiet_since = last.max(started);
                    // Quiet means nothing arrived *and* nothing waits unread: on a loaded
                    // machine the receiving thread can be off the CPU for longer than
                    // UDP_QUIET while datagrams sit in its socket.
                    let quiet = now.saturating_sub(quiet_since) >= UDP_QUIET && !s.has_queued_input();
                    return target(s).is_some_and(|t| unique >= t) || quiet;
                }
                target(s).is_some_and(|t| s.counters.bytes() >= t)
            });
            if done || Instant::now() >= deadline {
                break;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        for s in self.streams.iter_mut() {
            s.stop(true);
        }
    }

    /// The final sample at `t_end` (TEST_END): the last partial interval, unless it is a
    /// sliver that moved nothing, and the end time of every stream.
    pub(crate) fn finish(&mut self, t_end: Instant, obs: &mut dyn Observer) {
        if self.samplers.is_empty() {
            return;
        }
        let omitted = self.omitting();
        if let Some(i) = self.interval {
            let samples: Vec<_> = self
                .streams
                .iter()
                .zip(self.samplers.iter_mut())
                .map(|(s, smp)| {
                    let mut copy = smp.clone();
                    copy.sample(t_end, s, omitted)
                })
                .collect();
            let short = samples.first().is_some_and(|x| x.seconds < i.as_secs_f64() * 0.1);
            let empty = samples.iter().all(|x| x.bytes == 0);
            if !(short && empty) && samples.first().is_some_and(|x| x.seconds > 0.0) {
                self.emit_interval(t_end, omitted, obs);
            }
        } else {
            // No interval reports: still sample once so TCP figures reach the totals.
            for (s, smp) in self.streams.iter().zip(self.samplers.iter_mut()) {
                smp.sample(t_end, s, omitted);
            }
        }
        for smp in &mut self.samplers {
            smp.finish(t_end);
        }
    }

    /// Identity and totals of every stream (after `finish` and after the streams stopped).
    pub(crate) fn locals(&self) -> Vec<LocalStream> {
        self.streams
            .iter()
            .zip(self.samplers.iter())
            .map(|(s, smp)| LocalStream {
                socket: s.socket,
                wire_id: s.wire_id,
                sender: s.sender,
                totals: smp.totals(s),
            })
            .collect()
    }

    /// Congestion control in use on the first stream.
    pub(crate) fn congestion(&self) -> Option<String> {
        self.streams
            .first()
            .filter(|s| !s.is_udp())
            .and_then(|s| wireperf_sys::sockopt::congestion(s.socket_ref()).ok())
    }

    /// Sum of bytes moved so far (for progress and rate limits).
    pub(crate) fn total_bytes(&self) -> u64 {
        self.streams.iter().map(|s| s.counters.bytes()).sum()
    }
}
