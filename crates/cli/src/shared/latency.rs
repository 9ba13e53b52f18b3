//! `--latency` and `--latency-interval`, shared by `-c` and `suite`: probe round trips idle
//! and under the test's load (see the `wireperf-latency` crate and docs/latency.md).

use wireperf_latency::engine_probe::{INTERVAL_MS, LatencyConfig};

/// Parses `--latency-interval MS`.
pub fn parse_interval(s: &str) -> Result<u64, String> {
    let ms: u64 = s.trim().parse().map_err(|_| format!("'{s}' is not a number of milliseconds"))?;
    if INTERVAL_MS.contains(&ms) {
        Ok(ms)
    } else {
        Err(format!("{ms} ms is outside {}..={} ms", INTERVAL_MS.start(), INTERVAL_MS.end()))
    }
}

/// The probe settings, when `--latency` was given.
pub fn config(on: bool, interval_ms: u64) -> Option<LatencyConfig> {
    on.then(|| LatencyConfig::every_ms(interval_ms))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn interval_bounds() {
        assert_eq!(parse_interval("100"), Ok(100));
        assert!(parse_interval("5").unwrap_err().contains("outside 10..=5000"));
        assert!(parse_interval("x").unwrap_err().contains("not a number"));
        assert_eq!(config(false, 100), None);
        assert_eq!(config(true, 50).unwrap().interval, Duration::from_millis(50));
    }
}
