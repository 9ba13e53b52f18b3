//! Drawing one [`Chart`] as a standalone SVG document.
//!
//! Every style is an attribute on the element (no `<style>`, no classes needed for looks),
//! so the same markup renders identically as a file from `--svg` and inline in the HTML
//! page, and no CSS in the page can leak into it. Coordinates are printed with one decimal:
//! plenty for a screen and the same bytes on every machine.

use std::fmt::Write as _;

use super::chart::{Chart, Sample, SeriesKind};
use super::scale::{self, AxisUnit, Ticks};
use crate::escape::xml;

/// Font stack: installed system fonts only (the page must render offline).
pub const FONT_FAMILY: &str =
    "system-ui, -apple-system, 'Segoe UI', Roboto, 'DejaVu Sans', 'Liberation Sans', Arial, sans-serif";

/// Chart title and legend text.
const INK: &str = "#1e293b";
/// Tick labels and axis titles.
const MUTED: &str = "#475569";
/// Grid lines.
const GRID: &str = "#e2e8f0";
/// The x axis line.
const AXIS: &str = "#94a3b8";

/// Smallest left margin (the y axis labels may need more).
const PAD_LEFT: f64 = 56.0;
const PAD_RIGHT: f64 = 22.0;
const PAD_BOTTOM: f64 = 48.0;
const TITLE_Y: f64 = 26.0;
const LEGEND_Y: f64 = 50.0;
const LEGEND_ROW: f64 = 20.0;
/// Average advance of a 12 px sans-serif character, to lay legend items out without fonts.
const CHAR_W: f64 = 6.8;
/// Share of an interval that the bars of one sample fill.
const BAR_FILL: f64 = 0.72;

/// `v` with one decimal, never `-0.0`.
fn n(v: f64) -> String {
    let s = format!("{v:.1}");
    if s == "-0.0" { "0.0".to_string() } else { s }
}

/// Where the plot area is, in SVG units.
struct Frame {
    left: f64,
    right: f64,
    top: f64,
    bottom: f64,
    x: Ticks,
    y: Ticks,
}

impl Frame {
    fn px(&self, t: f64) -> f64 {
        self.left + (self.right - self.left) * (t / self.x.max).clamp(0.0, 1.0)
    }
    fn py(&self, v: f64) -> f64 {
        self.bottom - (self.bottom - self.top) * (v / self.y.max).clamp(0.0, 1.0)
    }
}

/// Legend items placed in rows; returns the markup and the y below the last row.
fn legend(chart: &Chart, left: f64) -> (String, f64) {
    let mut out = String::from("<g class=\"legend\">");
    let (mut x, mut y) = (left, LEGEND_Y);
    let limit = chart.width - PAD_RIGHT;
    for s in &chart.series {
        let w = 18.0 + 6.0 + CHAR_W * s.name.chars().count() as f64 + 18.0;
        if x > left && x + w > limit {
            x = left;
            y += LEGEND_ROW;
        }
        let swatch = match s.kind {
            SeriesKind::Bar => format!(
                "<rect class=\"swatch\" x=\"{}\" y=\"{}\" width=\"10\" height=\"10\" rx=\"2\" fill=\"{}\"/>",
                n(x + 4.0),
                n(y - 9.0),
                s.colour
            ),
            SeriesKind::Line | SeriesKind::Emphasis => format!(
                "<line class=\"swatch\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" stroke-width=\"3\" stroke-linecap=\"round\"/>",
                n(x + 1.0),
                n(y - 4.0),
                n(x + 17.0),
                n(y - 4.0),
                s.colour
            ),
        };
        let _ =
            write!(out, "{swatch}<text x=\"{}\" y=\"{}\" fill=\"{INK}\">{}</text>", n(x + 24.0), n(y), xml(&s.name));
        x += w;
    }
    out.push_str("</g>");
    (out, y)
}

