//! `wireperf history`: the arguments and the entry point the `cli` crate calls. This module
//! and [`crate::render`] are the only ones that make text for the user.

use std::fmt::Write as _;
use std::path::PathBuf;

use clap::{Args, Subcommand};
use serde_json::{Value, json};

use crate::error::StoreError;
use crate::model::{ListFilter, RunId, RunKind};
use crate::store::Store;
use crate::{import, render};

/// Past runs: list, show, compare, export, import, delete.
///
/// Every `wireperf -c` run (unless --no-save), suite and selftest is stored in an SQLite
/// database: $WIREPERF_DB if set, else $XDG_DATA_HOME/wireperf/history.sqlite, else
/// ~/.local/share/wireperf/history.sqlite. With no subcommand, lists the runs.
#[derive(Debug, Clone, Default, Args)]
pub struct HistoryArgs {
    /// What to do (default: list).
    #[command(subcommand)]
    pub command: Option<HistoryCommand>,
    /// Print JSON instead of text.
    #[arg(long, global = true)]
    pub json: bool,
    /// The history database file (overrides WIREPERF_DB and the default location).
    #[arg(long, global = true, value_name = "PATH")]
    pub db: Option<PathBuf>,
}

/// `wireperf history` subcommands.
#[derive(Debug, Clone, Subcommand)]
pub enum HistoryCommand {
    /// List stored runs, oldest first.
    List(ListArgs),
    /// Everything stored about one run: parameters, phases, streams, interval series.
    Show {
        /// Run id (from `history list`).
        id: RunId,
    },
    /// Two runs side by side, per phase, with the change in percent and what changed in the link.
    Compare {
        /// The earlier run (the baseline).
        a: RunId,
        /// The later run.
        b: RunId,
    },
    /// Write runs (all when no id is given) as one JSON document.
    Export {
        /// Run ids.
        ids: Vec<RunId>,
        /// Write to FILE instead of standard output.
        #[arg(short = 'o', long = "output", value_name = "FILE")]
        output: Option<PathBuf>,
    },
    /// Store iperf3 `-J` output files (client or server side, TCP or UDP) as runs.
    Import {
        /// iperf3 -J files, one test each.
        #[arg(required = true, value_name = "FILE")]
        files: Vec<PathBuf>,
        /// A label for the imported runs.
        #[arg(long)]
        label: Option<String>,
    },
    /// Delete one run.
    Delete {
        /// Run id.
        id: RunId,
    },
}

/// `history list` filters.
#[derive(Debug, Clone, Default, Args)]
pub struct ListArgs {
    /// Only the newest N runs.
    #[arg(short = 'n', long, value_name = "N")]
    pub limit: Option<u32>,
    /// Only runs of this kind: client, suite, selftest, import.
    #[arg(long, value_parser = ["client", "suite", "selftest", "import"])]
    pub kind: Option<String>,
    /// Only runs against this host (as stored: the address or name given to -c).
    #[arg(long, value_name = "HOST")]
    pub remote: Option<String>,
    /// Only runs with this label.
    #[arg(long)]
    pub label: Option<String>,
}

/// What a command printed and its exit status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Output {
    /// Text for standard output.
    pub stdout: String,
    /// Lines for standard error (per-file import failures).
    pub stderr: String,
    /// Exit status.
    pub code: i32,
}

fn ok(stdout: String) -> Output {
    Output { stdout, stderr: String::new(), code: 0 }
}

fn pretty(v: &impl serde::Serialize) -> Result<String, StoreError> {
    Ok(serde_json::to_string_pretty(v)? + "\n")
}

/// Runs a history command and returns what to print.
pub fn execute(a: &HistoryArgs) -> Result<Output, StoreError> {
    let mut store = Store::open_default(a.db.as_deref())?;
    let cmd = a.command.clone().unwrap_or(HistoryCommand::List(ListArgs::default()));
    match cmd {
        HistoryCommand::List(l) => {
            let filter = ListFilter {
                kind: l.kind.as_deref().and_then(RunKind::parse),
                remote_host: l.remote,
                label: l.label,
                since_unix: None,
                limit: l.limit,
            };
            let runs = store.list(&filter)?;
            Ok(ok(if a.json { pretty(&runs)? } else { render::list(&runs) }))
        }
        HistoryCommand::Show { id } => {
            let d = store.get(id)?;
            Ok(ok(if a.json { pretty(&d)? } else { render::show(&d) }))
        }
        HistoryCommand::Compare { a: x, b: y } => {
            let c = store.compare(x, y)?;
            Ok(ok(if a.json { pretty(&c)? } else { render::compare(&c) }))
        }
        HistoryCommand::Export { ids, output } => {
            let doc = pretty(&store.export(&ids)?)?;
            match output {
                None => Ok(ok(doc)),
                Some(path) => {
                    std::fs::write(&path, doc).map_err(|source| StoreError::Io { path: path.clone(), source })?;
                    let n = if ids.is_empty() { "all runs".to_string() } else { format!("{} run(s)", ids.len()) };
                    let text = if a.json {
                        pretty(&json!({ "file": path, "runs": ids }))?
                    } else {
                        format!("exported {n} to {}\n", path.display())
                    };
                    Ok(ok(text))
                }
            }
        }
        HistoryCommand::Import { files, label } => Ok(import_files(&mut store, &files, label, a.json)?),
        HistoryCommand::Delete { id } => {
            store.delete(id)?;
            Ok(ok(if a.json { pretty(&json!({ "deleted": id }))? } else { format!("deleted run {id}\n") }))
        }
    }
}

/// Imports each file; a bad file is reported and the others still imported (exit status 1).
fn import_files(
    store: &mut Store,
    files: &[PathBuf],
    label: Option<String>,
    as_json: bool,
) -> Result<Output, StoreError> {
    let mut out = Output { stdout: String::new(), stderr: String::new(), code: 0 };
    let mut results = Vec::new();
    for f in files {
        let name = f.display().to_string();
        let attempt =
            std::fs::read_to_string(f).map_err(|source| StoreError::Io { path: f.clone(), source }).and_then(|text| {
                let mut run = import::run_from_iperf3_json(&text, &name)?;
                run.label.clone_from(&label);
                store.insert_run(&run)
            });
        match attempt {
            Ok(id) => {
                results.push(json!({ "file": name, "id": id }));
                let _ = writeln!(out.stdout, "imported {name} as run {id}");
            }
            // A database that cannot be written fails the whole command at once.
            Err(e @ (StoreError::Locked { .. } | StoreError::Corrupt { .. } | StoreError::Sqlite(_))) => return Err(e),
            Err(e) => {
                results.push(json!({ "file": name, "error": e.to_string() }));
                let _ = writeln!(out.stderr, "wireperf: history import: {e}");
                out.code = 1;
            }
        }
    }
    if as_json {
        out.stdout = pretty(&Value::Array(results))?;
    }
    Ok(out)
}

/// Runs a history command, printing its output; returns the exit status.
pub fn run(a: &HistoryArgs) -> Result<i32, StoreError> {
    let out = execute(a)?;
    print!("{}", out.stdout);
    eprint!("{}", out.stderr);
    Ok(out.code)
}
