//! `wireperf suite HOST --fix`: the fix loop wired to the terminal, the history and the
//! output (the loop itself is `wireperf_fix`).

use super::args::SuiteArgs;
use crate::shared::progress::LiveProgress;
use std::io::{BufRead, IsTerminal, Write};
use wireperf_fix::run::{Approval, Consent, FixConfig, FixMode, FixOutcome};
use wireperf_fix::{PlannedStep, StepStatus};
use wireperf_suite::series::RepeatConfig;

/// Rounds of every series when `--repeat` does not say: enough for Welch's test to tell a
/// 10 % change on a quiet LAN (noise about 3 %) at 95 %.
const DEFAULT_ROUNDS: usize = 5;

/// Runs the loop; the exit status: 0 when it finished (whatever it kept), 1 when interrupted,
/// 2 when it could not start or the baseline could not test.
pub fn run(a: &SuiteArgs) -> i32 {
    let mode = if a.fix.as_deref() == Some("plan") { FixMode::Plan } else { FixMode::Apply };
    let tty = std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
    if mode == FixMode::Apply && !a.yes && !tty {
        eprintln!(
            "wireperf suite: --fix changes hosts and asks before each step, but there is no terminal to ask on: \
             add --yes to apply the steps without asking, or use --fix=plan to see the plan"
        );
        return 2;
    }
    let authtoken = match token(a) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("wireperf suite: error - {e}");
            return 2;
        }
    };
    let rounds = a.repeat.unwrap_or(DEFAULT_ROUNDS);
    let level = a.confidence.map_or(95.0, |c| c.0);
    let cfg = FixConfig {
        suite: a.config(),
        repeat: RepeatConfig { rounds, warmup: a.warmup, level, width_pct: None },
        level,
        mode,
        local: wireperf_fix::local::LocalHost::live(a.journal.clone()),
        authtoken,
        only: a.fix_only.clone(),
    };
    let interrupt = crate::shared::signals::interrupt_flag();
    let mut progress = LiveProgress::new(a.json);
    let mut consent = Asker { yes: a.yes || !tty };
    let outcome = wireperf_fix::run_fix(&cfg, &mut consent, &mut progress, &interrupt);
    drop(progress);
    if !a.no_save {
        save(a, &outcome);
    }
    let json = serde_json::to_string_pretty(&outcome).unwrap_or_default();
    if let Some(path) = &a.json_file
        && let Err(e) = std::fs::write(path, format!("{json}\n"))
    {
        eprintln!("wireperf suite: error - cannot write {}: {e}", path.display());
        return 2;
    }
    if a.json {
        outln!("{json}");
    } else {
        out!("{}", super::fix_render::render(&outcome));
    }
    if outcome.interrupted {
        1
    } else if !outcome.baseline_series.all_ok() && outcome.baseline.is_empty() {
        2
    } else {
        0
    }
}

/// The fix channel's token for a server that authenticates (`--username`).
fn token(a: &SuiteArgs) -> Result<Option<String>, String> {
    let auth =
        crate::iperf::auth::ClientAuth::from_flags(a.username.as_deref(), a.rsa_public_key_path.as_deref(), false)
            .map_err(|e| e.to_string())?;
    auth.map(|c| c.token().map_err(|e| e.to_string())).transpose()
}

/// Asks on the terminal, or approves everything (`--yes`).
struct Asker {
    yes: bool,
}

fn ask(question: &str) -> String {
    eprint!("{question}");
    let _ = std::io::stderr().flush();
    let mut line = String::new();
    let _ = std::io::stdin().lock().read_line(&mut line);
    line.trim().to_ascii_lowercase()
}

impl Consent for Asker {
    fn approve(&mut self, n: usize, step: &PlannedStep) -> Approval {
        if self.yes {
            return Approval::All;
        }
        eprintln!("\n{}", super::fix_render::step_lines(n, step).join("\n"));
        loop {
            match ask(&format!("apply step {n} on the {}? [y]es, [n]o, [a]ll, [q]uit: ", step.host.name())).as_str() {
                "y" | "yes" => return Approval::Yes,
                "n" | "no" => return Approval::No,
                "a" | "all" => return Approval::All,
                "q" | "quit" | "" => return Approval::Quit,
                _ => {}
            }
        }
    }

    fn by_hand(&mut self, n: usize, step: &PlannedStep) -> Option<bool> {
        if self.yes {
            return None;
        }
        eprintln!("\n{}", super::fix_render::step_lines(n, step).join("\n"));
        let answer = ask(&format!(
            "step {n} is by hand on the {}: make the change, then press Enter to measure it (s to skip): ",
            step.host.name()
        ));
        Some(answer != "s" && answer != "skip")
    }
}

/// Saves every series the loop measured: the baseline, and each step's series labelled with
/// its number, cause and what became of it (`history list --label fix-`).
fn save(a: &SuiteArgs, o: &FixOutcome) {
    let mut series = vec![("fix-baseline".to_string(), &o.baseline_series)];
    for s in &o.steps {
        if let Some(after) = &s.after {
            let status = match s.status {
                StepStatus::Kept | StepStatus::KeepByHand => "kept",
                _ => "undone",
            };
            series.push((format!("fix-step-{}-{}-{}-{status}", s.n, s.step.host.name(), s.step.cause), after));
        }
    }
    let stored = wireperf_store::Store::open_default(a.db.as_deref()).and_then(|mut store| {
        for (label, s) in series {
            let kind = wireperf_store::RunKind::Suite;
            let label = Some(a.label.as_ref().map_or(label.clone(), |l| format!("{l}:{label}")));
            let mut rounds: Vec<wireperf_store::NewRun> =
                s.rounds.iter().map(|r| super::stored::new_run(r, kind)).collect();
            for r in &mut rounds {
                r.label.clone_from(&label);
            }
            let head = wireperf_store::NewSeries {
                kind,
                command_line: Some(wireperf_store::current_command_line()),
                label,
                warmup: s.warmup,
                statistics: serde_json::to_value(&s.statistics).unwrap_or_default(),
                confidence: None,
            };
            store.insert_series(&head, &rounds)?;
        }
        Ok(())
    });
    if let Err(e) = stored {
        eprintln!("wireperf: warning - the fix loop's series were not saved to history: {e}");
    }
}