/// The grid, tick labels and axis titles.
fn axes(chart: &Chart, f: &Frame) -> String {
    let mut out = String::from("<g class=\"grid\">");
    for v in &f.y.values {
        let y = n(f.py(*v));
        let _ = write!(
            out,
            "<line x1=\"{}\" y1=\"{y}\" x2=\"{}\" y2=\"{y}\" stroke=\"{GRID}\" stroke-width=\"1\"/>",
            n(f.left),
            n(f.right)
        );
    }
    out.push_str("</g><g class=\"axis y-axis\" fill=\"");
    out.push_str(MUTED);
    out.push_str("\" font-size=\"11\" text-anchor=\"end\">");
    for (v, label) in f.y.values.iter().zip(&f.y.labels) {
        let _ = write!(out, "<text x=\"{}\" y=\"{}\">{}</text>", n(f.left - 8.0), n(f.py(*v) + 4.0), xml(label));
    }
    let _ = write!(
        out,
        "</g><g class=\"axis x-axis\" fill=\"{MUTED}\" font-size=\"11\" text-anchor=\"middle\">\
         <line x1=\"{}\" y1=\"{b}\" x2=\"{}\" y2=\"{b}\" stroke=\"{AXIS}\" stroke-width=\"1\"/>",
        n(f.left),
        n(f.right),
        b = n(f.bottom)
    );
    for (v, label) in f.x.values.iter().zip(&f.x.labels) {
        let x = n(f.px(*v));
        let _ = write!(
            out,
            "<line x1=\"{x}\" y1=\"{}\" x2=\"{x}\" y2=\"{}\" stroke=\"{AXIS}\" stroke-width=\"1\"/>\
             <text x=\"{x}\" y=\"{}\">{}</text>",
            n(f.bottom),
            n(f.bottom + 5.0),
            n(f.bottom + 18.0),
            xml(label)
        );
    }
    let mid_y = n((f.top + f.bottom) / 2.0);
    let _ = write!(
        out,
        "</g><text class=\"axis-label x-label\" x=\"{}\" y=\"{}\" fill=\"{MUTED}\" font-size=\"11\" text-anchor=\"middle\">Time (s)</text>\
         <text class=\"axis-label y-label\" x=\"16\" y=\"{mid_y}\" transform=\"rotate(-90 16 {mid_y})\" fill=\"{MUTED}\" font-size=\"11\" text-anchor=\"middle\">{}</text>",
        n((f.left + f.right) / 2.0),
        n(chart.height - 10.0),
        xml(&chart.y_label)
    );
    out
}

/// A line through the middle of each sample (a lone sample spans its interval).
fn line_path(f: &Frame, samples: &[Sample]) -> String {
    let mut d = String::new();
    if let [only] = samples {
        let y = n(f.py(only.value));
        let _ = write!(d, "M{},{y}L{},{y}", n(f.px(only.start)), n(f.px(only.end)));
        return d;
    }
    for (i, s) in samples.iter().enumerate() {
        let cmd = if i == 0 { 'M' } else { 'L' };
        let _ = write!(d, "{cmd}{},{}", n(f.px((s.start + s.end) / 2.0)), n(f.py(s.value)));
    }
    d
}

/// All bars of one series as one path (one rectangle per non-zero sample), placed in slot
/// `slot` of `slots` side-by-side positions within each interval.
fn bar_path(f: &Frame, samples: &[Sample], slot: usize, slots: usize) -> String {
    let mut d = String::new();
    for s in samples.iter().filter(|s| s.value > 0.0) {
        let (x0, x1) = (f.px(s.start), f.px(s.end));
        let inner = (x1 - x0) * BAR_FILL;
        let w = inner / slots.max(1) as f64;
        let x = x0 + (x1 - x0 - inner) / 2.0 + w * slot as f64;
        let y = f.py(s.value);
        let _ = write!(d, "M{},{}h{}V{}h{}Z", n(x), n(f.bottom), n(w), n(y), n(-w));
    }
    d
}

/// Tooltip/summary text of a series.
fn series_summary(unit: AxisUnit, name: &str, samples: &[Sample], mean: f64, max: f64) -> String {
    match (unit, samples.len()) {
        (_, 0) => format!("{name}: no data"),
        (AxisUnit::Count, _) => {
            let total: f64 = samples.iter().map(|s| s.value).sum();
            format!("{name}: {} in total, at most {} per interval", total.round(), max.round())
        }
        _ => format!("{name}: mean {}, max {}", scale::value_label(unit, mean), scale::value_label(unit, max)),
    }
}

