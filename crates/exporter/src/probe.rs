//! One probe: wait for a slot, run one test (or `repeat` tests back to back) on a blocking
//! thread, never past the deadline.
//!
//! The engine is synchronous (one OS thread per stream), so the test runs under
//! `spawn_blocking`. Every wait the engine does is bounded by the probe's budget (connect
//! timeout, receive timeout), and at the deadline the probe answers `probe_success 0` at once
//! and raises the engine's interrupt flag, which ends the test within a fraction of a second.
//! The slots stay held by the blocking thread until it has really finished, so an overrun test
//! never overlaps the next probe of the same target. A series holds them from its first test
//! to its last (no other probe of the target runs between its tests) and stops at its first
//! failed test: the probe has failed, and more tests would only load the link.

use crate::budget::{clamp_duration, extra_per_test, per_test};
use crate::failure::Failure;
use crate::limits::Limiter;
use crate::params::ProbeSpec;
use crate::render::ProbeReport;
use crate::results::ProbeResults;
use crate::series::Series;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::Duration;
use tokio::time::Instant;
use wireperf_engine::event::NullObserver;
use wireperf_engine::{ClientConfig, EngineError, EngineTuning, run_client};
use wireperf_latency::Phase;
use wireperf_latency::engine_probe::{LatencyConfig, LatencyProbe};
use wireperf_protocol::params::DEFAULT_UDP_RATE;
use wireperf_protocol::{Protocol, TestParams};

/// A busy answer is tried again, this many times in all, this far apart, while the rest of the
/// deadline still holds the test (plus a second for its start and results). Why: a server
/// frees its slot only after the client has its results (the server ends the test when the
/// client's IPERF_DONE arrives), so the next probe of the same target, started the moment the
/// previous one returned, can reach the server in that gap and be turned away although nobody
/// else is testing. A target busy with someone else's test stays busy and is reported so.
const BUSY_ATTEMPTS: u32 = 4;
const BUSY_PAUSE: Duration = Duration::from_millis(250);
const BUSY_MARGIN: Duration = Duration::from_secs(1);

/// iperf3's UDP datagram size when the path MTU is not known.
const UDP_BLKSIZE: u32 = 1460;

/// The engine configuration for `spec`, running `seconds`, with every wait bounded by `budget`.
pub fn client_config(spec: &ProbeSpec, seconds: u32, budget: Duration) -> ClientConfig {
    let mut p = TestParams {
        time: seconds,
        parallel: spec.parallel,
        reverse: spec.reverse,
        bidirectional: spec.bidir,
        bandwidth: spec.bitrate,
        burst: spec.burst,
        wireperf_latency: spec.latency,
        ..Default::default()
    };
    if spec.udp {
        p.protocol = Protocol::Udp;
        p.len = UDP_BLKSIZE;
        p.bandwidth = Some(spec.bitrate.unwrap_or(DEFAULT_UDP_RATE));
    }
    let mut cfg = ClientConfig::new(spec.host.clone(), p);
    cfg.port = spec.port;
    cfg.interval = None;
    cfg.connect_timeout = Some(budget);
    cfg.rcv_timeout = budget;
    cfg
}

/// Raises the engine's interrupt flag when the probe ends for any reason: its deadline, or
/// the scraper hanging up (axum then drops the handler's future). After a finished test the
/// flag is harmless.
struct StopOnDrop(Arc<AtomicBool>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// What one test of a probe needs besides its configuration.
struct TestRun<'a> {
    cfg: &'a ClientConfig,
    latency: Option<(Phase, LatencyConfig)>,
    interrupt: &'a AtomicBool,
    deadline: std::time::Instant,
}

