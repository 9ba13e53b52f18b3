//! `wireperf suite HOST`: runs the suite, saves it, prints it.

mod args;
mod baseline;
mod render;

pub use args::SuiteArgs;
pub use render::render;

use crate::shared::progress::LiveProgress;
use render::{render_comparison, render_gates, render_series};
use wireperf_suite::SuiteResult;
use wireperf_suite::gates;
use wireperf_suite::series::{RepeatConfig, SeriesResult, run_series};

/// Stores a suite (or selftest) run with its phases, doctor report and verdicts.
pub fn save(
    result: &SuiteResult,
    kind: wireperf_store::RunKind,
    db: Option<&std::path::Path>,
) -> Result<wireperf_store::RunId, wireperf_store::StoreError> {
    wireperf_store::Store::open_default(db)?.insert_run(&new_run(result, kind))
}

/// What is stored of one suite run.
fn new_run(result: &SuiteResult, kind: wireperf_store::RunKind) -> wireperf_store::NewRun {
    let mut run = wireperf_store::NewRun::new(kind, Some(wireperf_store::current_command_line()));
    for p in &result.phases {
        run = run.phase(p.phase.name(), p.report.clone());
        if let Some(stored) = run.phases.last_mut()
            && !p.bottleneck.is_empty()
        {
            stored.bottleneck = serde_json::to_value(&p.bottleneck).ok();
            stored.cpu_load.clone_from(&p.cpu_load);
        }
    }
    run.doctor = result.link.doctor.as_ref().and_then(|d| serde_json::to_value(d).ok());
    run.findings = Some(stored_findings(result));
    run.verdicts = serde_json::to_value(&result.verdicts).ok();
    run.error = result.phases.iter().find_map(|p| p.error.clone());
    run
}

/// Both hosts' findings and the two ends' comparison in one list, each naming its host
/// (`host`: absent for this one, `server`, `both`) and interface, in the doctor's finding
/// shape (`fix.commands`), so `history show`, `history compare` and the HTML report read the
/// far host's findings as they read this host's.
fn stored_findings(result: &SuiteResult) -> serde_json::Value {
    use serde_json::json;
    let mut all = Vec::new();
    if let Some(d) = &result.link.doctor {
        for f in &d.findings {
            let mut v = serde_json::to_value(f).unwrap_or_default();
            if let Some(o) = v.as_object_mut() {
                o.insert("interface".into(), json!(d.link.name));
            }
            all.push(v);
        }
    }
    if let Some(h) = &result.server_host {
        for f in &h.findings {
            all.push(json!({
                "id": f.id, "severity": f.severity, "summary": f.summary, "evidence": f.evidence,
                "fix": {"commands": f.fix, "verify": f.verify}, "interface": h.iface, "host": "server",
            }));
        }
    }
    for f in &result.both_ends {
        all.push(json!({
            "id": f.id, "severity": f.severity, "summary": f.summary,
            "evidence": [format!("client: {}", f.client), format!("server: {}", f.server)],
            "fix": {"commands": f.fix}, "host": "both",
        }));
    }
    serde_json::Value::Array(all)
}

