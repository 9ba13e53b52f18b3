//! iperf3's `-J` output document as typed structs.
//!
//! Field order is declaration order, which is the order iperf3 3.12 prints; keys iperf3 prints
//! only in some modes are `Option`s skipped when `None`. The same structs are what the engine
//! produces, what the text renderer prints from, what history stores and what `history import`
//! reads back from a stock iperf3 `-J` file, so a number is computed once.
//!
//! wireperf-only figures are extra keys; every key iperf3 3.12 prints keeps its meaning.

mod end;
mod interval;
mod start;

pub use end::{CpuUtilization, DiskFile, DropUnit, End, EndStream, StreamCpu, StreamIo, Summary};
pub use interval::{Interval, IntervalStream, IntervalSum};
pub use start::{Connected, HostPort, Start, TestStart, Timestamp};

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A whole `-J` document for one test.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TestReport {
    /// What was set up.
    pub start: Start,
    /// One entry per reporting interval.
    pub intervals: Vec<Interval>,
    /// Totals.
    pub end: End,
    /// Set when the test failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// `-T` title.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// `--extra-data`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub extra_data: Option<String>,
    /// The server's `-J` document (`--get-server-output` against a `-J` server).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_output_json: Option<Value>,
    /// The server's text output (`--get-server-output` against a text-mode server).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_output_text: Option<String>,
    /// wireperf extension (`--latency`): round trips idle and under this test's load, and
    /// the figures from them (the `wireperf_latency` crate's summary, with every probe). A
    /// stock iperf3 reading the document ignores the key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wireperf_latency: Option<Value>,
}

/// The `-J` key of the latency extension.
pub const LATENCY_KEY: &str = "wireperf_latency";

impl TestReport {
    /// Parses a `-J` document as iperf3 wrote it.
    ///
    /// Goes through a `Value` first: iperf3 3.12/3.13 repeat `sock_bufsize`, `sndbuf_actual`
    /// and `rcvbuf_actual` once per stream in `start` (fixed in 3.14); a `Value` keeps the last
    /// of duplicate keys, where a direct struct parse would reject the document.
    pub fn from_json_str(text: &str) -> Result<Self, serde_json::Error> {
        serde_json::from_str::<Value>(text).and_then(serde_json::from_value)
    }
}
