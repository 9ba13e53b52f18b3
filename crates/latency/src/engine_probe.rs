//! Latency under load wired to a test: idle probes once the control connection holds the
//! server, loaded probes from the start of the streams to the end of the test, and the
//! figures from them and from the load streams' own `tcpi_rtt`.
//!
//! Shared by the client's `--latency` and the suite's phases, so both compute one
//! [`LatencySummary`] the same way. The probes run on threads of their own; the engine's
//! data path is not touched. Against a wireperf server they are echo probes (a UDP echo and a
//! TCP request/response connection the server offers when the parameters ask,
//! `wireperf_latency`; see [`crate::echo_wire`]); against a stock iperf3 server,
//! which sends no offer, TCP connects to its port ([`crate::prober`]).
//!
//! Which kind of server it is shows only after the parameters went out, so the idle connect
//! probes still run before the cookie (below); when an offer then arrives, the echo measures
//! the idle path again and the connect probes are set aside, so idle and loaded figures come
//! from the same probes. Such a server sees those few idle connects and no loaded ones.
//!
//! Why the idle probes run at [`Event::ControlConnected`]: a connection that reaches an idle
//! stock iperf3 becomes its next client (and makes it log an error when it closes), while
//! one that arrives when a control connection is open is refused with one byte and closed.
//! So the idle probes run on the engine's thread right after the control connection is up
//! and before its cookie is sent (the server waits for it: iperf3 for up to 10 s, wireperf's
//! greeter likewise); they delay the test by `idle_probes × interval`.

use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::advice::LocalQueue;
use crate::echo_prober;
use crate::echo_wire::{EchoOffer, Token};
use crate::prober::{self, Prober, ProberConfig};
use crate::sample::{Phase, Probe};
use crate::summary::LatencySummary;
use serde_json::Value;
use wireperf_engine::{Event, Observer, ServerOutput};
use wireperf_protocol::schema::TestReport;

/// How to probe.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LatencyConfig {
    /// Time between probes (idle and loaded).
    pub interval: Duration,
    /// Idle probes before the load.
    pub idle_probes: usize,
}

impl Default for LatencyConfig {
    /// A probe every 100 ms, 10 idle ones (1 s before the load).
    fn default() -> Self {
        LatencyConfig { interval: Duration::from_millis(100), idle_probes: 10 }
    }
}

/// Shortest and longest probe interval accepted, ms: faster probes would themselves load a
/// slow link; slower ones give too few samples in a 10 s test.
pub const INTERVAL_MS: std::ops::RangeInclusive<u64> = 10..=5000;

impl LatencyConfig {
    /// The default settings with a probe every `interval_ms` (`--latency-interval`).
    pub fn every_ms(interval_ms: u64) -> Self {
        LatencyConfig { interval: Duration::from_millis(interval_ms), ..LatencyConfig::default() }
    }
}

/// What the probes were, as `method` names it: TCP connects to the server's port, and the
/// load streams' smoothed RTT when this host sent TCP.
pub fn method(with_stream_rtt: bool) -> &'static str {
    if with_stream_rtt { "tcp_connect+tcpi_rtt" } else { "tcp_connect" }
}

/// The load streams' `tcpi_rtt` in ms: every interval of every stream this host sent on
/// (outside `-O`). Only a sender's kernel knows a stream's RTT, so a download has none here.
pub fn stream_rtts(report: &TestReport) -> Vec<f64> {
    report
        .intervals
        .iter()
        .flat_map(|i| i.streams.iter())
        .filter(|s| s.sender && !s.omitted)
        .filter_map(|s| s.rtt)
        .map(|us| us as f64 / 1000.0)
        .collect()
}

/// The rate of the loaded direction (its receiver's goodput; both added for bidir), bit/s:
/// the rate the queue drains at, to turn a backlog in bytes into a delay.
fn loaded_rate(report: &TestReport, phase: Phase) -> f64 {
    use wireperf_protocol::outcome::{Direction, Flow, Side, TestOutcome};
    let o = TestOutcome::new(report, Side::Client);
    let rate = |d| o.flow(d).and_then(Flow::best).map_or(0.0, |t| t.bits_per_second);
    match phase {
        Phase::Download => rate(Direction::Download),
        Phase::Bidir => rate(Direction::Upload) + rate(Direction::Download),
        Phase::Upload | Phase::Idle => rate(Direction::Upload),
    }
}

