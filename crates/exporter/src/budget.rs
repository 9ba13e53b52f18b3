//! How long a probe may take, and how long its test may run within that.
//!
//! Prometheus tells every scrape how long it will wait (`X-Prometheus-Scrape-Timeout-Seconds`).
//! A probe that answers after that is wasted: Prometheus records a failed scrape and the
//! exporter's test kept a server busy for nothing. So the probe's deadline is the header minus a
//! margin (for the HTTP round trip), capped by `--timeout`; and the test's length is clamped so
//! that connecting, the parameter exchange and the results exchange still fit before it.
//!
//! A series (`repeat=N`) shares the budget: each of its N tests gets an Nth of it, and its
//! length is clamped into that share as one test's is into the whole, so a scrape that
//! answered in time with one test answers in time with N. A series that cannot fit even with
//! 1 s tests is refused (HTTP 400) before it starts: Prometheus shows that error on the
//! target's page, where a probe that ran out of time would only say `probe_success 0`.

use crate::params::{ParamError, ProbeSpec};
use std::time::Duration;

/// The header Prometheus sends with every scrape.
pub const SCRAPE_TIMEOUT_HEADER: &str = "x-prometheus-scrape-timeout-seconds";

/// Time kept free around the test itself for connecting and exchanging parameters and results
/// (a few round trips; on a LAN well under this).
pub const SETUP_RESERVE: Duration = Duration::from_millis(250);

/// Time a latency probe needs beside its test: the idle probes (1 s of connects before the
/// cookie, and against a wireperf server 1 s more on its echo) and the wait for the last
/// loaded probes' answers.
pub const LATENCY_RESERVE: Duration = Duration::from_secs(3);

/// Timeout settings of the exporter.
#[derive(Clone, Copy, Debug)]
pub struct TimeoutPolicy {
    /// Upper bound for any probe (`--timeout`), also used when the header is absent.
    pub max: Duration,
    /// Subtracted from the scrape timeout (`--timeout-offset`).
    pub offset: Duration,
}

impl TimeoutPolicy {
    /// The probe's time budget for a scrape that sent `header` (the raw header value, if any).
    /// A header that does not parse is ignored rather than failing the scrape.
    pub fn probe_timeout(&self, header: Option<&str>) -> Duration {
        let scrape = header
            .and_then(|h| h.trim().parse::<f64>().ok())
            .filter(|s| s.is_finite() && *s > 0.0)
            .map(Duration::from_secs_f64);
        match scrape {
            // Never below a tenth of a second: a probe needs some time to fail cleanly.
            Some(s) => s.saturating_sub(self.offset).max(Duration::from_millis(100)).min(self.max),
            None => self.max,
        }
    }
}

/// Time each test of `spec` needs beyond its own length and [`SETUP_RESERVE`]: its latency
/// probes, when asked for.
pub fn extra_per_test(spec: &ProbeSpec) -> Duration {
    if spec.latency { LATENCY_RESERVE } else { Duration::ZERO }
}

/// Each test's share of `remaining` when `repeat` tests run back to back, less `extra`; the
/// test's length is then clamped into it by [`clamp_duration`]. With one test this is all of
/// `remaining` less `extra`, exactly as before series existed.
pub fn per_test(remaining: Duration, repeat: u32, extra: Duration) -> Duration {
    (remaining / repeat.max(1)).saturating_sub(extra)
}

/// The least time `repeat` tests need: each 1 s (iperf3's shortest `-t`), its setup and `extra`.
pub fn series_minimum(repeat: u32, extra: Duration) -> Duration {
    (Duration::from_secs(1) + SETUP_RESERVE + extra) * repeat
}

/// Refuses a series (`repeat` ≥ 2) that cannot fit in the probe's time budget `timeout` even
/// with 1 s tests. A single test is never refused here (it is clamped to 1 s and, if even that
/// does not fit, ended by the deadline, as it always was).
pub fn check_series(spec: &ProbeSpec, timeout: Duration) -> Result<(), ParamError> {
    let extra = extra_per_test(spec);
    let need = series_minimum(spec.repeat, extra);
    if spec.repeat < 2 || need <= timeout {
        return Ok(());
    }
    let what = if spec.latency { "setup and latency probes" } else { "setup" };
    Err(ParamError::Bad {
        name: "repeat",
        why: format!(
            "{n} tests need at least {need:.2}s (1s each plus {over:.2}s of {what}), but this probe may take only \
             {timeout:.2}s (the scrape timeout minus --timeout-offset, at most --timeout): lower 'repeat' or raise \
             scrape_timeout",
            n = spec.repeat,
            need = need.as_secs_f64(),
            over = (SETUP_RESERVE + extra).as_secs_f64(),
            timeout = timeout.as_secs_f64(),
        ),
    })
}

