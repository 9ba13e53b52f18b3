//! `wireperf suite`: upload, download and bidir (and UDP) in one command, judged against what
//! the link can carry.
//!
//! The suite runs ordinary iperf3 tests through the engine (so it works against a wireperf or
//! a stock iperf3 server), finds the local interface that carried them, asks the doctor what
//! that link can carry (speed, duplex, MTU, USB bus, traffic shaping), and turns the numbers
//! into plain-language verdicts. Nothing here prints: the CLI renders [`SuiteResult`].
//!
//! # Layout
//! - [`phase`]: the phases, running one of them (engine or iperf 2 peer), and its figures
//!   read from the report's [`TestOutcome`](wireperf_protocol::TestOutcome).
//! - [`link`]: the interface toward the server, its doctor report, and the ceiling.
//! - [`verdict`]: pure rules from measured numbers and the ceiling to verdicts.
//! - [`disk`]: sequential write/read speed of a directory (`--path`), direct I/O.
//! - [`ends`]: this host against the server's shared one (MTU, line rates, duplex, buffers).
//! - [`run`]: the whole suite, with a progress callback.
//! - [`series`]: the suite repeated (`--repeat`, `--warmup`, `--confidence`) and its statistics.
//! - [`gates`]: `--expect-min`, `--expect-max-loaded-latency`, exit codes and JUnit XML.
//!
//! The watch around each phase and its verdicts are `wireperf-bottleneck`'s, the latency probes
//! `wireperf-latency`'s: the client's `--why` and `--latency` use the same crates.

#![forbid(unsafe_code)]

pub mod disk;
pub mod ends;
pub mod gates;
pub mod link;
pub mod phase;
pub mod run;
pub mod series;
pub mod verdict;

pub use phase::{Phase, PhaseResult};
pub use run::{Progress, SuiteConfig, SuiteResult, run_suite};
