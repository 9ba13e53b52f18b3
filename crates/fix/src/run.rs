//! The loop: baseline, plan, then for each step consent, apply, prove, keep or undo.
//!
//! Each step is measured against the series before it (the baseline, or the series of the
//! last step kept), with the same phases and rounds, so every decision compares like with
//! like. An interrupt (the caller's flag, set by SIGINT/SIGTERM) ends the series it falls in;
//! the step being proven is then restored and no further step starts.

use crate::local::LocalHost;
use crate::plan::{self, LocalFacts};
use crate::prove::{self, Decision, FigureChange, Proof};
use crate::remote::{FixChannel, RemoteError};
use crate::step::{Host, How, PlannedStep, StepStatus};
use serde::Serialize;
use std::sync::atomic::{AtomicBool, Ordering};
use wireperf_doctor::journal::Entry;
use wireperf_protocol::fix_wire::{FixAnswer, FixRequest};
use wireperf_suite::series::{DirectionStats, RepeatConfig, SeriesResult, run_series};
use wireperf_suite::{Progress, SuiteConfig};

/// `--fix` (apply with consent) or `--fix=plan` (change nothing).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FixMode {
    /// Print the plan; change nothing on either host.
    Plan,
    /// Apply each step with consent, prove it, keep or undo it.
    Apply,
}

/// What the loop runs.
#[derive(Debug, Clone)]
pub struct FixConfig {
    /// The suite of each series (server, phases' length, streams, latency).
    pub suite: SuiteConfig,
    /// Rounds of each series (the baseline's and every step's).
    pub repeat: RepeatConfig,
    /// Confidence level of the decisions, percent.
    pub level: f64,
    /// Plan only, or apply.
    pub mode: FixMode,
    /// This host's changes and their journal.
    pub local: LocalHost,
    /// The token for a server that authenticates its clients.
    pub authtoken: Option<String>,
    /// `--fix-only`: apply only steps for these causes (empty: every step).
    pub only: Vec<String>,
}

/// A user's answer to "apply this step?".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Approval {
    /// This one.
    Yes,
    /// This one and every one after it.
    All,
    /// Not this one.
    No,
    /// None of the rest.
    Quit,
}

/// How the loop asks the user (a terminal prompt; `--yes` for scripts).
pub trait Consent {
    /// Apply step `n` (1-based)?
    fn approve(&mut self, n: usize, step: &PlannedStep) -> Approval;
    /// A step by hand: `Some(true)` once the user made the change (measure it), `Some(false)`
    /// to skip it, `None` when nobody can be asked (no terminal): it is listed only.
    fn by_hand(&mut self, n: usize, step: &PlannedStep) -> Option<bool>;
}

/// The fix channel as the loop found it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "state", content = "reason")]
pub enum FarStatus {
    /// No step of the plan is the server's to apply.
    NotNeeded,
    /// `--fix=plan`: not opened.
    NotOpened,
    /// Open, and the server runs as root.
    Open,
    /// Open, but the server cannot change its host (not root).
    NotRoot,
    /// The server refused, or does not speak it: why.
    Unavailable(String),
}

/// One step and what became of it.
#[derive(Debug, Clone, Serialize)]
pub struct StepRecord {
    /// 1-based, in plan order.
    pub n: usize,
    /// The step.
    pub step: PlannedStep,
    /// What became of it.
    pub status: StepStatus,
    /// What changed, old → new (as the host that changed reported it).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub changes: Vec<String>,
    /// What its undo restored, new → old.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub restored: Vec<String>,
    /// How to make a kept step permanent on its host.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub persist: Vec<String>,
    /// The comparison with the series before it, when it was measured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub proof: Option<Proof>,
    /// The series measured after it.
    #[serde(skip)]
    pub after: Option<SeriesResult>,
}

