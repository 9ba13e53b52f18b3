//! What the history stores of a suite round: its phases, doctor, both hosts' findings and
//! verdicts (shared by a suite run, a series and the fix loop's series).

use wireperf_suite::SuiteResult;

/// What is stored of one suite run.
pub(super) fn new_run(result: &SuiteResult, kind: wireperf_store::RunKind) -> wireperf_store::NewRun {
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