impl TestRun<'_> {
    /// Runs one test, trying a busy answer again while the deadline still holds `time_left`
    /// (this test's time and that of the series' tests after it).
    fn once(&self, time_left: Duration) -> Result<ProbeResults, Failure> {
        let mut attempt = 1;
        let (outcome, summary) = loop {
            let mut null = NullObserver;
            let mut obs = LatencyProbe::new(&mut null, &self.cfg.host, self.cfg.port, self.latency);
            let outcome = run_client(self.cfg, &mut obs, self.interrupt);
            let summary = obs.finish(&outcome.report);
            let busy = matches!(outcome.error, Some(EngineError::AccessDenied));
            let room = std::time::Instant::now() + BUSY_PAUSE + time_left + BUSY_MARGIN <= self.deadline;
            if !busy || attempt >= BUSY_ATTEMPTS || !room || self.interrupt.load(Ordering::Relaxed) {
                break (outcome, summary);
            }
            attempt += 1;
            std::thread::sleep(BUSY_PAUSE);
        };
        match outcome.error {
            Some(e) => Err(Failure::from_engine(&e)),
            None => ProbeResults::from_report(&outcome.report)
                .map(|r| ProbeResults { latency: summary, ..r })
                .map_err(|e| Failure::new("test_failed", e.to_string())),
        }
    }

    /// Runs `rounds` tests of `test_time` each back to back, counting them in `round`; the
    /// last test's results, with the series' summary when there were two or more. The first
    /// failed test ends the series and fails it, saying which round it was.
    fn series(&self, rounds: u32, test_time: Duration, round: &AtomicU32) -> Result<ProbeResults, Failure> {
        let mut done = Vec::with_capacity(rounds as usize);
        for r in 1..=rounds {
            round.store(r, Ordering::Relaxed);
            if r > 1 && self.interrupt.load(Ordering::Relaxed) {
                // The probe has already answered (its deadline, or the scraper hung up).
                return Err(Failure::new("timeout", "the probe ended before this test").in_round(r, rounds));
            }
            done.push(self.once(test_time * (rounds - r + 1)).map_err(|f| f.in_round(r, rounds))?);
        }
        let series = (rounds > 1).then(|| Series::of(&done));
        let last = done.pop().ok_or_else(|| Failure::new("internal", "no test ran"))?;
        Ok(ProbeResults { series, ..last })
    }
}