/// Runs the suite (or a series of it); returns the exit status: without a gate 1 if a phase
/// failed; with a gate (`--expect-min`, `--expect-max-loaded-latency`) 0 met, 1 missed, 2
/// could not test.
pub fn run(a: &SuiteArgs) -> i32 {
    let cfg = a.config();
    let gates = a.gates();
    let repeat = a.repeat();
    if a.warmup > 0 && repeat.as_ref().is_none_or(|r| a.warmup >= r.rounds) {
        let rounds = repeat.as_ref().map_or(1, |r| r.rounds);
        eprintln!(
            "wireperf suite: error - --warmup {} leaves no round of {rounds} to count (add --repeat N above it)",
            a.warmup
        );
        // A flag error, as clap's are: 1, before anything ran.
        return 1;
    }
    // The baseline is found before anything runs: a typo is said now, not after the test.
    let baseline = match &a.compare_to {
        None => None,
        Some(b) => match wireperf_store::Store::open_default(a.db.as_deref())
            .map_err(|e| e.to_string())
            .and_then(|store| baseline::resolve(&store, b, &a.host))
        {
            Ok(id) => Some(id),
            Err(e) => {
                eprintln!("wireperf suite: --compare-to: {e}");
                return 2;
            }
        },
    };
    let interrupt = crate::shared::signals::interrupt_flag();
    let mut progress = LiveProgress::new(a.json);
    let started = std::time::Instant::now();
    let once = RepeatConfig { rounds: 1, warmup: 0, level: 95.0, width_pct: None };
    let series = run_series(&cfg, repeat.as_ref().unwrap_or(&once), &mut progress, &interrupt);
    drop(progress);
    let saved = if a.no_save { None } else { save_all(a, &series, repeat.is_some()) };
    let comparison = baseline.zip(saved.as_ref()).and_then(|(base, ids)| {
        let level = a.significance.unwrap_or(wireperf_store::significance::LEVEL);
        let compared = wireperf_store::Store::open_default(a.db.as_deref())
            .and_then(|store| store.compare_sets_at(&[base], &[ids.head], level));
        match compared {
            Ok(c) => Some((base, c.significance)),
            Err(e) => {
                eprintln!("wireperf suite: warning - cannot compare with run {base}: {e}");
                None
            }
        }
    });
    let mut results = if gates.is_empty() { Vec::new() } else { gates::check(&gates, &series) };
    if let Some(pct) = a.fail_on_regression {
        match &comparison {
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
    let checked = (!gates.is_empty() || a.fail_on_regression.is_some()).then_some(results);
    let mut doc = match (&repeat, series.rounds.last()) {
        (None, Some(r)) => serde_json::to_value(r).unwrap_or_default(),
        _ => serde_json::to_value(&series).unwrap_or_default(),
    };
    if let Some(obj) = doc.as_object_mut() {
        match &saved {
            None => {}
            Some(ids) if repeat.is_none() => {
                obj.insert("saved_run".into(), serde_json::json!(ids.head.0));
            }
            Some(ids) => {
                obj.insert("saved_series".into(), serde_json::json!(ids.head.0));
                obj.insert("saved_runs".into(), serde_json::json!(ids.rounds.iter().map(|i| i.0).collect::<Vec<_>>()));
            }
        }
        if let Some((base, sig)) = &comparison {
            let mut c = serde_json::to_value(sig).unwrap_or_default();
            if let Some(o) = c.as_object_mut() {
                o.insert("baseline".into(), serde_json::json!(base.0));
            }
            obj.insert("comparison".into(), c);
        }
        if let Some(g) = &checked {
            obj.insert("gates".into(), serde_json::to_value(g).unwrap_or_default());
        }
    }
    let json = match serde_json::to_string_pretty(&doc) {
        Ok(j) => j,
        Err(e) => {
            eprintln!("wireperf: error - cannot encode the result: {e}");
            return 2;
        }
    };
    if let Some(path) = &a.json_file
        && let Err(e) = std::fs::write(path, format!("{json}\n"))
    {
        eprintln!("wireperf: error - cannot write the JSON result to {}: {e}", path.display());
        return 2;
    }
    if let (Some(path), Some(g)) = (&a.junit, &checked)
        && let Err(e) = std::fs::write(path, gates::junit_xml(g, started.elapsed().as_secs_f64()))
    {
        eprintln!("wireperf: error - cannot write the JUnit file {}: {e}", path.display());
        return 2;
    }
    if a.json {
        outln!("{json}");
    } else {
        if repeat.is_some() {
            out!("{}", render_series(&series));
        } else if let Some(r) = series.rounds.last() {
            out!("{}", render(r));
        }
        if let Some((base, sig)) = &comparison {
            out!("{}", render_comparison(*base, sig));
        }
        if let Some(g) = &checked {
            out!("{}", render_gates(g));
        }
        match (&saved, repeat.is_some()) {
            (None, _) => {}
            (Some(ids), false) => outln!("\nsaved as run #{} (wireperf history show {})", ids.head.0, ids.head.0),
            (Some(ids), true) => {
                let rounds = match (ids.rounds.first(), ids.rounds.last()) {
                    (Some(f), Some(l)) => format!("rounds #{}-#{}", f.0, l.0),
                    _ => "no rounds".into(),
                };
                outln!("\nsaved as series #{} ({rounds}; wireperf history show {})", ids.head.0, ids.head.0);
            }
        }
    }
    match &checked {
        Some(g) => {
            let code = gates::exit_code(&series, g);
            // One line on stderr that a script's log shows: why it did not pass.
            if let Some(miss) = g.iter().find(|x| x.status != gates::GateStatus::Met) {
                eprintln!("wireperf suite: gate {}: {}", miss.name, miss.message);
            } else if code == 2 {
                eprintln!("wireperf suite: a phase failed: the gates could not be judged");
            }
            code
        }
        None => i32::from(!series.all_ok()),
    }
}

/// Saves a single run as the run it is, a series as one series (its head with the
/// statistics, each round a run of its own); `head` is the single run's id then. `None`
/// after a warning when the history cannot be written: the result is still printed.
fn save_all(a: &SuiteArgs, series: &SeriesResult, is_series: bool) -> Option<wireperf_store::SeriesIds> {
    let kind = wireperf_store::RunKind::Suite;
    let mut rounds: Vec<wireperf_store::NewRun> = series.rounds.iter().map(|r| new_run(r, kind)).collect();
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
            store.insert_series(&head, &rounds)
        } else {
            let one = rounds.first().ok_or_else(|| wireperf_store::StoreError::InvalidRun("no round ran".into()))?;
            store.insert_run(one).map(|id| wireperf_store::SeriesIds { head: id, rounds: vec![id] })
        }
    });
    match saved {
        Ok(ids) => Some(ids),
        Err(e) => {
            eprintln!("wireperf: warning - the run was not saved to history: {e}");
            None
        }
    }
}
