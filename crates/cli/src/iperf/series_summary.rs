//! What a finished client series (`-c HOST --repeat N`, [`crate::iperf::series`]) left: its
//! statistics and how it ended. Read by the series' text (`series_text.rs`) and its -J
//! document; a type of its own so the text does not depend on the runner that made it.

use wireperf_suite::series::{ConfidenceOutcome, DirectionStats};

/// Why a series ended before its cap or its confidence target.
#[derive(Clone, Debug, PartialEq)]
pub enum Stopped {
    /// Test N (from 1) failed.
    Failed(usize),
    /// Ctrl-C (or SIGTERM/SIGHUP) interrupted test N, or came between two tests (N: the
    /// tests run).
    Interrupted(usize),
}

/// A series run: its statistics and how it ended, for the text and the JSON.
#[derive(Clone, Debug)]
pub struct Series {
    /// Leading tests left out of the statistics.
    pub warmup: usize,
    /// Counted tests that completed.
    pub counted: usize,
    /// Per direction over the counted tests; empty when a stopped series has fewer than two.
    pub statistics: Vec<DirectionStats>,
    /// The confidence target's outcome (`--confidence`).
    pub confidence: Option<ConfidenceOutcome>,
    /// Why it ended early.
    pub stopped: Option<Stopped>,
    /// The history ids of the tests, in order.
    pub saved: Vec<i64>,
    /// The series' own history id (its head, which `history list` shows), once its tests
    /// are grouped.
    pub saved_series: Option<i64>,
}
