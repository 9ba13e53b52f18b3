//! `wireperf exporter`: the arguments and the entry point the `cli` crate calls.

use crate::budget::TimeoutPolicy;
use crate::error::{Error, bind};
use crate::health::Health;
use crate::http::{ExporterState, router, serve_blocking};
use crate::limits::Limiter;
use crate::params::SpecDefaults;
use clap::Args;
use std::sync::Arc;
use std::time::Duration;

/// Serve Prometheus probes: each scrape of /probe?target=HOST[:PORT] runs one test.
///
/// Point Prometheus at /probe with blackbox-style relabelling (targets become the `target`
/// parameter). Query parameters: duration (seconds), reverse, bidir, udp, bitrate (-b syntax),
/// parallel; the iperf3 exporter's port, period, reverse_mode and udp_mode work too. Each probe
/// must finish within the scrape timeout Prometheus sends, so the test length is clamped to
/// fit. /metrics has the exporter's own counters.
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
    #[arg(long, value_name = "SECS", default_value_t = 30.0)]
    pub timeout: f64,
    /// Seconds subtracted from Prometheus' scrape timeout, so the answer arrives in time.
    #[arg(long, value_name = "SECS", default_value_t = 0.5)]
    pub timeout_offset: f64,
}

fn secs(name: &str, v: f64) -> Result<Duration, Error> {
    Duration::try_from_secs_f64(v)
        .map_err(|_| Error::Address { addr: format!("--{name} {v}"), why: "not a number of seconds".into() })
}

/// Runs the exporter until the process is stopped.
pub fn run(a: &ExporterArgs) -> Result<(), Error> {
    let listener = bind(&a.listen)?;
    let local = listener.local_addr().map_err(Error::Listen)?;
    let state = ExporterState {
        limiter: Limiter::new(a.max_concurrent, a.per_target),
        health: Health::new(),
        timeouts: TimeoutPolicy { max: secs("timeout", a.timeout)?, offset: secs("timeout-offset", a.timeout_offset)? },
        defaults: SpecDefaults { port: a.default_port, duration: a.default_duration.max(1) },
    };
    eprintln!("wireperf exporter listening on http://{local} (/probe, /metrics)");
    serve_blocking(listener, router(Arc::new(state)))
}
