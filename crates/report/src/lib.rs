//! Pure renderers: what iperf3 3.12 prints, byte for byte, and HTML/SVG reports, from
//! wireperf's typed data.
//!
//! No sockets and no clocks: every function takes the `-J` schema types of
//! `wireperf-protocol` (plus a small [`TextContext`] for what the schema does not say) and
//! returns text. Users diff and parse iperf3's output, so fidelity is checked against real
//! captured samples, trailing spaces included.
//!
//! # Layout
//! - [`units`]: iperf3's unit conventions both ways: `unit_snprintf` ([`format_unit`]), C
//!   `%g` ([`format_g`]), cJSON numbers ([`format_c_number`]), and the `-n 20M` / `-b 100M/10`
//!   parsers.
//! - [`cjson`]: a `serde_json` formatter printing any `Serialize` value in cJSON's tab layout,
//!   i.e. iperf3's `-J` output ([`to_cjson_string`]).
//! - [`text`]: the text renderer: [`text::lines`] (every format string),
//!   [`text::interval`] (one reporting interval), [`text::summary`] (the end-of-test block),
//!   [`text::preamble`] (connecting, connected, banner, `-V` details, `iperf Done.`) and
//!   [`text::prefix`] (`--timestamps` and `-T`).
//! - [`view`]: what a report page is drawn from ([`ReportInput`], [`RunView`]): plain values,
//!   independent of the history store.
//! - [`svg`]: hand-written SVG charts (throughput per stream and sum, retransmits, cwnd, run
//!   overlays, both hosts' per-CPU load from the bottleneck watch) with nice axes and stable colours ([`render_svg`], [`all_charts`]).
//! - [`html`]: the self-contained HTML report ([`render_html`]): metadata, summary table,
//!   charts, verdicts, doctor findings, comparison. Its end-of-test figures are the report's
//!   [`TestOutcome`](wireperf_protocol::TestOutcome); human rates and changes are
//!   `wireperf_protocol::outcome::words`.
//! - `escape`: XML escaping and slugs shared by both.
#![forbid(unsafe_code)]

pub mod cjson;
mod escape;
pub mod html;
pub mod svg;
pub mod text;
pub mod units;
pub mod view;

pub use cjson::{CJsonFormatter, to_cjson_compact_string, to_cjson_string};
pub use html::render_html;
pub use svg::{Chart, all_charts, render_svg};
pub use text::interval::{render_interval, render_intervals};
pub use text::prefix::{Printed, prefix_lines};
pub use text::summary::{render_summary, render_summary_calls};
pub use text::{Role, TextContext};
pub use units::{UnitError, format_c_number, format_g, format_unit, parse_rate, parse_rate_burst, parse_size};
pub use view::{PhaseWatch, ReportInput, RunView};
