//! Watching a test: what both hosts did while it ran, and what held the link back.
//!
//! The static readers (`read/`) say what a host *is*; this module says what it *did* during a
//! test, and names the bottleneck of each direction with the samples that show it.
//!
//! # Layout
//! - `parse.rs` — pure parsers: `/proc/stat`, `/proc/softirqs`, `/proc/interrupts`, MIB tables,
//!   `/proc/self/stat`.
//! - `sample.rs` — [`Sample`] (counters at one moment, read below a base path) and [`Series`].
//! - `facts.rs` — the static part of a series: line rate, USB cap, shaper, buffer sysctls.
//! - `threads.rs` — [`threads::ThreadTracker`]: the test's own threads' time on each CPU and
//!   their run-queue wait for it (a starved reader).
//! - `sampler.rs` — [`Watch`]: the background thread sampling at the interval rate, and new
//!   kernel log lines from `/dev/kmsg`.
//! - `cost.rs` — [`WatchCost`]: the CPU time the watch itself used, measured with `getrusage`.
//! - `series.rs` — deltas over a series (CPU shares, MIB/NIC counter changes, NET_RX split).
//! - `verdict.rs` — [`Verdict`], [`Limit`], the stable [`ids`], and the rules' inputs.
//! - `rules.rs` — [`diagnose`]: the pure rules.
//! - `path.rs` — `path-bottleneck`: the box between the hosts as the ceiling.
//! - `render.rs` — the verdict as text lines.

pub mod cost;
pub mod facts;
pub mod parse;
pub mod path;
pub mod render;
pub mod rules;
pub mod sample;
pub mod sampler;
pub mod series;
pub mod threads;
pub mod verdict;

#[cfg(test)]
mod rules_tests;

pub use cost::WatchCost;
pub use rules::{diagnose, retransmit_split};
pub use sample::{HostFacts, Sample, Series};
pub use sampler::{Watch, WatchConfig};
pub use verdict::{Direction, Hosts, Limit, RetransmitSplit, RoundTrips, Side, Verdict, ids};