/// Renders `chart` as a standalone SVG document (also valid inline in HTML5).
pub fn render_svg(chart: &Chart) -> String {
    let (w, h) = (chart.width, chart.height);
    let id = xml(&chart.id);
    let y = scale::ticks(chart.y_unit, chart.y_max());
    // Room for the rotated axis title plus the widest tick label (11 px digits ≈ 6.4 px).
    let widest = y.labels.iter().map(|l| l.chars().count()).max().unwrap_or(1);
    let left = (34.0 + 6.4 * widest as f64).max(PAD_LEFT);
    let (legend_svg, legend_bottom) = legend(chart, left);
    let frame = Frame {
        left,
        right: w - PAD_RIGHT,
        top: legend_bottom + 16.0,
        bottom: h - PAD_BOTTOM,
        x: scale::ticks(AxisUnit::Seconds, chart.x_max()),
        y,
    };
    let summaries: Vec<String> =
        chart.series.iter().map(|s| series_summary(chart.y_unit, &s.name, &s.samples, s.mean(), s.max())).collect();
    let mut out = String::with_capacity(8192);
    let _ = write!(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" id=\"{id}\" viewBox=\"0 0 {w} {h}\" \
         width=\"{w}\" height=\"{h}\" role=\"img\" aria-labelledby=\"{id}-title {id}-desc\" \
         font-family=\"{FONT_FAMILY}\" font-size=\"12\">\
         <title id=\"{id}-title\">{title}</title>\
         <desc id=\"{id}-desc\">{desc}</desc>\
         <rect class=\"background\" width=\"{w}\" height=\"{h}\" fill=\"#ffffff\"/>\
         <text class=\"chart-title\" x=\"16\" y=\"{ty}\" fill=\"{INK}\" font-size=\"15\" font-weight=\"600\">{title}</text>",
        w = n(w),
        h = n(h),
        title = xml(&chart.title),
        desc = xml(&format!("{} {}.", chart.description, summaries.join("; "))),
        ty = n(TITLE_Y),
    );
    out.push_str(&legend_svg);
    out.push_str(&axes(chart, &frame));
    out.push_str("<g class=\"plot\">");
    let bar_count = chart.series.iter().filter(|s| s.kind == SeriesKind::Bar).count();
    let mut bar_slot = 0;
    for (s, summary) in chart.series.iter().zip(&summaries) {
        let (kind, d, paint) = match s.kind {
            SeriesKind::Bar => {
                let d = bar_path(&frame, &s.samples, bar_slot, bar_count);
                bar_slot += 1;
                ("bar", d, format!("fill=\"{}\"", s.colour))
            }
            SeriesKind::Line | SeriesKind::Emphasis => {
                let width = if s.kind == SeriesKind::Emphasis { "3" } else { "2" };
                (
                    "line",
                    line_path(&frame, &s.samples),
                    format!(
                        "fill=\"none\" stroke=\"{}\" stroke-width=\"{width}\" stroke-linejoin=\"round\" stroke-linecap=\"round\"",
                        s.colour
                    ),
                )
            }
        };
        let _ = write!(
            out,
            "<path class=\"series\" data-kind=\"{kind}\" data-name=\"{}\" d=\"{d}\" {paint}><title>{}</title></path>",
            xml(&s.name),
            xml(summary)
        );
    }
    out.push_str("</g>");
    if chart.series.iter().all(|s| s.max() <= 0.0) {
        let _ = write!(
            out,
            "<text class=\"empty-note\" x=\"{}\" y=\"{}\" fill=\"{MUTED}\" font-size=\"13\" text-anchor=\"middle\">No {} in this phase</text>",
            n((frame.left + frame.right) / 2.0),
            n((frame.top + frame.bottom) / 2.0),
            xml(&chart.y_label.to_lowercase())
        );
    }
    out.push_str("</svg>");
    out
}
