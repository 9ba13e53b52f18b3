//! `wireperf suite HOST`: runs the suite, saves it, prints it.

mod args;
mod render;

pub use args::SuiteArgs;
pub use render::render;

use crate::progress::LiveProgress;
use wireperf_suite::{SuiteResult, run_suite};

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
    run.findings = result.link.doctor.as_ref().and_then(|d| serde_json::to_value(&d.findings).ok());
    run.verdicts = serde_json::to_value(&result.verdicts).ok();
    run.error = result.phases.iter().find_map(|p| p.error.clone());
    wireperf_store::Store::open_default(db)?.insert_run(&run)
}

/// Runs the suite; returns the exit status (1 if a phase failed).
pub fn run(a: &SuiteArgs) -> i32 {
    let cfg = a.config();
    let interrupt = crate::signals::interrupt_flag();
    let mut progress = LiveProgress::new(a.json);
    let result = run_suite(&cfg, &mut progress, &interrupt);
    drop(progress);
    let saved = if a.no_save {
        None
    } else {
        match save(&result, wireperf_store::RunKind::Suite, a.db.as_deref()) {
            Ok(id) => Some(id),
            Err(e) => {
                eprintln!("wireperf: warning - the run was not saved to history: {e}");
                None
            }
        }
    };
    let mut doc = serde_json::to_value(&result).unwrap_or_default();
    if let (Some(id), Some(obj)) = (saved, doc.as_object_mut()) {
        obj.insert("saved_run".into(), serde_json::json!(id.0));
    }
    let json = match serde_json::to_string_pretty(&doc) {
        Ok(j) => j,
        Err(e) => {
            eprintln!("wireperf: error - cannot encode the result: {e}");
            return 1;
        }
    };
    if let Some(path) = &a.json_file
        && let Err(e) = std::fs::write(path, format!("{json}\n"))
    {
        eprintln!("wireperf: error - cannot write the JSON result to {}: {e}", path.display());
        return 1;
    }
    if a.json {
        outln!("{json}");
    } else {
        out!("{}", render(&result));
        if let Some(id) = saved {
            outln!("\nsaved as run #{} (wireperf history show {})", id.0, id.0);
        }
    }
    i32::from(!result.all_ok())
}