/// Client side: forwards every event to `inner` and probes beside the test.
pub struct LatencyProbe<'a> {
    inner: &'a mut dyn Observer,
    cfg: LatencyConfig,
    /// `None` when not probing (no `--latency`, or the name did not resolve).
    target: Option<SocketAddr>,
    phase: Phase,
    origin: Instant,
    idle: Vec<Probe>,
    loaded: Option<Prober>,
    /// The echo probers (UDP, TCP) once a wireperf server offered its echo.
    echo: Vec<Prober>,
    /// What the echo probers are, in `method`'s words (e.g. `udp_echo+tcp_rr`).
    echo_method: String,
    queue: Option<QueueSampler>,
}

/// Samples this host's root qdisc backlog on the test's interface (what `tc -s qdisc show` reads)
/// every [`QUEUE_EVERY`] while the load runs: is the standing queue here or beyond?
struct QueueSampler {
    stop: Arc<AtomicBool>,
    thread: JoinHandle<Option<LocalQueue>>,
}

/// How often the local qdisc is read (one netlink dump each time).
const QUEUE_EVERY: Duration = Duration::from_millis(200);

/// At most this many qdisc samples per test (10 minutes' worth).
const QUEUE_MAX_SAMPLES: usize = 3000;

impl QueueSampler {
    fn start(iface: String) -> Option<QueueSampler> {
        let stop = Arc::new(AtomicBool::new(false));
        let s = Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name("latency-qdisc".into())
            .spawn(move || {
                let mut q: Option<LocalQueue> = None;
                while !s.load(Ordering::Relaxed) && q.as_ref().is_none_or(|q| q.samples < QUEUE_MAX_SAMPLES) {
                    let Some((kind, backlog)) = read_backlog(&iface) else { return q };
                    let e =
                        q.get_or_insert_with(|| LocalQueue { iface: iface.clone(), kind, max_backlog: 0, samples: 0 });
                    e.max_backlog = e.max_backlog.max(backlog);
                    e.samples += 1;
                    std::thread::sleep(QUEUE_EVERY);
                }
                q
            })
            .ok()?;
        Some(QueueSampler { stop, thread })
    }

    fn finish(self) -> Option<LocalQueue> {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.join().ok().flatten()
    }
}

/// One reading of `iface`'s root qdisc: its kind and backlog in bytes. A netlink dump in this
/// process: a `tc` child five times a second was a steady half percent of a core taken from
/// the test it measures (on a one-core host, from the kernel's network stack).
fn read_backlog(iface: &str) -> Option<(String, u64)> {
    let q = wireperf_sys::netdev::root_qdisc(wireperf_sys::netdev::index_of(iface)?).ok()??;
    Some((q.kind, u64::from(q.backlog?)))
}

impl<'a> LatencyProbe<'a> {
    /// Probes `host:port` around a test whose loaded phase and probe settings are `probe`;
    /// with `None` it only forwards the events.
    pub fn new(inner: &'a mut dyn Observer, host: &str, port: u16, probe: Option<(Phase, LatencyConfig)>) -> Self {
        let target = probe.and_then(|_| {
            (host.trim_matches(|c| c == '[' || c == ']'), port).to_socket_addrs().ok().and_then(|mut a| a.next())
        });
        let (phase, cfg) = probe.unwrap_or((Phase::Upload, LatencyConfig::default()));
        Self {
            inner,
            cfg,
            target,
            phase,
            origin: Instant::now(),
            idle: Vec::new(),
            loaded: None,
            echo: Vec::new(),
            echo_method: String::new(),
            queue: None,
        }
    }

    /// The figures, after the run: waits for the probes still in flight (at most their
    /// timeout). `None` when not probing or the test never started its streams.
    pub fn finish(&mut self, report: &TestReport) -> Option<LatencySummary> {
        let rtts = stream_rtts(report);
        let (probes, method) = if self.echo.is_empty() {
            let loaded = self.loaded.take()?;
            loaded.request_stop();
            let mut probes = std::mem::take(&mut self.idle);
            probes.extend(loaded.join());
            (probes, method(!rtts.is_empty()).to_string())
        } else {
            let echo = std::mem::take(&mut self.echo);
            for p in &echo {
                p.request_stop();
            }
            let probes: Vec<Probe> = echo.into_iter().flat_map(Prober::join).collect();
            // A test that never started its streams has no loaded phase to report.
            if !probes.iter().any(|p| p.phase != Phase::Idle) {
                return None;
            }
            let rtt = if rtts.is_empty() { "" } else { "+tcpi_rtt" };
            (probes, format!("{}{rtt}", self.echo_method))
        };
        let local = self.queue.take().and_then(QueueSampler::finish);
        let s = LatencySummary::compute(&method, self.phase, &probes, &rtts);
        Some(s.with_advice(loaded_rate(report, self.phase), local))
    }