/// Everything the loop did: read by the text, the JSON and the history.
#[derive(Debug, Clone, Serialize)]
pub struct FixOutcome {
    /// Plan only, or applied.
    pub mode: FixMode,
    /// The server.
    pub server: String,
    /// Rounds per series.
    pub rounds: usize,
    /// Confidence level, percent.
    pub level: f64,
    /// The baseline's statistics per phase and direction.
    pub baseline: Vec<DirectionStats>,
    /// The plan, in order.
    pub plan: Vec<PlannedStep>,
    /// The fix channel to the server.
    pub far: FarStatus,
    /// This process may change this host (root).
    pub local_can_apply: bool,
    /// Each step, in order.
    pub steps: Vec<StepRecord>,
    /// Baseline → final (the series after the last kept step), per figure.
    pub summary: Vec<FigureChange>,
    /// The loop was interrupted.
    pub interrupted: bool,
    /// The baseline series itself (for the history).
    #[serde(skip)]
    pub baseline_series: SeriesResult,
}

impl FixOutcome {
    /// Steps kept (by wireperf or by hand).
    pub fn kept(&self) -> impl Iterator<Item = &StepRecord> {
        self.steps.iter().filter(|s| matches!(s.status, StepStatus::Kept | StepStatus::KeepByHand))
    }
}

/// This host's facts for the plan: its buffer sysctls, and its doctor with the round trip the
/// baseline measured (so the socket-buffer rule is checked without `--rtt`).
pub fn local_facts(baseline: &SeriesResult) -> LocalFacts {
    let iface = baseline.rounds.iter().find_map(|r| r.link.iface.clone());
    let rtt_ms = plan::upload_rtt_s(baseline).map(|s| s * 1000.0);
    let findings = iface
        .as_ref()
        .and_then(|i| {
            let opts = wireperf_doctor::InspectOptions {
                interfaces: vec![i.clone()],
                rules: wireperf_doctor::RuleOptions { rtt_ms, ..Default::default() },
                ..Default::default()
            };
            wireperf_doctor::inspect(&opts).ok()
        })
        .map(|r| r.interfaces.into_iter().flat_map(|i| i.findings).collect())
        .unwrap_or_default();
    LocalFacts {
        iface,
        tcp_rmem: crate::local::sysctl_triple("net.ipv4.tcp_rmem"),
        tcp_wmem: crate::local::sysctl_triple("net.ipv4.tcp_wmem"),
        findings,
    }
}

/// Runs the loop.
pub fn run_fix(
    cfg: &FixConfig,
    consent: &mut dyn Consent,
    progress: &mut dyn Progress,
    interrupt: &AtomicBool,
) -> FixOutcome {
    progress.note(&format!("baseline: {} rounds", cfg.repeat.rounds));
    let baseline = run_series(&cfg.suite, &cfg.repeat, progress, interrupt);
    let plan = plan::plan(&baseline, &local_facts(&baseline));
    let mut out = FixOutcome {
        mode: cfg.mode,
        server: cfg.suite.base.host.clone(),
        rounds: cfg.repeat.rounds,
        level: cfg.level,
        baseline: baseline.statistics.clone(),
        plan: plan.clone(),
        far: FarStatus::NotNeeded,
        local_can_apply: cfg.local.can_apply(),
        steps: Vec::new(),
        summary: Vec::new(),
        interrupted: baseline.interrupted,
        baseline_series: baseline,
    };
    if cfg.mode == FixMode::Plan || out.interrupted {
        out.far = FarStatus::NotOpened;
        let status = if out.interrupted { StepStatus::Interrupted } else { StepStatus::Planned };
        out.steps = plan.into_iter().enumerate().map(|(i, step)| record(i + 1, step, status.clone())).collect();
        return out;
    }
    let mut channel = None;
    let selected = |s: &PlannedStep| cfg.only.is_empty() || cfg.only.contains(&s.cause);
    if plan.iter().any(|s| matches!(s.how, How::Remote { .. }) && selected(s)) {
        match FixChannel::open(&cfg.suite.base.host, cfg.suite.base.port, cfg.authtoken.clone()) {
            Ok(ch) => {
                out.far = if ch.server_is_root { FarStatus::Open } else { FarStatus::NotRoot };
                channel = Some(ch);
            }
            Err(e @ (RemoteError::NotWireperf | RemoteError::Refused(_))) => {
                out.far = FarStatus::Unavailable(e.to_string())
            }
            Err(e) => out.far = FarStatus::Unavailable(e.to_string()),
        }
    }
    let mut current = out.baseline_series.clone();
    let mut all = false;
    let mut quit = false;
    for (i, step) in plan.into_iter().enumerate() {
        let n = i + 1;
        if !cfg.only.is_empty() && !cfg.only.contains(&step.cause) {
            out.steps.push(record(n, step, StepStatus::NotSelected));
            continue;
        }
        if interrupt.load(Ordering::Relaxed) || quit {
            out.interrupted |= interrupt.load(Ordering::Relaxed);
            let status = if quit { StepStatus::Declined } else { StepStatus::Interrupted };
            out.steps.push(record(n, step, status));
            continue;
        }
        let mut ctx =
            StepCtx { cfg, progress: &mut *progress, interrupt, current: &current, channel: channel.as_mut() };
        let rec = match step.how {
            How::ByHand => ctx.by_hand(n, step, consent),
            _ => {
                let approval = if all { Approval::All } else { ctx.ask(n, &step, consent) };
                match approval {
                    Approval::No => record(n, step, StepStatus::Declined),
                    Approval::Quit => {
                        quit = true;
                        record(n, step, StepStatus::Declined)
                    }
                    Approval::Yes | Approval::All => {
                        all |= approval == Approval::All;
                        ctx.apply_and_prove(n, step)
                    }
                }
            }
        };
        if matches!(rec.status, StepStatus::Kept | StepStatus::KeepByHand)
            && let Some(after) = &rec.after
        {
            current = after.clone();
        }
        out.steps.push(rec);
    }
    if let Some(ch) = channel {
        ch.bye();
    }
    out.interrupted |= interrupt.load(Ordering::Relaxed);
    out.summary = prove::compare(&out.baseline_series, &current, cfg.level);
    out
}

