//! How long a probe may take, and how long its test may run within that.
//!
//! Prometheus tells every scrape how long it will wait (`X-Prometheus-Scrape-Timeout-Seconds`).
//! A probe that answers after that is wasted: Prometheus records a failed scrape and the
//! exporter's test kept a server busy for nothing. So the probe's deadline is the header minus a
//! margin (for the HTTP round trip), capped by `--timeout`; and the test's length is clamped so
//! that connecting, the parameter exchange and the results exchange still fit before it.

use std::time::Duration;

/// The header Prometheus sends with every scrape.
pub const SCRAPE_TIMEOUT_HEADER: &str = "x-prometheus-scrape-timeout-seconds";

/// Time kept free around the test itself for connecting and exchanging parameters and results
/// (a few round trips; on a LAN well under this).
pub const SETUP_RESERVE: Duration = Duration::from_millis(250);

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
}
