//! The data model: what goes in ([`NewRun`], [`NewPhase`]) and what comes out ([`RunSummary`],
//! [`RunDetail`], [`PhaseDetail`], [`IntervalRow`], [`StreamRow`]).
//!
//! A run is one thing the user did (`wireperf -c`, a suite, a selftest, an import); a phase is
//! one iperf3 test inside it with its own `-J` document. A client run has one phase, a suite
//! has one per test it ran (upload, download, bidir, udp). Keeping the full document per phase
//! means nothing is lost; the columns next to it exist so `list`, `compare` and charts do not
//! have to parse every document.

use std::fmt;
use std::str::FromStr;

use serde::{Serialize, Serializer};
use serde_json::Value;
use wireperf_protocol::TestOutcome;
use wireperf_protocol::schema::TestReport;

/// A run's id in the database (SQLite rowid; never reused after a delete).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(transparent)]
pub struct RunId(pub i64);

impl fmt::Display for RunId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl FromStr for RunId {
    type Err = std::num::ParseIntError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        s.trim().trim_start_matches('#').parse().map(RunId)
    }
}

/// What produced a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RunKind {
    /// `wireperf -c HOST`.
    Client,
    /// `wireperf suite HOST`.
    Suite,
    /// `wireperf selftest`.
    Selftest,
    /// `wireperf history import FILE` (a stock iperf3 `-J` file).
    Import,
}

impl RunKind {
    /// The name stored in the database and printed.
    pub fn as_str(self) -> &'static str {
        match self {
            RunKind::Client => "client",
            RunKind::Suite => "suite",
            RunKind::Selftest => "selftest",
            RunKind::Import => "import",
        }
    }

    /// Parses a stored name.
    pub fn parse(s: &str) -> Option<RunKind> {
        match s {
            "client" => Some(RunKind::Client),
            "suite" => Some(RunKind::Suite),
            "selftest" => Some(RunKind::Selftest),
            "import" => Some(RunKind::Import),
            _ => None,
        }
    }
}

impl fmt::Display for RunKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Which end wrote a document ([`Side::of`]), and which way data moved, seen from the client
/// (the stored `upload`/`download`/`bidir`): the outcome's own types, so history stores what
/// every other reader sees.
pub use wireperf_protocol::outcome::{Direction, Side};

/// One test of a run to be stored.
#[derive(Clone, Debug)]
pub struct NewPhase {
    /// `upload`, `download`, `bidir`, `udp`, ... (compare matches phases by this name).
    pub name: String,
    /// Which side wrote the report.
    pub side: Side,
    /// The typed `-J` document.
    pub report: TestReport,
    /// The document's text exactly as read (imports); `None` stores `report` serialized.
    pub document: Option<String>,
    /// What held each direction back (`--why`, suite, selftest): the verdicts as JSON.
    pub bottleneck: Option<Value>,
    /// Both hosts' per-CPU load over the phase, as JSON (the watch's samples, for charts).
    pub cpu_load: Option<Value>,
}

impl NewPhase {
    /// A phase from a report, with its side detected from the report.
    pub fn new(name: impl Into<String>, report: TestReport) -> NewPhase {
        let side = Side::of(&report);
        NewPhase { name: name.into(), side, report, document: None, bottleneck: None, cpu_load: None }
    }
}

/// A run to be stored: context plus one or more phases.
#[derive(Clone, Debug)]
pub struct NewRun {
    /// What produced it.
    pub kind: RunKind,
    /// Unix seconds; `None` takes the first phase's `start.timestamp`, else the current time.
    pub time_unix: Option<i64>,
    /// The command line as typed (`None` for imports).
    pub command_line: Option<String>,
    /// The test parameters as JSON; `None` stores the first phase's `start.test_start`.
    pub parameters: Option<Value>,
    /// The phases in the order they ran (at least one).
    pub phases: Vec<NewPhase>,
    /// The doctor's JSON document (or one interface object of it) taken with the run.
    pub doctor: Option<Value>,
    /// Findings that applied to the run (an array of finding objects with an `id`, or of ids).
    pub findings: Option<Value>,
    /// The suite's verdicts, as JSON.
    pub verdicts: Option<Value>,
    /// A free label.
    pub label: Option<String>,
    /// Where an imported run came from (the file name).
    pub source: Option<String>,
    /// A run-level error; `None` uses the first phase error, if any.
    pub error: Option<String>,
}

