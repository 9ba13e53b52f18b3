//! Latency under load: how much longer a round trip takes while a test fills the path.
//!
//! A throughput test answers "how fast"; this crate answers "how laggy while it is fast". It
//! sends small round-trip probes on a flow of their own beside the test's streams (never
//! queued behind the test's bytes in one socket), before the load (idle) and during each
//! loaded phase, and reduces them to a few figures: idle and loaded percentiles, the latency
//! the load added, the probes' jitter and loss, responsiveness in round trips per minute (RPM)
//! and a grade from A to F.
//!
//! # Layout
//! - [`sample`]: one probe's outcome (when, in which phase, its round trip or lost) and the
//!   phases a test has.
//! - [`percentile`]: nearest-rank percentiles and the trimmed mean, on plain `f64` slices.
//! - [`rpm`]: responsiveness as the IETF IPPM draft "Responsiveness under Working Conditions"
//!   computes it, from foreign (separate-flow) and self (load-flow) round trips.
//! - [`grade`]: the A–F grade from the added latency, with its thresholds.
//! - [`summary`]: the figures of one test from its probes (pure), and their JSON shape.
//! - [`advice`]: where the queue is (this host's qdisc backlog or beyond) and the fix, when
//!   the grade is bad.
//! - [`direction`]: the added latency split into client → server and server → client from
//!   echo replies' server timestamps (which queue filled, also inside `--bidir`).
//! - [`echo_wire`]: the echo extension's offer, probe and reply codecs and the server's rate
//!   budget, sans I/O.
//! - [`prober`]: I/O: a thread that times TCP connects to the server's port at a steady rate
//!   and records each probe with its timestamp (works against any server).
//! - [`echo_prober`]: I/O: UDP echo and TCP request/response probes to a wireperf server's
//!   echo, on the same prober handle.
//! - [`echo`]: I/O, server side: the bounded UDP echo and TCP request/response service of one
//!   test.
//! - [`engine_probe`]: the probes wired to a test: [`engine_probe::LatencyProbe`], the
//!   engine observer beside the client (`-c --latency`, the suite, the exporter's
//!   `/probe?latency=1`), and its [`engine_probe::LatencyConfig`].
//! - [`engine_echo`]: the server's side of them: [`engine_echo::ServerEcho`], the observer that
//!   offers the echo to a client that asks, for the length of its test.
//!
//! Everything but [`prober`], [`echo_prober`], [`echo`] and the two `engine_` observers is pure: fixed sample sets in, figures out, so the figures are
//! tested without a network.

pub mod advice;
pub mod direction;
pub mod echo;
pub mod echo_prober;
pub mod echo_wire;
pub mod engine_echo;
pub mod engine_probe;
pub mod grade;
pub mod percentile;
pub mod prober;
pub mod rpm;
pub mod sample;
pub mod summary;

pub use grade::Grade;
pub use sample::{Method, Phase, Probe};
pub use summary::{LatencySummary, Percentiles};
