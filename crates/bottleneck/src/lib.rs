//! The bottleneck finder (`--why`, the suite, selftest): what both hosts did while a test ran,
//! and what held each direction back.
//!
//! The doctor's static readers say what a host *is*; this crate says what it *did* during a
//! test, and names the bottleneck of each direction with the samples that show it. It reads
//! the doctor's snapshot facts (line rate, USB bus, shaper, sysctls) and its shared host
//! findings, so it depends on `wireperf-doctor`; the doctor knows nothing of it. It wires the
//! watch to the engine's observer (both roles), so the client's `-c --why`, the server, the
//! suite and selftest all use this one crate.
//!
//! # Layout
//! - `parse.rs` — pure parsers: `/proc/stat`, `/proc/softirqs`, `/proc/interrupts`, MIB tables,
//!   `/proc/self/stat`.
//! - `cost.rs` — [`WatchCost`]: the CPU time the watch itself used, measured with `getrusage`.
//! - `host_sample.rs` — [`Sample`] (counters at one moment, read below a base path) and [`Series`].
//! - `facts.rs` — the static part of a series: line rate, USB cap, shaper, buffer sysctls.
//! - `threads.rs` — [`threads::ThreadTracker`]: the test's own threads' time on each CPU and
//!   their run-queue wait for it (a starved reader).
//! - `sampler.rs` — [`Watch`]: the background thread sampling at the interval rate, and new
//!   kernel log lines from `/dev/kmsg`.
//! - `deltas.rs` — deltas over a series (CPU shares, MIB/NIC counter changes, NET_RX split).
//! - `diagnosis.rs` — [`Verdict`], [`Limit`], the stable [`ids`], the rules' inputs, and the
//!   small helpers every rule builds its limits with.
//! - `buffer_rules.rs` — `receiver-window` and `sender-buffer`, with the doctor's buffer remedies.
//! - `path_rule.rs` — `path-bottleneck`: the box between the hosts as the ceiling.
//! - `live_rules.rs` — [`diagnose`]: the pure rules over a test's series (the doctor's
//!   `rules/` are the static ones over a snapshot).
//! - `verdict_text.rs` — the verdict as text lines.
//! - `engine_watch.rs` — the watch wired to a test: [`engine_watch::PeerWatch`] beside the
//!   client's engine, [`engine_watch::ServerWatch`] on the server (the far host's reply,
//!   [`engine_watch::WatchReply`]), and the per-direction figures read from the report.
//! - `why_output.rs` — the client's `--why` output: the verdicts and what the watch cost
//!   each host, as text below iperf3's summary or under `-J`'s `wireperf` key.

#![forbid(unsafe_code)]

mod buffer_rules;
pub mod cost;
pub mod deltas;
pub mod diagnosis;
pub mod engine_watch;
pub mod facts;
pub mod host_sample;
pub mod live_rules;
pub mod parse;
pub mod path_rule;
pub mod sampler;
pub mod threads;
pub mod verdict_text;
pub mod why_output;

#[cfg(test)]
mod buffer_rules_tests;
#[cfg(test)]
mod live_rules_tests;

pub use cost::WatchCost;
pub use diagnosis::{Direction, Hosts, Limit, RetransmitSplit, RoundTrips, Side, Verdict, ids};
pub use host_sample::{HostFacts, Sample, Series};
pub use live_rules::{diagnose, retransmit_split};
pub use sampler::{Watch, WatchConfig};