/// Runs one probe and reports what happened; returns by `deadline` whatever the target does.
pub async fn run(
    spec: &ProbeSpec,
    tuning: &EngineTuning,
    limiter: &Limiter,
    started: Instant,
    deadline: Instant,
) -> ProbeReport {
    let mut rep = ProbeReport {
        host: spec.host.clone(),
        port: spec.port,
        udp: spec.udp,
        duration: Duration::ZERO,
        test_seconds: 0,
        outcome: Err(Failure::new("internal", "not run")),
    };
    let key = format!("{}:{}", spec.host, spec.port);
    let rounds = spec.repeat.max(1);
    rep.outcome = match limiter.acquire(&key, deadline).await {
        Err(busy) => Err(Failure::new("overloaded", busy.to_string())),
        Ok(permits) => {
            let remaining = deadline.saturating_duration_since(Instant::now());
            let reserve = extra_per_test(spec);
            rep.test_seconds = clamp_duration(spec.duration, per_test(remaining, rounds, reserve));
            let mut cfg = client_config(spec, rep.test_seconds, remaining);
            cfg.tuning = *tuning;
            let latency = spec.latency.then(|| (Phase::of_test(spec.reverse, spec.bidir), LatencyConfig::default()));
            let interrupt = StopOnDrop(Arc::new(AtomicBool::new(false)));
            let flag = Arc::clone(&interrupt.0);
            let round = Arc::new(AtomicU32::new(0));
            let round_seen = Arc::clone(&round);
            let test_time = Duration::from_secs(u64::from(rep.test_seconds)) + reserve;
            let std_deadline = deadline.into_std();
            let task = tokio::task::spawn_blocking(move || {
                let _slots = permits;
                let run = TestRun { cfg: &cfg, latency, interrupt: &flag, deadline: std_deadline };
                run.series(rounds, test_time, &round)
            });
            match tokio::time::timeout_at(deadline, task).await {
                Ok(Ok(outcome)) => outcome,
                Ok(Err(join)) => Err(Failure::new("internal", format!("the test thread failed: {join}"))),
                Err(_) => {
                    let budget = deadline.saturating_duration_since(started).as_secs_f64();
                    let f = Failure::new("timeout", format!("no result within the probe timeout ({budget:.2}s)"));
                    Err(f.in_round(round_seen.load(Ordering::Relaxed).max(1), rounds))
                }
            }
        }
    };
    rep.duration = started.elapsed();
    rep
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> ProbeSpec {
        ProbeSpec {
            host: "h".into(),
            port: 5300,
            duration: 5,
            reverse: true,
            bidir: false,
            udp: false,
            bitrate: None,
            burst: None,
            parallel: 3,
            latency: false,
            repeat: 1,
        }
    }

    #[test]
    fn tcp_config_is_bounded_by_the_budget() {
        let c = client_config(&spec(), 2, Duration::from_secs(3));
        assert_eq!((c.host.as_str(), c.port, c.params.time, c.params.parallel), ("h", 5300, 2, 3));
        assert!(c.params.reverse && c.params.protocol == Protocol::Tcp && c.params.bandwidth.is_none());
        assert_eq!(
            (c.connect_timeout, c.rcv_timeout, c.interval),
            (Some(Duration::from_secs(3)), Duration::from_secs(3), None)
        );
    }

    #[test]
    fn udp_config_gets_iperf3_defaults() {
        let mut s = spec();
        s.udp = true;
        let c = client_config(&s, 1, Duration::from_secs(1));
        assert_eq!(
            (c.params.protocol, c.params.len, c.params.bandwidth),
            (Protocol::Udp, 1460, Some(DEFAULT_UDP_RATE))
        );
        s.bitrate = Some(5_000_000);
        assert_eq!(client_config(&s, 1, Duration::from_secs(1)).params.bandwidth, Some(5_000_000));
    }

    #[test]
    fn a_refused_target_fails_fast_with_a_reason() {
        let rt = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
        // A port nothing listens on: bind one, learn its number, close it.
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let mut s = spec();
        s.host = "127.0.0.1".into();
        s.port = port;
        let limiter = Limiter::new(1, 1);
        let rep = rt.block_on(async {
            let now = Instant::now();
            run(&s, &EngineTuning::default(), &limiter, now, now + Duration::from_secs(5)).await
        });
        let f = rep.outcome.unwrap_err();
        assert_eq!(f.reason, "refused", "{f:?}");
        assert!(rep.duration < Duration::from_secs(2), "{:?}", rep.duration);
    }

    #[test]
    fn a_series_fails_at_its_first_failed_round_and_says_so() {
        let rt = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let mut s = spec();
        s.host = "127.0.0.1".into();
        s.port = port;
        s.repeat = 3;
        let limiter = Limiter::new(1, 1);
        let rep = rt.block_on(async {
            let now = Instant::now();
            run(&s, &EngineTuning::default(), &limiter, now, now + Duration::from_secs(5)).await
        });
        let f = rep.outcome.unwrap_err();
        assert_eq!(f.reason, "refused", "the reason a single test would give: {f:?}");
        assert!(f.message.starts_with("round 1 of 3: "), "{f:?}");
        assert!(rep.duration < Duration::from_secs(2), "the other rounds did not run: {:?}", rep.duration);
    }

    #[test]
    fn a_silent_target_ends_at_the_deadline() {
        let rt = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
        // Accepts the connection but never answers: the probe must not hang.
        let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let mut s = spec();
        s.host = "127.0.0.1".into();
        s.port = silent.local_addr().unwrap().port();
        let limiter = Limiter::new(1, 1);
        let rep = rt.block_on(async {
            let now = Instant::now();
            run(&s, &EngineTuning::default(), &limiter, now, now + Duration::from_millis(800)).await
        });
        let f = rep.outcome.unwrap_err();
        assert_eq!(f.reason, "timeout", "{f:?}");
        assert!(
            rep.duration >= Duration::from_millis(790) && rep.duration < Duration::from_millis(1500),
            "{:?}",
            rep.duration
        );
    }
}