/// The test length, whole seconds, that fits in `remaining`: at most `requested`, at least 1
/// (iperf3's smallest `-t`; if even that does not fit, the deadline ends the probe).
pub fn clamp_duration(requested: u32, remaining: Duration) -> u32 {
    let fits = remaining.saturating_sub(SETUP_RESERVE).as_secs();
    let fits = u32::try_from(fits).unwrap_or(u32::MAX);
    requested.min(fits).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    const P: TimeoutPolicy = TimeoutPolicy { max: Duration::from_secs(30), offset: Duration::from_millis(500) };

    #[test]
    fn header_minus_offset_capped_by_max() {
        assert_eq!(P.probe_timeout(Some("10")), Duration::from_millis(9500));
        assert_eq!(P.probe_timeout(Some("1.8")), Duration::from_millis(1300));
        assert_eq!(P.probe_timeout(Some("120")), Duration::from_secs(30));
        assert_eq!(P.probe_timeout(Some("0.3")), Duration::from_millis(100));
    }

    #[test]
    fn missing_or_bad_header_uses_max() {
        assert_eq!(P.probe_timeout(None), Duration::from_secs(30));
        assert_eq!(P.probe_timeout(Some("soon")), Duration::from_secs(30));
        assert_eq!(P.probe_timeout(Some("-1")), Duration::from_secs(30));
        assert_eq!(P.probe_timeout(Some("NaN")), Duration::from_secs(30));
    }

    #[test]
    fn duration_fits_the_budget() {
        assert_eq!(clamp_duration(5, Duration::from_secs(30)), 5);
        assert_eq!(clamp_duration(10, Duration::from_millis(9500)), 9);
        assert_eq!(clamp_duration(1, Duration::from_millis(1300)), 1);
        assert_eq!(clamp_duration(5, Duration::from_millis(1300)), 1);
        assert_eq!(clamp_duration(5, Duration::ZERO), 1);
    }

    fn spec(repeat: u32, latency: bool) -> ProbeSpec {
        ProbeSpec {
            host: "h".into(),
            port: 5201,
            duration: 5,
            reverse: false,
            bidir: false,
            udp: false,
            bitrate: None,
            burst: None,
            parallel: 1,
            latency,
            repeat,
        }
    }

    #[test]
    fn a_series_shares_the_budget() {
        // One test: the whole budget, as before `repeat` existed.
        assert_eq!(per_test(Duration::from_millis(9500), 1, Duration::ZERO), Duration::from_millis(9500));
        assert_eq!(clamp_duration(5, per_test(Duration::from_millis(9500), 1, Duration::ZERO)), 5);
        // Three tests in 9.5 s: 3.17 s each, so a 5 s request runs 2 s tests (2.25 s with setup).
        assert_eq!(clamp_duration(5, per_test(Duration::from_millis(9500), 3, Duration::ZERO)), 2);
        // A request that fits is not shortened.
        assert_eq!(clamp_duration(1, per_test(Duration::from_millis(9500), 3, Duration::ZERO)), 1);
        // Latency probes come out of each test's share.
        assert_eq!(per_test(Duration::from_secs(16), 2, LATENCY_RESERVE), Duration::from_secs(5));
        assert_eq!(clamp_duration(10, per_test(Duration::from_secs(16), 2, LATENCY_RESERVE)), 4);
        assert_eq!(per_test(Duration::from_secs(1), 0, Duration::ZERO), Duration::from_secs(1), "0 counts as 1");
    }

    #[test]
    fn a_series_that_cannot_fit_is_refused_with_the_numbers() {
        assert_eq!(series_minimum(3, Duration::ZERO), Duration::from_millis(3750));
        // Prometheus' default 10 s scrape timeout less 0.5 s holds 3 tests, not 8.
        assert_eq!(check_series(&spec(3, false), P.probe_timeout(Some("10"))), Ok(()));
        assert_eq!(check_series(&spec(7, false), Duration::from_millis(8750)), Ok(()), "exactly fits");
        let err = check_series(&spec(8, false), P.probe_timeout(Some("10"))).unwrap_err();
        assert_eq!(
            err.to_string(),
            "'repeat' parameter: 8 tests need at least 10.00s (1s each plus 0.25s of setup), but this probe may take \
             only 9.50s (the scrape timeout minus --timeout-offset, at most --timeout): lower 'repeat' or raise \
             scrape_timeout"
        );
        // With latency probes each test needs 3 s more.
        let err = check_series(&spec(2, true), P.probe_timeout(Some("5"))).unwrap_err().to_string();
        assert!(err.contains("2 tests need at least 8.50s (1s each plus 3.25s of setup and latency probes)"), "{err}");
        assert_eq!(check_series(&spec(2, true), P.probe_timeout(Some("10"))), Ok(()));
        // One test is never refused: it is clamped, as it always was.
        assert_eq!(check_series(&spec(1, true), Duration::from_millis(100)), Ok(()));
    }
}