fn record(n: usize, step: PlannedStep, status: StepStatus) -> StepRecord {
    StepRecord {
        n,
        step,
        status,
        changes: Vec::new(),
        restored: Vec::new(),
        persist: Vec::new(),
        proof: None,
        after: None,
    }
}

/// One step's world: the series to beat, the channel, the progress line.
struct StepCtx<'a> {
    cfg: &'a FixConfig,
    progress: &'a mut dyn Progress,
    interrupt: &'a AtomicBool,
    current: &'a SeriesResult,
    channel: Option<&'a mut FixChannel>,
}

/// Where an applied step's changes are, to keep or undo them.
enum Made {
    Local(Vec<Entry>),
    Remote(u32),
}

impl StepCtx<'_> {
    /// Asks for consent, unless the step cannot be applied anyway (then the answer does not
    /// matter and is not asked).
    fn ask(&mut self, n: usize, step: &PlannedStep, consent: &mut dyn Consent) -> Approval {
        if self.blocked(step).is_some() { Approval::Yes } else { consent.approve(n, step) }
    }

    /// Why the step cannot be applied here, if so.
    fn blocked(&self, step: &PlannedStep) -> Option<String> {
        match (&step.how, step.host) {
            (How::Local { .. }, _) if !self.cfg.local.can_apply() => {
                Some("not root on the client: run its commands there as root".into())
            }
            (How::Remote { .. }, Host::Server) => match self.channel.as_deref() {
                None => Some("the server cannot be asked to change its host; run its commands there".into()),
                Some(ch) if !ch.server_is_root => {
                    Some("the server does not run as root, so it cannot change its host; run its commands there".into())
                }
                Some(_) => None,
            },
            _ => None,
        }
    }

    fn apply_and_prove(&mut self, n: usize, step: PlannedStep) -> StepRecord {
        if let Some(why) = self.blocked(&step) {
            return record(n, step, StepStatus::NotApplied(why));
        }
        let mut rec = record(n, step, StepStatus::Planned);
        let made = match self.apply(&mut rec) {
            Ok(m) => m,
            Err(why) => {
                rec.status = StepStatus::NotApplied(why);
                return rec;
            }
        };
        self.progress.note(&format!("step {n}: {} rounds to prove it", self.cfg.repeat.rounds));
        let after = run_series(&self.cfg.suite, &self.cfg.repeat, self.progress, self.interrupt);
        if after.interrupted {
            rec.restored = self.undo(made).unwrap_or_else(|e| vec![format!("could not restore: {e}")]);
            rec.status = StepStatus::Interrupted;
            return rec;
        }
        let proof = prove::judge(self.current, &after, &rec.step.targets, self.cfg.level);
        match proof.decision {
            Decision::Keep => {
                if let Made::Remote(step) = made
                    && let Some(ch) = self.channel.as_deref_mut()
                {
                    let _ = ch.request(&FixRequest::Keep { step });
                }
                rec.status = StepStatus::Kept;
            }
            Decision::Undo => {
                rec.restored = self.undo(made).unwrap_or_else(|e| vec![format!("could not restore: {e}")]);
                rec.status = StepStatus::Undone(proof.reason.clone());
            }
        }
        rec.proof = Some(proof);
        rec.after = Some(after);
        rec
    }

    fn apply(&mut self, rec: &mut StepRecord) -> Result<Made, String> {
        let step = &rec.step;
        match &step.how {
            How::Local { iface, actions } => {
                let entries = self.cfg.local.apply(iface, &step.cause, actions).map_err(|e| e.to_string())?;
                rec.changes = entries.iter().map(|e| e.change.describe()).collect();
                rec.persist.clone_from(&step.persist);
                self.progress.note(&format!("step {}: applied on the client: {}", rec.n, rec.changes.join("; ")));
                Ok(Made::Local(entries))
            }
            How::Remote { need_bytes } => {
                let ch = self.channel.as_deref_mut().ok_or("no fix channel to the server")?;
                let req = FixRequest::Apply { finding: step.cause.clone(), need_bytes: *need_bytes };
                match ch.request(&req).map_err(|e| e.to_string())? {
                    FixAnswer::Applied { step: id, changes, persist } => {
                        rec.changes = changes;
                        rec.persist = persist;
                        self.progress.note(&format!(
                            "step {}: applied on the server: {}",
                            rec.n,
                            rec.changes.join("; ")
                        ));
                        Ok(Made::Remote(id))
                    }
                    FixAnswer::NotApplied { reason, commands } => {
                        if !commands.is_empty() {
                            rec.step.commands = commands;
                        }
                        Err(format!("the server: {reason}"))
                    }
                    FixAnswer::Refused { reason } | FixAnswer::Error { reason } => Err(format!("the server: {reason}")),
                    other => Err(format!("the server answered {other:?}")),
                }
            }
            How::ByHand => Err("a step by hand".into()),
        }
    }

    fn undo(&mut self, made: Made) -> Result<Vec<String>, String> {
        match made {
            Made::Local(entries) => {
                self.cfg.local.undo(&entries).map_err(|e| e.to_string())?;
                Ok(entries.iter().rev().map(|e| e.change.describe_restore()).collect())
            }
            Made::Remote(step) => {
                let ch = self.channel.as_deref_mut().ok_or("no fix channel to the server")?;
                match ch.request(&FixRequest::Undo { step }).map_err(|e| e.to_string())? {
                    FixAnswer::Undone { restored, .. } => Ok(restored),
                    FixAnswer::Error { reason } => Err(reason),
                    other => Err(format!("the server answered {other:?}")),
                }
            }
        }
    }

    /// A step by hand: wait for the user, measure, and say whether to keep it.
    fn by_hand(&mut self, n: usize, step: PlannedStep, consent: &mut dyn Consent) -> StepRecord {
        match consent.by_hand(n, &step) {
            None => record(n, step, StepStatus::Listed),
            Some(false) => record(n, step, StepStatus::Declined),
            Some(true) => {
                let after = run_series(&self.cfg.suite, &self.cfg.repeat, self.progress, self.interrupt);
                if after.interrupted {
                    return record(n, step, StepStatus::Interrupted);
                }
                let proof = prove::judge(self.current, &after, &step.targets, self.cfg.level);
                let status = match proof.decision {
                    Decision::Keep => StepStatus::KeepByHand,
                    Decision::Undo => StepStatus::RevertByHand(proof.reason.clone()),
                };
                let mut rec = record(n, step, status);
                rec.proof = Some(proof);
                rec.after = Some(after);
                rec
            }
        }
    }
}