impl NewRun {
    /// An empty run of `kind`; add phases with [`NewRun::phase`].
    pub fn new(kind: RunKind, command_line: Option<String>) -> NewRun {
        NewRun {
            kind,
            time_unix: None,
            command_line,
            parameters: None,
            phases: Vec::new(),
            doctor: None,
            findings: None,
            verdicts: None,
            label: None,
            source: None,
            error: None,
        }
    }

    /// Adds a phase (builder style).
    pub fn phase(mut self, name: impl Into<String>, report: TestReport) -> NewRun {
        self.phases.push(NewPhase::new(name, report));
        self
    }

    /// A one-phase run named after what the report did ([`phase_name_for`]).
    pub fn single(kind: RunKind, command_line: Option<String>, report: TestReport) -> NewRun {
        let name = phase_name_for(&report);
        NewRun::new(kind, command_line).phase(name, report)
    }
}

/// The head of a repeat series to be stored with its rounds ([`crate::Store::insert_series`]).
#[derive(Clone, Debug)]
pub struct NewSeries {
    /// What produced it (`suite`, `client`).
    pub kind: RunKind,
    /// The command line as typed.
    pub command_line: Option<String>,
    /// A free label.
    pub label: Option<String>,
    /// Leading rounds left out of the statistics.
    pub warmup: usize,
    /// The statistics per direction over the counted rounds, as the producer computed them
    /// (JSON: read back and shown, never recomputed).
    pub statistics: Value,
    /// The `--confidence` outcome, if one was asked for.
    pub confidence: Option<Value>,
}

impl NewSeries {
    /// The head's `series` column for a series of `rounds` rounds, warm-ups included.
    pub(crate) fn document(&self, rounds: usize) -> Value {
        serde_json::json!({
            "rounds": rounds,
            "warmup": self.warmup,
            "statistics": self.statistics,
            "confidence": self.confidence,
        })
    }
}

/// The ids a stored series got.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SeriesIds {
    /// The head: the one run `history list` shows for the series.
    pub head: RunId,
    /// Its rounds in order, warm-ups included.
    pub rounds: Vec<RunId>,
}

/// The conventional phase name for a single test: its direction (`upload`, `download`,
/// `bidir`), prefixed `udp` for UDP (`udp` alone for a UDP upload, as the suite names it).
pub fn phase_name_for(report: &TestReport) -> String {
    let o = TestOutcome::from_report(report);
    match (o.is_udp(), o.direction) {
        (false, d) => d.as_str().to_string(),
        (true, Direction::Upload) => "udp".to_string(),
        (true, d) => format!("udp-{}", d.as_str()),
    }
}

/// The headline numbers of one phase, or of a run (summed over its phases).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Figures {
    /// `TCP`, `UDP` (a run of several protocols: `TCP+UDP`).
    pub protocol: Option<String>,
    /// `upload`, `download`, `bidir` (a run of several: `upload+download+bidir`).
    pub direction: Option<String>,
    /// Measured seconds (the requested `-t` when nothing was measured).
    pub duration: Option<f64>,
    /// Bytes the senders sent (both directions for bidir).
    pub sent_bytes: Option<u64>,
    /// Senders' rate, bit/s.
    pub sent_bps: Option<f64>,
    /// Bytes the receivers received: the goodput (both directions for bidir).
    pub received_bytes: Option<u64>,
    /// Receivers' rate, bit/s.
    pub received_bps: Option<f64>,
    /// TCP retransmits (sender side).
    pub retransmits: Option<u64>,
    /// Local CPU use, percent.
    pub cpu_host: Option<f64>,
    /// Remote CPU use, percent.
    pub cpu_remote: Option<f64>,
    /// The error, when the test failed.
    pub error: Option<String>,
}

