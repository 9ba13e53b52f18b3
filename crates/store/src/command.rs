//! `wireperf history` as a library call: a typed [`HistoryRequest`] in, what to print and the
//! exit status out. This module and [`crate::render`] are the only ones that make text for the
//! user. (Its flags are parsed in the `cli` crate.)

use std::fmt::Write as _;
use std::path::PathBuf;

use serde_json::{Value, json};

use crate::error::StoreError;
use crate::model::{ListFilter, RunId};
use crate::store::Store;
use crate::{import, render};

/// One `wireperf history` request (the `cli` crate lowers its flags into this).
#[derive(Debug, Clone, Default)]
pub struct HistoryRequest {
    /// What to do.
    pub command: HistoryCommand,
    /// JSON instead of text.
    pub json: bool,
    /// The database file (else [`Store::open_default`]'s choice).
    pub db: Option<PathBuf>,
}

/// What a history request does.
#[derive(Debug, Clone)]
pub enum HistoryCommand {
    /// The runs the filter selects, oldest first.
    List(ListFilter),
    /// Everything stored about one run.
    Show(RunId),
    /// Two sides, each one run or several (a series' rounds): the baseline, then the later.
    Compare(Vec<RunId>, Vec<RunId>),
    /// Runs (all when `ids` is empty) as one JSON document, to `output` or standard output.
    Export {
        /// Run ids.
        ids: Vec<RunId>,
        /// The file to write.
        output: Option<PathBuf>,
    },
    /// iperf3 `-J` files stored as runs, each with `label`.
    Import {
        /// iperf3 -J files, one test each.
        files: Vec<PathBuf>,
        /// A label for the imported runs.
        label: Option<String>,
    },
    /// Delete one run.
    Delete(RunId),
}

impl Default for HistoryCommand {
    fn default() -> Self {
        HistoryCommand::List(ListFilter::default())
    }
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
pub fn execute(a: &HistoryRequest) -> Result<Output, StoreError> {
    let mut store = Store::open_default(a.db.as_deref())?;
    match a.command.clone() {
        HistoryCommand::List(filter) => {
            let runs = store.list(&filter)?;
            Ok(ok(if a.json { pretty(&runs)? } else { render::list(&runs) }))
        }
        HistoryCommand::Show(id) => {
            let d = store.get(id)?;
            Ok(ok(if a.json { pretty(&d)? } else { render::show(&d) }))
        }
        HistoryCommand::Compare(x, y) => {
            let c = store.compare_sets(&x, &y)?;
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
        HistoryCommand::Delete(id) => {
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
