//! Hand-written SVG charts: deterministic, dependency-free, readable offline.
//!
//! - [`chart`]: the model (charts, series, samples), no layout.
//! - [`series`]: test reports → charts (throughput, retransmits, cwnd, run overlay).
//! - [`cpu`]: the bottleneck watch's per-CPU load of both hosts → one chart per host.
//! - [`scale`]: nice axis ticks (1/2/5 × 10ⁿ) and unit labels via [`crate::format_unit`].
//! - [`palette`]: stable series colours.
//! - [`draw`]: one chart → one standalone SVG document ([`render_svg`]).

pub mod chart;
pub mod cpu;
pub mod draw;
pub mod palette;
pub mod scale;
pub mod series;

pub use chart::{Chart, Sample, Series, SeriesKind};
pub use draw::render_svg;
pub use series::{PhaseCharts, overlay_charts, phase_charts};

use std::collections::HashSet;

use crate::escape::slug;
use crate::view::ReportInput;

/// The charts of every phase of every run, `[run][phase]`, with ids unique in the report
/// (`run-12-upload-throughput`; a repeated run or phase name gets `-2`, `-3`…).
pub fn run_charts(input: &ReportInput) -> Vec<Vec<(String, PhaseCharts)>> {
    let mut used = HashSet::new();
    input
        .runs
        .iter()
        .map(|run| {
            run.phases
                .iter()
                .map(|(phase, report)| {
                    let base = format!("run-{}-{}", slug(&run.id), slug(phase));
                    let mut prefix = base.clone();
                    let mut k = 2;
                    while !used.insert(prefix.clone()) {
                        prefix = format!("{base}-{k}");
                        k += 1;
                    }
                    let mut charts = phase_charts(&prefix, phase, report);
                    if let Some(load) = run.watch_of(phase).and_then(|w| w.cpu_load.as_ref()) {
                        charts.cpu = cpu::cpu_charts(&prefix, phase, load);
                    }
                    (phase.clone(), charts)
                })
                .collect()
        })
        .collect()
}

/// Every chart of a report in page order: the comparison overlays first (two or more runs),
/// then each run's phases (with their CPU charts). `--svg DIR` writes these as `DIR/<id>.svg`.
pub fn all_charts(input: &ReportInput) -> Vec<Chart> {
    let mut out = if input.runs.len() >= 2 { overlay_charts(&input.runs) } else { Vec::new() };
    for phases in run_charts(input) {
        for (_, charts) in phases {
            out.extend(charts.iter().cloned());
        }
    }
    out
}
