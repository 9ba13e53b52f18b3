//! The HTML report: one self-contained page (inline CSS and SVG, no scripts, no fonts or
//! images from elsewhere), so it can be mailed, attached to a ticket or opened offline.
//!
//! - [`style`]: the stylesheet.
//! - [`figures`]: end-of-test numbers per direction (the report's `TestOutcome` flows) and
//!   their formatting.
//! - [`tables`]: run metadata, the per-phase summary and the comparison table.
//! - [`notes`]: verdicts and doctor findings, from their stored JSON.
//!
//! Output is a pure function of the input: no clock, no environment, no hash-map order, so
//! the same runs always give the same bytes.

pub mod figures;
pub mod notes;
pub mod style;
pub mod tables;

use std::fmt::Write as _;

use crate::escape::xml;
use crate::svg::{self, Chart, PhaseCharts};
use crate::view::{PhaseWatch, ReportInput, RunView};

/// A chart in a `<figure>`; `wide` ones span the whole row.
fn figure(out: &mut String, chart: &Chart, wide: bool) {
    let _ = write!(out, "<figure class=\"{}\">{}</figure>", if wide { "wide" } else { "half" }, svg::render_svg(chart));
}

fn phase_section(
    out: &mut String,
    name: &str,
    report: &wireperf_protocol::schema::TestReport,
    charts: &PhaseCharts,
    watch: Option<&PhaseWatch>,
) {
    let _ = write!(
        out,
        "<h3>{}<span class=\"figures\">{}</span></h3><div class=\"charts\">",
        xml(name),
        tables::phase_figures(report)
    );
    figure(out, &charts.throughput, true);
    // Two TCP charts sit side by side; a lone one takes the row.
    let pair = charts.retransmits.is_some() && charts.cwnd.is_some();
    for c in charts.retransmits.iter().chain(charts.cwnd.iter()) {
        figure(out, c, !pair);
    }
    // Latency under this load, right under its throughput.
    if let Some(c) = &charts.latency {
        figure(out, c, true);
    }
    // The bottleneck watch: both hosts' CPUs side by side, then what held the phase back.
    for c in &charts.cpu {
        figure(out, c, charts.cpu.len() == 1);
    }
    out.push_str("</div>");
    if let Some(b) = watch.and_then(|w| w.bottleneck.as_ref()) {
        out.push_str("<h4>Bottleneck</h4>");
        out.push_str(&notes::verdicts(b));
    }
}

fn run_section(out: &mut String, run: &RunView, charts: &[(String, PhaseCharts)]) {
    let _ =
        write!(out, "<section class=\"card run\" id=\"run-{}\"><h2>Run {}", crate::escape::slug(&run.id), xml(&run.id));
    if !run.label.is_empty() {
        let _ = write!(out, " <span class=\"label\">· {}</span>", xml(&run.label));
    }
    out.push_str("</h2>");
    out.push_str(&tables::run_meta(run));
    out.push_str(&tables::summary_table(run));
    if let Some(v) = &run.verdicts {
        out.push_str("<h3>Verdicts</h3>");
        out.push_str(&notes::verdicts(v));
    }
    for ((name, report), (_, c)) in run.phases.iter().zip(charts) {
        phase_section(out, name, report, c, run.watch_of(name));
    }
    if let Some(f) = &run.findings {
        let list = notes::findings(f);
        out.push_str("<h3>Doctor findings</h3>");
        if list.is_empty() {
            out.push_str("<p class=\"muted\">The doctor found nothing to fix on this link.</p>");
        } else {
            out.push_str(&list);
        }
    }
    out.push_str("</section>");
}

fn comparison_section(out: &mut String, runs: &[RunView]) {
    let _ = write!(
        out,
        "<section class=\"card compare\" id=\"comparison\"><h2>Comparison <span class=\"label\">· baseline {}</span></h2>",
        xml(&runs.first().map(RunView::display_name).unwrap_or_default())
    );
    if svg::series::shared_phases(runs).is_empty() {
        out.push_str("<p class=\"muted\">These runs have no phase in common.</p></section>");
        return;
    }
    out.push_str(&tables::comparison_table(runs));
    out.push_str("<div class=\"charts\" style=\"margin-top:14px\">");
    for chart in svg::overlay_charts(runs) {
        figure(out, &chart, true);
    }
    out.push_str("</div></section>");
}

/// Page title and the line under it.
fn heading(input: &ReportInput) -> (String, String) {
    match input.runs.as_slice() {
        [one] => {
            let phases: Vec<&str> = one.phases.iter().map(|(n, _)| n.as_str()).collect();
            let mut sub = vec![phases.join(", ")];
            sub.extend([one.time.clone(), one.host.clone()]);
            sub.retain(|s| !s.is_empty());
            (one.display_name(), sub.join(" · "))
        }
        runs => {
            let ids: Vec<&str> = runs.iter().map(|r| r.id.as_str()).collect();
            (format!("{} runs compared", runs.len()), format!("runs {}", ids.join(", ")))
        }
    }
}

/// Renders the whole report page.
pub fn render_html(input: &ReportInput) -> String {
    let (title, sub) = heading(input);
    let mut out = String::with_capacity(64 * 1024);
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <meta name=\"generator\" content=\"wireperf {ver}\">\
         <title>wireperf report: {t}</title><style>{css}</style></head><body>\
         <header class=\"page\"><div class=\"inner\"><h1><span class=\"brand\">wireperf</span> report: {t}</h1>\
         <span class=\"sub\">{s}</span></div></header><main>",
        ver = env!("CARGO_PKG_VERSION"),
        t = xml(&title),
        css = style::CSS,
        s = xml(&sub),
    );
    if input.runs.is_empty() {
        out.push_str("<section class=\"card\"><p class=\"muted\">No runs to show.</p></section>");
    }
    if input.runs.len() >= 2 {
        comparison_section(&mut out, &input.runs);
    }
    for (run, charts) in input.runs.iter().zip(svg::run_charts(input)) {
        run_section(&mut out, run, &charts);
    }
    let _ = writeln!(
        out,
        "<footer>Generated by wireperf {}. Charts are inline SVG; this file needs no network access.</footer></main></body></html>",
        env!("CARGO_PKG_VERSION")
    );
    out
}
