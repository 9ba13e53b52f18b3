//! `wireperf exporter` as a library call: a typed [`ExporterConfig`] in, the HTTP endpoints
//! served until the process stops. (Its flags are parsed in the `cli` crate.)

use crate::budget::TimeoutPolicy;
use crate::error::{Error, bind};
use crate::health::Health;
use crate::http::{ExporterState, router, serve_blocking};
use crate::limits::Limiter;
use crate::params::SpecDefaults;
use std::sync::Arc;
use std::time::Duration;
use wireperf_engine::EngineTuning;

/// How to serve `/probe` and `/metrics`.
#[derive(Debug, Clone)]
pub struct ExporterConfig {
    /// Address to serve HTTP on (`:PORT` for every address).
    pub listen: String,
    /// Probes running at once, at most.
    pub max_concurrent: usize,
    /// Probes against one target running at once, at most.
    pub per_target: usize,
    /// Server port when the target names none.
    pub default_port: u16,
    /// Test length when the probe names none, seconds (at least 1 is used).
    pub default_duration: u32,
    /// Longest a probe may take (also used when a scrape sends no timeout header).
    pub timeout: Duration,
    /// Subtracted from Prometheus' scrape timeout, so the answer arrives in time.
    pub timeout_offset: Duration,
    /// The engine's data-path settings for every probe's client (the cli fills it from the
    /// environment, as for `wireperf -c`).
    pub tuning: EngineTuning,
}

/// Runs the exporter until the process is stopped.
pub fn run(cfg: &ExporterConfig) -> Result<(), Error> {
    let listener = bind(&cfg.listen)?;
    let local = listener.local_addr().map_err(Error::Listen)?;
    let state = ExporterState {
        limiter: Limiter::new(cfg.max_concurrent, cfg.per_target),
        health: Health::new(),
        timeouts: TimeoutPolicy { max: cfg.timeout, offset: cfg.timeout_offset },
        defaults: SpecDefaults { port: cfg.default_port, duration: cfg.default_duration.max(1) },
        tuning: cfg.tuning,
    };
    eprintln!("wireperf exporter listening on http://{local} (/probe, /metrics)");
    serve_blocking(listener, router(Arc::new(state)))
}