/// One line of `history list`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RunSummary {
    /// Id for `show`, `compare`, `export`, `delete`.
    pub id: RunId,
    /// Unix seconds.
    pub time_unix: i64,
    /// The same as RFC 3339 UTC text.
    pub time: String,
    /// What produced the run.
    pub kind: RunKind,
    /// Local address of the first data connection.
    pub local_host: Option<String>,
    /// The server (client runs) or the client (server-side imports).
    pub remote_host: Option<String>,
    /// Its port.
    pub remote_port: Option<u16>,
    /// Phase names in order.
    pub phases: Vec<String>,
    /// Headline numbers.
    #[serde(flatten)]
    pub figures: Figures,
    /// The label.
    pub label: Option<String>,
    /// A series' head: `{"rounds", "warmup", "statistics", "confidence"}` as stored.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub series: Option<Value>,
    /// A round of a series: the head's id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub series_of: Option<RunId>,
    /// A round of a series: its place, 1 = the first (warm-ups included).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub series_round: Option<i64>,
}

impl RunSummary {
    /// Leading rounds of this series head left out of its statistics (0 when not a head).
    pub fn series_warmup(&self) -> i64 {
        self.series.as_ref().and_then(|s| s["warmup"].as_i64()).unwrap_or(0)
    }
}

/// Per-phase numbers and series.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PhaseDetail {
    /// Position in the run, from 0.
    pub seq: u32,
    /// Phase name.
    pub name: String,
    /// Which side wrote the document.
    pub side: Side,
    /// Streams per direction.
    pub num_streams: Option<u32>,
    /// Headline numbers.
    #[serde(flatten)]
    pub figures: Figures,
    /// Goodput client → server, bit/s (None when no data went that way).
    pub upload_bps: Option<f64>,
    /// Goodput server → client, bit/s.
    pub download_bps: Option<f64>,
    /// UDP: jitter, ms.
    pub jitter_ms: Option<f64>,
    /// UDP: lost datagrams.
    pub lost_packets: Option<i64>,
    /// UDP: datagrams.
    pub packets: Option<i64>,
    /// UDP: loss, percent.
    pub lost_percent: Option<f64>,
    /// Interval series: sums (`stream` = None) and per-stream rows.
    pub intervals: Vec<IntervalRow>,
    /// Per-stream totals.
    pub streams: Vec<StreamRow>,
    /// The full `-J` document as stored.
    #[serde(rename = "report", serialize_with = "as_json_value")]
    pub document: String,
    /// The bottleneck verdicts of the phase, when it was watched.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bottleneck: Option<Value>,
    /// Both hosts' per-CPU load over the phase, when it was watched.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_load: Option<Value>,
}

impl PhaseDetail {
    /// The stored document as the typed report.
    pub fn report(&self) -> Result<TestReport, serde_json::Error> {
        TestReport::from_json_str(&self.document)
    }

    /// The sum rows of one direction, in interval order.
    pub fn sum_series(&self, direction: Direction) -> impl Iterator<Item = &IntervalRow> {
        self.intervals.iter().filter(move |r| r.stream.is_none() && r.direction == Some(direction))
    }

    /// The rows of one stream, in interval order.
    pub fn stream_series(&self, stream: i32) -> impl Iterator<Item = &IntervalRow> {
        self.intervals.iter().filter(move |r| r.stream == Some(stream))
    }
}

fn as_json_value<S: Serializer>(text: &str, s: S) -> Result<S::Ok, S::Error> {
    // Stored documents were validated on the way in; a bad one is still exported, as a string.
    match serde_json::from_str::<Value>(text) {
        Ok(v) => v.serialize(s),
        Err(_) => s.serialize_str(text),
    }
}