    fn prober_config(&self, target: SocketAddr) -> ProberConfig {
        ProberConfig::new(target, self.cfg.interval, self.origin)
    }
}

impl Observer for LatencyProbe<'_> {
    fn event(&mut self, ev: Event<'_>) {
        match &ev {
            Event::ControlConnected { .. } => {
                self.inner.event(ev);
                if let Some(t) = self.target {
                    // A retried start (server busy) measures its idle round trips again.
                    self.idle = prober::idle_probes(&self.prober_config(t), self.cfg.idle_probes);
                }
                return;
            }
            Event::TestStart(_) if !self.echo.is_empty() => {
                for p in &self.echo {
                    p.set_phase(self.phase);
                }
                if let (Some(t), None) = (self.target, &self.queue) {
                    self.queue = wireperf_doctor::interface_for(t.ip()).and_then(QueueSampler::start);
                }
            }
            Event::TestStart(_) => {
                if let (Some(t), None) = (self.target, &self.loaded) {
                    self.loaded = Prober::start(self.prober_config(t), self.phase).ok();
                    self.queue = wireperf_doctor::interface_for(t.ip()).and_then(QueueSampler::start);
                }
            }
            Event::End(_) => {
                for p in self.loaded.iter().chain(&self.echo) {
                    p.request_stop();
                }
            }
            _ => {}
        }
        self.inner.event(ev);
    }

    fn server_output(&mut self) -> Option<ServerOutput> {
        self.inner.server_output()
    }

    fn watch_results(&mut self) -> Option<Value> {
        self.inner.watch_results()
    }

    fn peer_watch(&mut self, watch: &Value) {
        self.inner.peer_watch(watch);
    }

    fn peer_latency_offer(&mut self, offer: &Value) {
        self.inner.peer_latency_offer(offer);
        let (Some(t), Some(o)) = (self.target, EchoOffer::from_json(offer)) else { return };
        let Some(token) = o.token() else { return };
        // A retried start (server busy) offers again: the old probers go.
        for p in std::mem::take(&mut self.echo) {
            p.stop();
        }
        let cfg = |port| ProberConfig::new(SocketAddr::new(t.ip(), port), self.cfg.interval, self.origin);
        let mut names = Vec::new();
        type Start = fn(ProberConfig, Token, Phase) -> std::io::Result<Prober>;
        let flows: [(Option<u16>, Start, &str); 2] =
            [(o.udp_port, echo_prober::start_udp, "udp_echo"), (o.tcp_port, echo_prober::start_tcp, "tcp_rr")];
        for (port, start, name) in flows {
            if let Some(p) = port.and_then(|port| start(cfg(port), token, Phase::Idle).ok()) {
                self.echo.push(p);
                names.push(name);
            }
        }
        if self.echo.is_empty() {
            // Neither flow came up (a firewall in front of the echo ports): the connect
            // probes carry on as against a stock server.
            return;
        }
        self.echo_method = names.join("+");
        // The idle probes, while the server waits for the streams (it allows 30 s); the
        // connect probes of before the cookie are set aside.
        self.idle.clear();
        std::thread::sleep(self.cfg.interval * u32::try_from(self.cfg.idle_probes).unwrap_or(u32::MAX));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wireperf_protocol::schema::{Interval, IntervalStream};

    #[test]
    fn stream_rtts_are_the_senders_outside_omit() {
        let s = |sender, omitted, rtt| IntervalStream { sender, omitted, rtt, ..Default::default() };
        let r = TestReport {
            intervals: vec![Interval {
                streams: vec![
                    s(true, false, Some(1500)),
                    s(false, false, Some(9)),
                    s(true, true, Some(7)),
                    s(true, false, None),
                ],
                ..Default::default()
            }],
            ..Default::default()
        };
        assert_eq!(stream_rtts(&r), vec![1.5]);
        assert_eq!(method(true), "tcp_connect+tcpi_rtt");
    }

    #[test]
    fn every_ms_keeps_the_idle_probes() {
        let c = LatencyConfig::every_ms(50);
        assert_eq!(c.interval, Duration::from_millis(50));
        assert_eq!(c.idle_probes, LatencyConfig::default().idle_probes);
        assert!(INTERVAL_MS.contains(&10) && INTERVAL_MS.contains(&5000) && !INTERVAL_MS.contains(&5));
    }
}
