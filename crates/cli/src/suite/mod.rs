//! `wireperf suite HOST`: runs the suite, saves it, prints it.

mod args;
mod render;
mod repeat_args;

pub use args::SuiteArgs;
pub use render::render;

use crate::progress::LiveProgress;
use render::{render_gates, render_series};
use wireperf_suite::SuiteResult;
use wireperf_suite::gates;
use wireperf_suite::series::{RepeatConfig, run_series};

/// Stores a suite (or selftest) run with its phases, doctor report and verdicts.
pub fn save(
    result: &SuiteResult,
    kind: wireperf_store::RunKind,
    db: Option<&std::path::Path>,
) -> Result<wireperf_store::RunId, wireperf_store::StoreError> {
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
    wireperf_store::Store::open_default(db)?.insert_run(&run)
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
    let interrupt = crate::signals::interrupt_flag();
    let mut progress = LiveProgress::new(a.json);
    let started = std::time::Instant::now();
    let once = RepeatConfig { rounds: 1, warmup: 0, level: 95.0, width_pct: None };
    let series = run_series(&cfg, repeat.as_ref().unwrap_or(&once), &mut progress, &interrupt);
    drop(progress);
    let saved: Vec<wireperf_store::RunId> = if a.no_save {
        Vec::new()
    } else {
        // Each round is stored as the suite run it is.
        series
            .rounds
            .iter()
            .filter_map(|r| match save(r, wireperf_store::RunKind::Suite, a.db.as_deref()) {
                Ok(id) => Some(id),
                Err(e) => {
                    eprintln!("wireperf: warning - the run was not saved to history: {e}");
                    None
                }
            })
            .collect()
    };
    let checked = (!gates.is_empty()).then(|| gates::check(&gates, &series));
    let mut doc = match (&repeat, series.rounds.last()) {
        (None, Some(r)) => serde_json::to_value(r).unwrap_or_default(),
        _ => serde_json::to_value(&series).unwrap_or_default(),
    };
    if let Some(obj) = doc.as_object_mut() {
        match saved.as_slice() {
            [] => {}
            [one] => {
                obj.insert("saved_run".into(), serde_json::json!(one.0));
            }
            many => {
                obj.insert("saved_runs".into(), serde_json::json!(many.iter().map(|i| i.0).collect::<Vec<_>>()));
            }
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
        if let Some(g) = &checked {
            out!("{}", render_gates(g));
        }
        match saved.as_slice() {
            [] => {}
            [one] => outln!("\nsaved as run #{} (wireperf history show {})", one.0, one.0),
            [first, .., last] => {
                outln!("\nsaved as runs #{}-#{} (wireperf history list)", first.0, last.0);
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