/// One interval of one stream, or the sum of one direction (`stream` = None).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct IntervalRow {
    /// Interval number, from 0.
    pub index: u32,
    /// Stream id; None for the sum over the direction's streams.
    pub stream: Option<i32>,
    /// Upload or download (client's view).
    pub direction: Option<Direction>,
    /// Seconds since the start.
    pub start: f64,
    /// End of the interval.
    pub end: f64,
    /// Bytes in the interval.
    pub bytes: u64,
    /// Rate in the interval.
    pub bits_per_second: f64,
    /// TCP sender: retransmits in the interval.
    pub retransmits: Option<u64>,
    /// TCP sender: congestion window, bytes (sums: total over the streams).
    pub cwnd: Option<u64>,
    /// TCP sender: smoothed RTT, µs (sums: mean over the streams).
    pub rtt: Option<u64>,
    /// UDP receiver: jitter, ms.
    pub jitter_ms: Option<f64>,
    /// UDP receiver: lost datagrams.
    pub lost_packets: Option<i64>,
    /// UDP: datagrams.
    pub packets: Option<i64>,
    /// Inside the `-O` omit period.
    pub omitted: bool,
}

/// Totals of one stream.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct StreamRow {
    /// Stream id.
    pub stream: i32,
    /// Upload or download (client's view).
    pub direction: Option<Direction>,
    /// Sender's bytes.
    pub sent_bytes: Option<u64>,
    /// Sender's rate.
    pub sent_bps: Option<f64>,
    /// Receiver's bytes.
    pub received_bytes: Option<u64>,
    /// Receiver's rate.
    pub received_bps: Option<f64>,
    /// TCP retransmits.
    pub retransmits: Option<u64>,
    /// TCP: largest congestion window, bytes.
    pub max_cwnd: Option<u64>,
    /// TCP: largest RTT, µs.
    pub max_rtt: Option<u64>,
    /// TCP: smallest RTT, µs.
    pub min_rtt: Option<u64>,
    /// TCP: mean RTT, µs.
    pub mean_rtt: Option<u64>,
    /// UDP: jitter, ms.
    pub jitter_ms: Option<f64>,
    /// UDP: lost datagrams.
    pub lost_packets: Option<i64>,
    /// UDP: datagrams.
    pub packets: Option<i64>,
    /// UDP: loss, percent.
    pub lost_percent: Option<f64>,
}

/// Everything stored about a run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RunDetail {
    /// The list line.
    #[serde(flatten)]
    pub summary: RunSummary,
    /// Command line as typed.
    pub command_line: Option<String>,
    /// Test parameters.
    pub parameters: Value,
    /// Where an import came from.
    pub source: Option<String>,
    /// wireperf version that stored the run.
    pub wireperf_version: String,
    /// Doctor document taken with the run.
    pub doctor: Option<Value>,
    /// Findings that applied.
    pub findings: Option<Value>,
    /// Verdicts.
    pub verdicts: Option<Value>,
    /// The phases in order (none for a series' head).
    pub phase_details: Vec<PhaseDetail>,
    /// A series' head: its rounds in order, warm-ups included.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub members: Vec<RunId>,
}

impl RunDetail {
    /// The phase with this name.
    pub fn phase(&self, name: &str) -> Option<&PhaseDetail> {
        self.phase_details.iter().find(|p| p.name == name)
    }
}

/// Which runs `list` returns.
#[derive(Clone, Debug, Default)]
pub struct ListFilter {
    /// Only runs of this kind.
    pub kind: Option<RunKind>,
    /// Only runs against this remote host (exact text).
    pub remote_host: Option<String>,
    /// Only runs with this label.
    pub label: Option<String>,
    /// Only runs at or after this unix time.
    pub since_unix: Option<i64>,
    /// Only the newest N (still returned oldest first).
    pub limit: Option<u32>,
    /// Also the rounds of series (by default a series is listed once, as its head).
    pub members: bool,
}
