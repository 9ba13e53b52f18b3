//! wireperf's run history: every client run, suite and selftest in one SQLite file, so a
//! result can be looked at, compared with last week's and drawn later.
//!
//! ```no_run
//! use wireperf_store::{ListFilter, NewRun, RunKind, Store};
//! # fn demo(report: wireperf_protocol::schema::TestReport) -> Result<(), wireperf_store::StoreError> {
//! let mut store = Store::open_default(None)?;
//! let id = store.insert_run(&NewRun::single(RunKind::Client, Some("wireperf -c host".into()), report))?;
//! let runs = store.list(&ListFilter::default())?;
//! let detail = store.get(id)?; // phases, interval series, per-stream totals, full -J documents
//! # let _ = (runs, detail); Ok(()) }
//! ```
//!
//! # Layout
//! - `error.rs` — [`StoreError`], in words a user understands; the file is never touched to fix it.
//! - `model.rs` — the data model: [`NewRun`]/[`NewPhase`] in; [`RunSummary`], [`RunDetail`],
//!   [`PhaseDetail`], [`IntervalRow`], [`StreamRow`] out; [`RunId`], [`RunKind`], [`Direction`].
//! - `extract.rs` — pure: the stored figures (read from the report's
//!   [`TestOutcome`](wireperf_protocol::TestOutcome)), interval series and stream totals.
//! - `migrate.rs` — versioned schema migrations ([`SCHEMA_VERSION`]), one transaction each.
//! - `store.rs` — [`Store`]: safe open (corrupt, locked, newer files refused untouched) and
//!   [`Store::insert_run`] in one transaction, [`Store::insert_series`] (a repeat series: a head
//!   with the statistics, its rounds as runs of their own).
//! - `query.rs` — [`Store::list`], [`Store::get`], [`Store::delete`].
//! - `compare.rs` — [`Comparison`]: per-phase metrics side by side, link changes.
//! - `link.rs` — link facts and finding ids read from the stored doctor JSON.
//! - `import.rs` — [`Store::import_iperf3_json`]: a stock iperf3 `-J` file as a run.
//! - `export.rs` — [`Store::export`]: runs as one JSON document.
//! - `client.rs` — [`save_client_run`], the call `wireperf -c` makes.
//! - `path.rs` — [`default_db_path`]. `time.rs` — RFC 3339 text of unix times.
//! - `render.rs` — text tables for list/show/compare. `command.rs` — `wireperf history` as a
//!   library call ([`HistoryRequest`] in, [`Output`] out; its flags are parsed in `cli`).

#![forbid(unsafe_code)]

mod client;
mod command;
pub mod compare;
mod error;
mod export;
mod extract;
mod import;
pub mod link;
mod migrate;
mod model;
mod path;
mod query;
pub mod render;
pub mod significance;
mod store;
mod time;

pub use client::{current_command_line, save_client_run};
pub use command::{HistoryCommand, HistoryRequest, Output, execute};
pub use compare::{Comparison, LinkChange, LinkComparison, MetricDelta, PhaseComparison, Unit};
pub use error::StoreError;
pub use export::EXPORT_SCHEMA;
pub use extract::{PhaseFigures, interval_rows, phase_figures, stream_rows};
pub use import::run_from_iperf3_json;
pub use migrate::{MIGRATIONS, SCHEMA_VERSION};
pub use model::{
    Direction, Figures, IntervalRow, ListFilter, NewPhase, NewRun, NewSeries, PhaseDetail, RunDetail, RunId, RunKind,
    RunSummary, SeriesIds, Side, StreamRow, phase_name_for,
};
pub use path::{FILE_NAME, default_db_path};
pub use store::{OpenOptions, Store};
pub use time::rfc3339_utc;
