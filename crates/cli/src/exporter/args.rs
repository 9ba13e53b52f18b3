//! `wireperf exporter` flags, and their lowering into an [`ExporterConfig`].

use clap::Args;
use std::time::Duration;
use wireperf_exporter::ExporterConfig;

/// Serve Prometheus probes: each scrape of /probe?target=HOST[:PORT] runs one test.
///
/// Point Prometheus at /probe with blackbox-style relabelling (targets become the `target`
/// parameter). Query parameters: duration (seconds), reverse, bidir, udp, bitrate (-b syntax),
/// parallel, latency, repeat (1..10 tests back to back, publishing their mean and 95%
/// confidence interval); the iperf3 exporter's port, period, reverse_mode and udp_mode work
/// too. Each probe must finish within the scrape timeout Prometheus sends, so the test length
/// is clamped to fit (a series' tests share it). /metrics has the exporter's own counters.
#[derive(Debug, Clone, Args)]
pub struct ExporterArgs {
    /// Address to serve HTTP on (`:PORT` for every address).
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:9579")]
    pub listen: String,
    /// Probes running at once, at most.
    #[arg(long, value_name = "N", default_value_t = 2)]
    pub max_concurrent: usize,
    /// Probes against one target running at once, at most (others wait their turn).
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub per_target: usize,
    /// Server port when the target names none.
    #[arg(long, value_name = "PORT", default_value_t = 5201)]
    pub default_port: u16,
    /// Test length when the probe names none, seconds.
    #[arg(long, value_name = "SECS", default_value_t = 5)]
    pub default_duration: u32,
    /// Longest a probe may take, seconds (also used when a scrape sends no timeout header).
    #[arg(long, value_name = "SECS", default_value_t = 30.0, value_parser = crate::shared::seconds::timeout, allow_negative_numbers = true)]
    pub timeout: f64,
    /// Seconds subtracted from Prometheus' scrape timeout, so the answer arrives in time.
    #[arg(long, value_name = "SECS", default_value_t = 0.5, value_parser = crate::shared::seconds::margin, allow_negative_numbers = true)]
    pub timeout_offset: f64,
}

/// The parser checked the value (finite, 0..=3600), so the conversion cannot fail; a value that
/// got here some other way falls back to zero rather than panicking.
fn secs(v: f64) -> Duration {
    Duration::try_from_secs_f64(v).unwrap_or_default()
}

impl ExporterArgs {
    /// Lowers the flags into the exporter's configuration.
    pub fn config(&self) -> ExporterConfig {
        ExporterConfig {
            listen: self.listen.clone(),
            max_concurrent: self.max_concurrent,
            per_target: self.per_target,
            default_port: self.default_port,
            default_duration: self.default_duration,
            timeout: secs(self.timeout),
            timeout_offset: secs(self.timeout_offset),
            tuning: crate::shared::tuning::from_env(),
        }
    }
}
