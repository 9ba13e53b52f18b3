//! The words of the fix loop: which host a step changes, which direction it should lift, the
//! step as planned, and what became of it.

use serde::Serialize;
use wireperf_doctor::rules::Action;

/// Where a step's change is made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Host {
    /// This host (the client's).
    Client,
    /// The server's host, through the fix channel.
    Server,
    /// Between them (a router's shaper, a cable): only by hand.
    Path,
}

impl Host {
    /// The name printed: `client`, `server`, `path`.
    pub fn name(self) -> &'static str {
        match self {
            Host::Client => "client",
            Host::Server => "server",
            Host::Path => "path",
        }
    }
}

/// A direction of the test, as the suite's statistics name them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// Client → server.
    Upload,
    /// Server → client.
    Download,
}

impl Direction {
    /// The suite's name (`upload`, `download`).
    pub fn name(self) -> &'static str {
        match self {
            Direction::Upload => "upload",
            Direction::Download => "download",
        }
    }

    /// The direction of a bottleneck verdict's `client→server` / `server→client` label.
    pub fn of_verdict_label(label: &str) -> Direction {
        if label.starts_with("server") { Direction::Download } else { Direction::Upload }
    }

    /// The direction in which `host` receives (its receive path: RPS, receive buffers).
    pub fn received_by(host: Host) -> Direction {
        if host == Host::Server { Direction::Upload } else { Direction::Download }
    }

    /// The direction in which `host` sends (its send path: txqueuelen, send buffers).
    pub fn sent_by(host: Host) -> Direction {
        if host == Host::Server { Direction::Download } else { Direction::Upload }
    }
}

/// How a step is carried out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum How {
    /// The doctor's actions on this host.
    Local {
        /// The interface the finding is about (journaled with the change).
        iface: String,
        /// What to write.
        actions: Vec<Action>,
    },
    /// The server applies its own fix for the step's cause.
    Remote {
        /// For a buffer: the bytes in flight measured (rate × round trip).
        need_bytes: Option<u64>,
    },
    /// wireperf cannot make it (a driver, a cable, a router): the user does, and the loop
    /// measures again.
    ByHand,
}

/// One step of the plan.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlannedStep {
    /// Where the change is made.
    pub host: Host,
    /// The finding or bottleneck cause it fixes (`receiver-window`, `rps-off`, ...).
    pub cause: String,
    /// The change, old → new, when known before it is made.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub change: Option<String>,
    /// The commands that make it on that host (what a user runs when the loop cannot).
    pub commands: Vec<String>,
    /// How to make it permanent there.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub persist: Vec<String>,
    /// Why: the verdict or finding and its evidence.
    pub why: String,
    /// The directions it should lift.
    pub targets: Vec<Direction>,
    /// The ordering key: how strongly the verdicts point at it (not shown).
    #[serde(skip)]
    pub gain: f64,
    /// `apply` (wireperf makes the change) or `by-hand`.
    pub kind: &'static str,
    /// How it is carried out.
    #[serde(skip)]
    pub how: How,
}

impl PlannedStep {
    /// A step wireperf can make itself.
    pub fn appliable(&self) -> bool {
        !matches!(self.how, How::ByHand)
    }
}

/// What became of a step.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "status", content = "reason")]
pub enum StepStatus {
    /// Applied, proven, kept.
    Kept,
    /// Applied, not proven (or something regressed), and restored.
    Undone(String),
    /// Not applied: the user said no.
    Declined,
    /// Not applied, and why (not root there, the server refused, no `--allow-fix`).
    NotApplied(String),
    /// A step by hand the loop could not wait for (no terminal, `--yes`): listed only.
    Listed,
    /// The user made the change by hand and the loop measured it: keep it.
    KeepByHand,
    /// The user made the change by hand and it did not help: revert it by hand.
    RevertByHand(String),
    /// `--fix=plan`: nothing was changed.
    Planned,
    /// Left out by `--fix-only`.
    NotSelected,
    /// The loop was interrupted before or while this step was proven; a change made was
    /// restored.
    Interrupted,
}
