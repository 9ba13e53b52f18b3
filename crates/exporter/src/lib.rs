//! wireperf's Prometheus exporter.
//!
//! `wireperf exporter` answers Prometheus' scrapes of `/probe?target=…` by running one test
//! against a wireperf or stock iperf3 server (the blackbox-exporter pattern) and returning its
//! results, under wireperf's own metric names and under the iperf3 exporter's names so existing
//! dashboards keep working. `wireperf -s --metrics ADDR` serves the server's counters.
//!
//! # Layout
//! - [`params`]: `/probe` query → [`params::ProbeSpec`] (wireperf's and iperf3-exporter names).
//! - [`budget`]: the probe deadline from Prometheus' scrape-timeout header; test length clamping.
//! - [`limits`]: at most N probes at once, one at a time per target.
//! - [`probe`]: one probe: slot, engine client on a blocking thread (one test, or `repeat`
//!   tests back to back), deadline, interrupt.
//! - [`results`]: the numbers to publish: the engine's report as a [`wireperf_protocol::TestOutcome`].
//! - [`series`]: `repeat=N`'s tests per direction: mean, spread, 95 % confidence interval.
//! - [`failure`]: why a probe failed, as a fixed reason and a message.
//! - [`render`]: one probe → Prometheus text; [`render::METRICS`] documents every name.
//! - [`health`]: the exporter's own `/metrics`.
//! - [`http`]: the axum routes and the `current_thread` runtime serving them.
//! - [`server_metrics`]: `wireperf -s --metrics`: the server's counters and their endpoint.
//! - [`serve`]: `wireperf exporter` as a library call: [`ExporterConfig`] in, endpoints served
//!   (its flags are parsed in the `cli` crate). `log`: the one-line log.
//! - [`error`]: [`Error`], and binding listen addresses.

#![forbid(unsafe_code)]

pub mod budget;
pub mod error;
pub mod failure;
pub mod health;
pub mod http;
pub mod limits;
mod log;
pub mod params;
pub mod probe;
pub mod render;
pub mod results;
pub mod series;
pub mod serve;
pub mod server_metrics;

pub use error::Error;
pub use serve::{ExporterConfig, run};
pub use server_metrics::ServerMetrics;
