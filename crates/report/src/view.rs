//! What a report is drawn from: runs as plain values.
//!
//! These types are deliberately independent of the history store: the store (or a test, or
//! an iperf3 `-J` file) fills them in, and either side can change its own types without the
//! other noticing. Verdicts and doctor findings are kept as JSON for the same reason; the
//! renderer reads the fields it knows and shows the rest as they are.

use wireperf_protocol::schema::TestReport;

/// Everything one report shows: one run, or several to compare (first is the baseline).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ReportInput {
    /// Runs in the order the user named them.
    pub runs: Vec<RunView>,
}

/// One stored run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunView {
    /// The history id (`wireperf history` lists them).
    pub id: String,
    /// What kind of run, or the user's note: `suite 192.0.2.7`, `selftest`, `client`.
    pub label: String,
    /// When it ran, as the store prints it (UTC).
    pub time: String,
    /// The host that ran it (and the peer, if the store knows it).
    pub host: String,
    /// The phases in the order they ran: (`upload`, report), (`download`, report)…
    pub phases: Vec<(String, TestReport)>,
    /// The suite's verdicts, as stored (any JSON; see `html::notes` for what is read).
    pub verdicts: Option<serde_json::Value>,
    /// The doctor's findings for the interface that carried the traffic: a list of findings,
    /// an object with `findings`, or a whole `wireperf doctor --json` document.
    pub findings: Option<serde_json::Value>,
    /// What the bottleneck watch saw in each watched phase (empty: none was watched).
    pub watch: Vec<PhaseWatch>,
}

/// One phase's bottleneck watch, as stored: the verdicts and both hosts' per-CPU load.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PhaseWatch {
    /// The phase's name (as in [`RunView::phases`]).
    pub phase: String,
    /// The verdicts, one per direction (any JSON list; see `html::notes`).
    pub bottleneck: Option<serde_json::Value>,
    /// `{"client": {"t": [...], "cpus": [[busy %...], ...], "softirq": [...]}, "server": ...}`.
    pub cpu_load: Option<serde_json::Value>,
}

impl RunView {
    /// The report of the first phase called `name`.
    pub fn phase(&self, name: &str) -> Option<&TestReport> {
        self.phases.iter().find(|(n, _)| n == name).map(|(_, r)| r)
    }

    /// The watch of the phase called `name`, when it was watched.
    pub fn watch_of(&self, name: &str) -> Option<&PhaseWatch> {
        self.watch.iter().find(|w| w.phase == name)
    }

    /// `run 12` or `run 12 · selftest`.
    pub fn display_name(&self) -> String {
        if self.label.is_empty() { format!("run {}", self.id) } else { format!("run {} · {}", self.id, self.label) }
    }
}
