//! The fix loop's text: the plan, each step with its proof, and baseline → final.

use std::fmt::Write;
use wireperf_fix::prove::FigureChange;
use wireperf_fix::run::{FarStatus, FixMode, FixOutcome, StepRecord};
use wireperf_fix::{PlannedStep, StepStatus};
use wireperf_protocol::outcome::words::rate;

/// A planned step as the plan and the prompt show it.
pub fn step_lines(n: usize, s: &PlannedStep) -> Vec<String> {
    let mut out = vec![format!("  {n}. {:<6} {}  ({})", s.host.name(), s.cause, s.kind)];
    if let Some(c) = &s.change {
        out.push(format!("     change: {c}"));
    }
    for c in &s.commands {
        out.push(format!("     run:    {c}"));
    }
    out.push(format!("     why:    {}", s.why));
    let targets: Vec<&str> = s.targets.iter().map(|d| d.name()).collect();
    out.push(format!("     lifts:  the {}", targets.join(" and ")));
    out
}

fn figure_line(f: &FigureChange) -> String {
    let ci = |s: &wireperf_stats::Summary| {
        s.ci.map_or(String::new(), |(lo, hi)| format!(" [{} - {}]", rate(lo.max(0.0)), rate(hi)))
    };
    let p = f.p.map_or("p n/a (too few rounds)".to_string(), |p| format!("p={p:.4}"));
    let verdict = if f.improved() {
        "better"
    } else if f.regressed() {
        "worse"
    } else {
        "within noise"
    };
    format!(
        "  {:<12} {}{} → {}{}  {:+.1}%  {p}  {verdict}",
        f.figure,
        rate(f.before.mean),
        ci(&f.before),
        rate(f.after.mean),
        ci(&f.after),
        f.change_pct
    )
}

fn status_line(r: &StepRecord) -> String {
    match &r.status {
        StepStatus::Kept => "  kept".to_string(),
        StepStatus::Undone(why) => format!("  undone: {why}"),
        StepStatus::Declined => "  not applied: declined".to_string(),
        StepStatus::NotApplied(why) => format!("  not applied: {why}"),
        StepStatus::Listed => {
            "  by hand: not measured (no terminal to wait on; run it there, then run --fix again)".into()
        }
        StepStatus::KeepByHand => "  measured after your change: keep it".to_string(),
        StepStatus::RevertByHand(why) => format!("  measured after your change: revert it by hand ({why})"),
        StepStatus::Planned => "  planned (--fix=plan changes nothing)".to_string(),
        StepStatus::NotSelected => "  not applied: not named by --fix-only".to_string(),
        StepStatus::Interrupted => "  interrupted: nothing of it is left applied".to_string(),
    }
}

/// The whole outcome.
pub fn render(o: &FixOutcome) -> String {
    let mut t = String::new();
    let _ = writeln!(t, "\nfix plan for {} ({} rounds per series, {:.0}% confidence):", o.server, o.rounds, o.level);
    if o.plan.is_empty() {
        let _ = writeln!(t, "  nothing to fix: no verdict or finding points at a change");
    }
    for (i, s) in o.plan.iter().enumerate() {
        let _ = writeln!(t, "{}", step_lines(i + 1, s).join("\n"));
    }
    match &o.far {
        FarStatus::Unavailable(why) => {
            let _ = writeln!(t, "the server's steps are not applied: {why}; run their commands on the server");
        }
        FarStatus::NotRoot => {
            let _ = writeln!(t, "the server does not run as root: its steps are printed, not applied");
        }
        _ => {}
    }
    if o.mode == FixMode::Apply && !o.local_can_apply && o.plan.iter().any(|s| s.host == wireperf_fix::Host::Client) {
        let _ = writeln!(t, "not root on the client: its steps are printed, not applied");
    }
    if o.mode == FixMode::Plan {
        let _ = writeln!(t, "--fix=plan: nothing was changed on either host");
        return t;
    }
    for r in &o.steps {
        let _ = writeln!(t, "\nstep {}: {} {}", r.n, r.step.host.name(), r.step.cause);
        for c in &r.changes {
            let _ = writeln!(t, "  applied: {c}");
        }
        if let Some(p) = &r.proof {
            for f in &p.figures {
                let _ = writeln!(t, "{}", figure_line(f));
            }
        }
        for c in &r.restored {
            let _ = writeln!(t, "  restored: {c}");
        }
        let _ = writeln!(t, "{}", status_line(r));
    }
    if !o.summary.is_empty() {
        let _ = writeln!(t, "\nbaseline → final ({:.0}% interval of the mean):", o.level);
        for f in &o.summary {
            let _ = writeln!(t, "{}", figure_line(f));
        }
    }
    let kept: Vec<&StepRecord> = o.kept().collect();
    let undone = o.steps.iter().filter(|s| matches!(s.status, StepStatus::Undone(_))).count();
    let _ = writeln!(t, "\nsteps: {} kept, {undone} undone, {} in all", kept.len(), o.steps.len());
    let persist: Vec<String> = kept
        .iter()
        .flat_map(|r| r.persist.iter().map(move |p| format!("  on the {}: {p}", r.step.host.name())))
        .collect();
    if !persist.is_empty() {
        let _ = writeln!(t, "kept changes are runtime settings; to make them permanent:");
        let _ = writeln!(t, "{}", persist.join("\n"));
    }
    if o.interrupted {
        let _ = writeln!(
            t,
            "interrupted: the step being proven was restored; kept steps stay (wireperf doctor --undo restores them)"
        );
    }
    t
}
