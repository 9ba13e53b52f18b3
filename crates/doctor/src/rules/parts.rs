//! What a rule is made of, shared by every rule file: the finding it raises (severity, fix,
//! actions), what it sees ([`Ctx`]), its [`Outcome`], and the helpers that build them. A leaf:
//! the rule files and `mod.rs` (the table of rules and [`super::evaluate`]) import it, it imports
//! none of them, so the rules and their table form no loop.

use serde::Serialize;

use crate::read::kernel_log::{EventKind, KernelEvent};
use crate::snapshot::{HostSnapshot, LinkSnapshot};

/// How bad a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// An explanation; nothing is wrong.
    Info,
    /// Costs throughput or stability.
    Warn,
    /// This is the bottleneck.
    Crit,
}

impl Severity {
    /// `crit`, `warn`, `info`.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warn => "warn",
            Severity::Crit => "crit",
        }
    }
}

/// A change `--apply` can make and `--undo` can revert.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Action {
    /// Write `value` to a sysfs/procfs file (path relative to the root, e.g.
    /// `sys/class/net/eth0/queues/rx-0/rps_cpus`).
    WriteFile {
        /// File relative to the root.
        path: String,
        /// New content.
        value: String,
    },
    /// Set the RX ring size with `ethtool -G IF rx N` (may reset the NIC: drops the link).
    SetRxRing {
        /// Interface.
        iface: String,
        /// New RX ring size.
        rx: u32,
    },
}

/// The fix for a finding: commands to run, how to verify, and whether it drops the link.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Fix {
    /// Shell commands, in order.
    pub commands: Vec<String>,
    /// How to check that the fix worked.
    pub verify: Vec<String>,
    /// True when running the commands takes the link down for a moment (⚠).
    pub drops_link: bool,
    /// Remarks (persistence, caveats).
    pub notes: Vec<String>,
}

/// One finding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// Stable id, e.g. `generic-usb-driver`.
    pub id: &'static str,
    /// Severity.
    pub severity: Severity,
    /// One sentence.
    pub summary: String,
    /// The facts that triggered it.
    pub evidence: Vec<String>,
    /// How to fix and verify.
    pub fix: Fix,
    /// The safe, reversible subset `--apply` performs.
    pub apply: Vec<Action>,
}

/// A rule that could not run for lack of data.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NotChecked {
    /// Rule id.
    pub id: &'static str,
    /// What data was missing.
    pub reason: String,
}

/// User-supplied context the rules cannot read from the system.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RuleOptions {
    /// Round-trip time to the peer, ms (enables `socket-buffers`).
    pub rtt_ms: Option<f64>,
    /// The MTU the user wants (makes `mtu-locked` a warning when the device cannot do it).
    pub want_mtu: Option<u32>,
}

/// What a rule concluded.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// The rule fired.
    Fired(Finding),
    /// Checked and fine, or not applicable to this interface.
    Passed,
    /// The data the rule needs is not reported.
    NotChecked(String),
}

/// What every rule sees.
#[derive(Debug, Clone, Copy)]
pub struct Ctx<'a> {
    /// The interface.
    pub link: &'a LinkSnapshot,
    /// The host.
    pub host: &'a HostSnapshot,
    /// User context.
    pub opts: &'a RuleOptions,
}

impl Ctx<'_> {
    /// Events of one kind for this interface.
    pub fn events(&self, pred: impl Fn(&EventKind) -> bool) -> Vec<&KernelEvent> {
        self.link.kernel_events.iter().filter(|e| pred(&e.kind)).collect()
    }

    /// True when the kernel log was read.
    pub fn log_available(&self) -> bool {
        self.host.kernel_log.available
    }
}

/// Shorthand for building a finding.
pub(super) fn finding(
    id: &'static str,
    severity: Severity,
    summary: impl Into<String>,
    evidence: Vec<String>,
    fix: Fix,
) -> Outcome {
    Outcome::Fired(Finding { id, severity, summary: summary.into(), evidence, fix, apply: Vec::new() })
}

/// Adds `--apply` actions to a fired outcome.
pub(super) fn with_apply(o: Outcome, actions: Vec<Action>) -> Outcome {
    match o {
        Outcome::Fired(mut f) => {
            f.apply = actions;
            Outcome::Fired(f)
        }
        other => other,
    }
}

/// Builds a `Fix` from string slices.
pub(super) fn fix(commands: &[String], verify: &[String], drops_link: bool, notes: &[&str]) -> Fix {
    Fix {
        commands: commands.to_vec(),
        verify: verify.to_vec(),
        drops_link,
        notes: notes.iter().map(|s| (*s).to_string()).collect(),
    }
}

/// Up to `n` sample log lines as evidence.
pub(super) fn sample_lines(events: &[&KernelEvent], n: usize) -> Vec<String> {
    events.iter().take(n).map(|e| format!("kernel log: {}", e.line)).collect()
}

/// Facts that show the link flapping: log down→up pairs or a high carrier-change count.
pub(super) fn flap_evidence(ctx: &Ctx) -> Vec<String> {
    /// Carrier changes since the netdev was created beyond which the link is called unstable;
    /// a healthy boot shows 1–4 (down at creation, up after autoneg).
    const FLAP_CARRIER_CHANGES: u64 = 20;
    let mut ev = Vec::new();
    let downs = ctx.events(|k| *k == EventKind::LinkDown);
    if !downs.is_empty() {
        ev.push(format!("{} link-down message(s) in the kernel log", downs.len()));
        ev.extend(sample_lines(&downs, 2));
    }
    if let Some(c) = ctx.link.carrier_changes.filter(|&c| c >= FLAP_CARRIER_CHANGES) {
        ev.push(format!("carrier_changes = {c} (≥ {FLAP_CARRIER_CHANGES})"));
    }
    ev
}

/// USB protocol error events (-71 etc.).
pub(super) fn usb_error_events<'a>(ctx: &Ctx<'a>) -> Vec<&'a KernelEvent> {
    ctx.link.kernel_events.iter().filter(|e| matches!(e.kind, EventKind::UsbProtocolError { .. })).collect()
}
