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
