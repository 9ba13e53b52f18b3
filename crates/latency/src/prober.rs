//! Connect-time probes: a thread that opens a TCP connection to the server's port at a steady
//! rate and times the handshake.
//!
//! A TCP handshake is a round trip the far host's kernel answers (SYN → SYN-ACK) without its
//! application, so it measures the path and its queues without the server's cooperation: it
//! works against a stock iperf3. It is a *foreign* probe in the responsiveness draft's words:
//! its own flow, never queued behind the test's bytes in one socket, but through the same
//! interface queues as the load.
//!
//! What the server does with the connection matters, because the test must not be disturbed:
//! iperf3 (3.12 to 3.21 read) answers a connection that arrives during an active test with
//! one `ACCESS_DENIED` byte and closes it, without touching the running test; wireperf's
//! server closes a connection that sends no cookie. The probe closes its side right after the
//! handshake with an ordinary FIN (never an RST, so the server's one-byte write cannot fail
//! with EPIPE). A connection that reaches an *idle* iperf3 would become its next client (and
//! make it log an error), so callers probe only while their own control connection holds the
//! server: the idle probes run after it connected and before the load starts.
//!
//! Each probe runs on a short thread of its own, so a slow answer under a deep queue does not
//! slow the rate; at most `timeout / interval` are in flight and the count is bounded.

use crate::sample::{Method, Phase, Probe};
use socket2::{Domain, Protocol, SockAddr, Socket, Type};
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How probes are sent.
#[derive(Clone, Debug)]
pub struct ProberConfig {
    /// The server's address and port (the iperf3 port).
    pub target: SocketAddr,
    /// Time between probe starts.
    pub interval: Duration,
    /// A probe with no answer in this time is lost.
    pub timeout: Duration,
    /// At most this many probes (a bound on every run).
    pub max_probes: usize,
    /// The time probes' `at_ms` count from (shared by the idle and loaded probers of a test).
    pub origin: Instant,
}

impl ProberConfig {
    /// Probes every `interval` to `target`, lost after 2 s, at most 10 minutes' worth.
    pub fn new(target: SocketAddr, interval: Duration, origin: Instant) -> ProberConfig {
        let per_sec = 1.0 / interval.as_secs_f64().max(0.001);
        ProberConfig {
            target,
            interval,
            timeout: Duration::from_secs(2),
            max_probes: (per_sec * 600.0) as usize,
            origin,
        }
    }
}

/// A running prober.
#[derive(Debug)]
pub struct Prober {
    phase: Arc<AtomicU8>,
    stop: Arc<AtomicBool>,
    thread: JoinHandle<Vec<Probe>>,
}

const PHASES: [Phase; 4] = [Phase::Idle, Phase::Upload, Phase::Download, Phase::Bidir];

fn phase_code(p: Phase) -> u8 {
    PHASES.iter().position(|q| *q == p).unwrap_or(0) as u8
}

impl Prober {
    /// Starts probing, the probes labelled `phase` until [`Prober::set_phase`].
    pub fn start(cfg: ProberConfig, phase: Phase) -> std::io::Result<Prober> {
        Prober::spawn(phase, move |p, s| run(&cfg, p, s))
    }

    /// Runs `probe` on a thread of its own with the phase label and stop flag this handle
    /// sets: the shape every kind of probe shares ([`crate::echo_prober`] is the other).
    pub(crate) fn spawn<F>(phase: Phase, probe: F) -> std::io::Result<Prober>
    where
        F: FnOnce(&AtomicU8, &AtomicBool) -> Vec<Probe> + Send + 'static,
    {
        let phase = Arc::new(AtomicU8::new(phase_code(phase)));
        let stop = Arc::new(AtomicBool::new(false));
        let (p, s) = (Arc::clone(&phase), Arc::clone(&stop));
        let thread = std::thread::Builder::new().name("latency-probe".into()).spawn(move || probe(&p, &s))?;
        Ok(Prober { phase, stop, thread })
    }

    /// Labels the probes started from now on.
    pub fn set_phase(&self, phase: Phase) {
        self.phase.store(phase_code(phase), Ordering::Relaxed);
    }

    /// Stops sending, waits for the probes in flight (at most their timeout) and returns
    /// every probe in the order sent.
    pub fn stop(self) -> Vec<Probe> {
        self.request_stop();
        self.join()
    }

    /// Sends no further probe, without waiting (for a caller on a thread that must not block,
    /// such as the engine's at the end of a test); [`Prober::join`] collects them later.
    pub fn request_stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
    }

    /// Waits until `max_probes` were sent and answered or lost.
    pub fn join(self) -> Vec<Probe> {
        self.thread.join().unwrap_or_default()
    }
}

