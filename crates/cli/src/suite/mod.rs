//! `wireperf suite HOST`: runs the suite, saves it, prints it.

mod args;
mod baseline;
mod finished;
mod fix;
mod fix_render;
mod render;
mod stored;

pub use args::SuiteArgs;
pub use render::render;

use crate::shared::progress::LiveProgress;
use finished::Finished;
use wireperf_store::significance::Significance;
use wireperf_suite::SuiteResult;
use wireperf_suite::gates;
use wireperf_suite::series::{RepeatConfig, SeriesResult, run_series};

/// Stores a suite (or selftest) run with its phases, doctor report and verdicts.
pub fn save(
    result: &SuiteResult,
    kind: wireperf_store::RunKind,
    db: Option<&std::path::Path>,
) -> Result<wireperf_store::RunId, wireperf_store::StoreError> {
    wireperf_store::Store::open_default(db)?.insert_run(&stored::new_run(result, kind))
}

/// Runs the suite (or a series of it); returns the exit status: without a gate 1 if a phase
/// failed; with a gate (`--expect-min`, `--expect-max-loaded-latency`) 0 met, 1 missed, 2
/// could not test.
pub fn run(a: &SuiteArgs) -> i32 {
    if a.fix.is_some() {
        return fix::run(a);
    }
    let repeat = a.repeat();
    if let Err(e) = check_warmup(a, repeat.as_ref()) {
        eprintln!("wireperf suite: error - {e}");
        // A flag error, as clap's are: 1, before anything ran.
        return 1;
    }
    // The baseline is found before anything runs: a typo is said now, not after the test.
    let baseline = match a.compare_to.as_ref().map(|b| resolve_baseline(a, b)).transpose() {
        Ok(b) => b,
        Err(e) => {
            eprintln!("wireperf suite: --compare-to: {e}");
            return 2;
        }
    };
    let interrupt = crate::shared::signals::interrupt_flag();
    let mut progress = LiveProgress::new(a.json);
    let started = std::time::Instant::now();
    let once = RepeatConfig { rounds: 1, warmup: 0, level: 95.0, width_pct: None };
    let series = run_series(&a.config(), repeat.as_ref().unwrap_or(&once), &mut progress, &interrupt);
    drop(progress);
    // One opening of the history after the test, for the save and the comparison with it.
    let stored = if a.no_save { None } else { save_all(a, &series, repeat.is_some()) };
    let comparison = baseline.zip(stored.as_ref()).and_then(|(base, (store, ids))| compare(a, store, base, ids));
    let saved = stored.map(|(_, ids)| ids);
    let checked = check_gates(a, &series, comparison.as_ref());
    let done = Finished { series, is_series: repeat.is_some(), saved, comparison, checked };
    let json = match done.json() {
        Ok(j) => j,
        Err(e) => {
            eprintln!("wireperf: error - {e}");
            return 2;
        }
    };
    if let Err(e) = done.write_files(a, &json, started.elapsed()) {
        eprintln!("wireperf: error - {e}");
        return 2;
    }
    if a.json {
        outln!("{json}");
    } else {
        out!("{}", done.text());
    }
    done.exit_status()
}

/// `--warmup` must leave a round to count.
fn check_warmup(a: &SuiteArgs, repeat: Option<&RepeatConfig>) -> Result<(), String> {
    if a.warmup > 0 && repeat.is_none_or(|r| a.warmup >= r.rounds) {
        let rounds = repeat.map_or(1, |r| r.rounds);
        return Err(format!("--warmup {} leaves no round of {rounds} to count (add --repeat N above it)", a.warmup));
    }
    Ok(())
}

/// The stored run `--compare-to` names (last, an id or a label).
fn resolve_baseline(a: &SuiteArgs, name: &baseline::Baseline) -> Result<wireperf_store::RunId, String> {
    let store = wireperf_store::Store::open_default(a.db.as_deref()).map_err(|e| e.to_string())?;
    baseline::resolve(&store, name, &a.host)
}

/// This run (as saved in `store`) against its baseline, per direction; `None` after a warning
/// when the history cannot be read.
fn compare(
    a: &SuiteArgs,
    store: &wireperf_store::Store,
    base: wireperf_store::RunId,
    ids: &wireperf_store::SeriesIds,
) -> Option<(wireperf_store::RunId, Significance)> {
    let level = a.significance.unwrap_or(wireperf_store::significance::LEVEL);
    match store.compare_sets_at(&[base], &[ids.head], level) {
        Ok(c) => Some((base, c.significance)),
        Err(e) => {
            eprintln!("wireperf suite: warning - cannot compare with run {base}: {e}");
            None
        }
    }
}

/// The gates' results (`--expect-*` and `--fail-on-regression`), or `None` when none was asked.
fn check_gates(
    a: &SuiteArgs,
    series: &SeriesResult,
    comparison: Option<&(wireperf_store::RunId, Significance)>,
) -> Option<Vec<gates::GateResult>> {
    let asked = a.gates();
    let mut results = if asked.is_empty() { Vec::new() } else { gates::check(&asked, series) };
    let pct = a.fail_on_regression;
    if let Some(pct) = pct {
        match comparison {
            Some((_, sig)) => results.extend(baseline::regression_gates(sig, pct)),
            None => results.push(gates::GateResult {
                name: "fail-on-regression".into(),
                status: gates::GateStatus::NotMeasured,
                measured: None,
                limit: -pct,
                message: "the run could not be compared with its baseline".into(),
            }),
        }
    }
    (!asked.is_empty() || pct.is_some()).then_some(results)
}

/// Saves a single run as the run it is, a series as one series (its head with the
/// statistics, each round a run of its own); `head` is the single run's id then. Returns the
/// open store with the ids (a comparison reads the same store); `None` after a warning when the
/// history cannot be written: the result is still printed.
fn save_all(
    a: &SuiteArgs,
    series: &SeriesResult,
    is_series: bool,
) -> Option<(wireperf_store::Store, wireperf_store::SeriesIds)> {
    let kind = wireperf_store::RunKind::Suite;
    let mut rounds: Vec<wireperf_store::NewRun> = series.rounds.iter().map(|r| stored::new_run(r, kind)).collect();
    for r in &mut rounds {
        r.label.clone_from(&a.label);
    }
    let saved = wireperf_store::Store::open_default(a.db.as_deref()).and_then(|mut store| {
        if is_series {
            let head = wireperf_store::NewSeries {
                kind,
                command_line: Some(wireperf_store::current_command_line()),
                label: a.label.clone(),
                warmup: series.warmup,
                statistics: serde_json::to_value(&series.statistics).unwrap_or_default(),
                confidence: series.confidence.as_ref().and_then(|c| serde_json::to_value(c).ok()),
            };
            let ids = store.insert_series(&head, &rounds)?;
            Ok((store, ids))
        } else {
            let one = rounds.first().ok_or_else(|| wireperf_store::StoreError::InvalidRun("no round ran".into()))?;
            let id = store.insert_run(one)?;
            Ok((store, wireperf_store::SeriesIds { head: id, rounds: vec![id] }))
        }
    });
    match saved {
        Ok(stored) => Some(stored),
        Err(e) => {
            eprintln!("wireperf: warning - the run was not saved to history: {e}");
            None
        }
    }
}
