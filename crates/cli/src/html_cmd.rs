//! `wireperf report ID... --html FILE | --svg DIR`: stored runs drawn as a self-contained HTML
//! page or as one SVG file per chart.
//!
//! The renderer (`wireperf_report::html`) takes plain [`RunView`]s; this module is the only
//! place that knows how the history store keeps a run, and converts one into the other.
//!
//! Named `html_cmd` for what it draws: in this crate "report" is iperf3's `-J` document (and
//! `wireperf_report` the renderers' crate); only the subcommand keeps the word `report`.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::Args;
use serde_json::Value;
use wireperf_report::{PhaseWatch, ReportInput, RunView, all_charts, render_html, render_svg};
use wireperf_store::{RunDetail, RunId, Store};

/// Draw stored runs: throughput per stream, retransmits, cwnd, verdicts, doctor findings;
/// two or more runs add a comparison (the first is the baseline).
#[derive(Debug, Clone, Args)]
#[command(group(clap::ArgGroup::new("output").required(true).multiple(true).args(["html", "svg"])))]
pub struct HtmlArgs {
    /// Run ids, as `wireperf history` lists them.
    #[arg(required = true, value_name = "ID")]
    pub ids: Vec<RunId>,
    /// Write one self-contained HTML file (`-` for standard output).
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Write each chart as DIR/<chart>.svg (the directory is created).
    #[arg(long, value_name = "DIR")]
    pub svg: Option<PathBuf>,
    /// The history database file (overrides WIREPERF_DB and the default location).
    #[arg(long, value_name = "PATH")]
    pub db: Option<PathBuf>,
}

/// Runs the command; the exit status.
pub fn run(a: &HtmlArgs) -> i32 {
    match execute(a) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("wireperf: report error - {e:#}");
            1
        }
    }
}

fn execute(a: &HtmlArgs) -> Result<()> {
    let store = Store::open_default(a.db.as_deref())?;
    let mut runs = Vec::with_capacity(a.ids.len());
    for id in &a.ids {
        let detail = store.get(*id)?;
        runs.push(run_view(&detail).with_context(|| format!("run {id}"))?);
    }
    let input = ReportInput { runs };
    if let Some(file) = &a.html {
        let html = render_html(&input);
        if file.as_os_str() == "-" {
            out!("{html}");
        } else {
            write(file, &html)?;
            eprintln!("wireperf: wrote {}", file.display());
        }
    }
    if let Some(dir) = &a.svg {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        let charts = all_charts(&input);
        for chart in &charts {
            write(&dir.join(format!("{}.svg", chart.id)), &render_svg(chart))?;
        }
        eprintln!("wireperf: wrote {} chart(s) to {}", charts.len(), dir.display());
    }
    Ok(())
}

fn write(path: &Path, text: &str) -> Result<()> {
    std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))
}

/// A stored run as the renderer's input.
fn run_view(d: &RunDetail) -> Result<RunView> {
    let s = &d.summary;
    let label = match &s.label {
        Some(l) => format!("{} · {l}", s.kind),
        None => match &s.remote_host {
            Some(h) => format!("{} {h}", s.kind),
            None => s.kind.to_string(),
        },
    };
    // The page names the peer from the -J document itself; this is the local end.
    let host = s.local_host.clone().unwrap_or_default();
    let phases = d
        .phase_details
        .iter()
        .map(|p| {
            let report = p.report().with_context(|| format!("phase {}: stored -J document is unreadable", p.name))?;
            Ok((p.name.clone(), report))
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(RunView {
        id: s.id.to_string(),
        label,
        time: readable_time(&s.time),
        host,
        phases,
        verdicts: d.verdicts.clone(),
        findings: findings(d.findings.as_ref(), d.doctor.as_ref()),
        watch: d
            .phase_details
            .iter()
            .filter(|p| p.bottleneck.is_some() || p.cpu_load.is_some())
            .map(|p| PhaseWatch {
                phase: p.name.clone(),
                bottleneck: p.bottleneck.clone(),
                cpu_load: p.cpu_load.clone(),
            })
            .collect(),
    })
}

/// `2026-11-29T20:15:30Z` → `2026-11-29 20:15:30 UTC`; anything else unchanged.
fn readable_time(rfc3339: &str) -> String {
    match rfc3339.strip_suffix('Z') {
        Some(t) if t.len() == 19 && t.as_bytes().get(10) == Some(&b'T') => {
            format!("{} {} UTC", &t[..10], &t[11..])
        }
        _ => rfc3339.to_string(),
    }
}

/// The findings to show: the stored list, with bare ids replaced by the doctor's full finding
/// (evidence, fix) when the run's doctor document has it; else the doctor document itself.
fn findings(list: Option<&Value>, doctor: Option<&Value>) -> Option<Value> {
    let full = |id: &str| -> Option<Value> {
        let doc = doctor?;
        let ifaces = doc
            .get("interfaces")
            .and_then(Value::as_array)
            .map(|a| a.iter().collect::<Vec<_>>())
            .unwrap_or_else(|| vec![doc]);
        ifaces
            .into_iter()
            .flat_map(|i| i.get("findings").and_then(Value::as_array).into_iter().flatten())
            .find(|f| f.get("id").and_then(Value::as_str) == Some(id))
            .cloned()
    };
    match list {
        Some(Value::Array(items)) => Some(Value::Array(
            items
                .iter()
                .map(|f| match f.as_str() {
                    Some(id) => full(id).unwrap_or_else(|| f.clone()),
                    None => f.clone(),
                })
                .collect(),
        )),
        Some(other) => Some(other.clone()),
        None => doctor.cloned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn times_read_as_utc() {
        assert_eq!(readable_time("2026-11-29T20:15:30Z"), "2026-11-29 20:15:30 UTC");
        assert_eq!(readable_time("yesterday"), "yesterday");
    }

    #[test]
    fn bare_finding_ids_are_resolved_from_the_doctor_document() {
        let doctor = json!({"interfaces": [{"name": "eth0", "findings": [
            {"id": "rx-ring-small", "severity": "warn", "summary": "small ring"}]}]});
        let got = findings(Some(&json!(["rx-ring-small", "other"])), Some(&doctor));
        assert_eq!(got, Some(json!([{"id": "rx-ring-small", "severity": "warn", "summary": "small ring"}, "other"])));
        assert_eq!(findings(None, Some(&doctor)), Some(doctor.clone()));
        assert_eq!(findings(None, None), None);
    }
}
