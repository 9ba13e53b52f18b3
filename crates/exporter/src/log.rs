//! The exporter's log: one line per failed probe or refused request, on stderr.
//!
//! This is the only module of the probe path that prints.

use crate::failure::Failure;
use crate::params::{ParamError, ProbeSpec};
use std::time::Duration;

/// A probe failed: target, reason, how long it took, and the message.
pub fn probe_failed(spec: &ProbeSpec, took: Duration, f: &Failure) {
    eprintln!(
        "wireperf exporter: probe of {}:{} failed after {:.2}s ({}): {}",
        spec.host,
        spec.port,
        took.as_secs_f64(),
        f.reason,
        f.message
    );
}

/// A `/probe` request could not be run.
pub fn bad_request(e: &ParamError) {
    eprintln!("wireperf exporter: bad /probe request: {e}");
}