/// Sends `count` probes labelled idle and returns them (blocks about `count × interval`).
pub fn idle_probes(cfg: &ProberConfig, count: usize) -> Vec<Probe> {
    let cfg = ProberConfig { max_probes: count, ..cfg.clone() };
    match Prober::start(cfg, Phase::Idle) {
        Ok(p) => p.join(),
        Err(_) => Vec::new(),
    }
}

fn run(cfg: &ProberConfig, phase: &AtomicU8, stop: &AtomicBool) -> Vec<Probe> {
    let (tx, rx) = mpsc::channel::<(usize, Option<f64>)>();
    let mut sent: Vec<Probe> = Vec::new();
    let mut workers = Vec::new();
    let mut next = Instant::now();
    while sent.len() < cfg.max_probes && !stop.load(Ordering::Relaxed) {
        let now = Instant::now();
        if now < next {
            std::thread::sleep((next - now).min(Duration::from_millis(10)));
            continue;
        }
        let i = sent.len();
        let p = phase_now(phase);
        sent.push(Probe::new(ms(now.saturating_duration_since(cfg.origin)), p, None, Method::TcpConnect));
        let (tx, target, timeout) = (tx.clone(), cfg.target, cfg.timeout);
        let spawned =
            std::thread::Builder::new().name("latency-probe-1".into()).stack_size(64 * 1024).spawn(move || {
                let _ = tx.send((i, connect_time(target, timeout)));
            });
        // Without a thread the probe stays in the list as lost rather than vanishing.
        if let Ok(h) = spawned {
            workers.push(h);
        }
        next += cfg.interval;
        // Keep the finished handles from piling up in a long run.
        workers.retain(|h| !h.is_finished());
    }
    drop(tx);
    for h in workers {
        let _ = h.join();
    }
    for (i, rtt) in rx.try_iter() {
        if let Some(p) = sent.get_mut(i) {
            p.rtt_ms = rtt;
        }
    }
    sent
}

/// The phase label a probe sent now carries.
pub(crate) fn phase_now(phase: &AtomicU8) -> Phase {
    PHASES.get(usize::from(phase.load(Ordering::Relaxed))).copied().unwrap_or(Phase::Idle)
}

/// Milliseconds, to the microsecond.
pub(crate) fn ms(d: Duration) -> f64 {
    (d.as_secs_f64() * 1_000_000.0).round() / 1000.0
}

/// One handshake's time, ms; `None` when it failed or took longer than `timeout`.
pub fn connect_time(target: SocketAddr, timeout: Duration) -> Option<f64> {
    let sock = Socket::new(Domain::for_address(target), Type::STREAM, Some(Protocol::TCP)).ok()?;
    let t0 = Instant::now();
    sock.connect_timeout(&SockAddr::from(target), timeout).ok()?;
    let rtt = ms(t0.elapsed());
    // An ordinary close (FIN): the server's ACCESS_DENIED byte then never meets a reset socket.
    drop(sock);
    Some(rtt)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    #[test]
    fn probes_a_listener_at_the_rate_asked() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let cfg = ProberConfig::new(l.local_addr().unwrap(), Duration::from_millis(20), Instant::now());
        let p = idle_probes(&cfg, 5);
        assert_eq!(p.len(), 5);
        assert!(p.iter().all(|p| p.phase == Phase::Idle && p.rtt_ms.is_some_and(|r| r < 1000.0)), "{p:?}");
        // Steady rate: probe i starts about i × 20 ms after the first.
        let span = p[4].at_ms - p[0].at_ms;
        assert!((70.0..400.0).contains(&span), "{span}");
    }

    #[test]
    fn refused_probes_are_lost_and_the_phase_switches() {
        // A port nobody listens on: bind, learn the port, close.
        let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let cfg =
            ProberConfig::new(SocketAddr::from(([127, 0, 0, 1], port)), Duration::from_millis(10), Instant::now());
        let prober = Prober::start(cfg, Phase::Idle).unwrap();
        std::thread::sleep(Duration::from_millis(35));
        prober.set_phase(Phase::Upload);
        std::thread::sleep(Duration::from_millis(35));
        let p = prober.stop();
        assert!(p.iter().all(|p| p.rtt_ms.is_none()), "{p:?}");
        assert!(p.iter().any(|p| p.phase == Phase::Idle) && p.iter().any(|p| p.phase == Phase::Upload), "{p:?}");
    }
}
