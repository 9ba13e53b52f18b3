//! `wireperf history` flags, and their lowering into a [`HistoryRequest`].

use clap::{Args, Subcommand};
use std::path::PathBuf;
use wireperf_store::{HistoryCommand, HistoryRequest, ListFilter, RunId, RunKind};

/// Past runs: list, show, compare, export, import, delete.
///
/// Every `wireperf -c` run (unless --no-save), suite and selftest is stored in an SQLite
/// database: $WIREPERF_DB if set, else $XDG_DATA_HOME/wireperf/history.sqlite, else
/// ~/.local/share/wireperf/history.sqlite. With no subcommand, lists the runs.
#[derive(Debug, Clone, Default, Args)]
pub struct HistoryArgs {
    /// What to do (default: list).
    #[command(subcommand)]
    pub command: Option<HistoryCmd>,
    /// Print JSON instead of text.
    #[arg(long, global = true)]
    pub json: bool,
    /// The history database file (overrides WIREPERF_DB and the default location).
    #[arg(long, global = true, value_name = "PATH")]
    pub db: Option<PathBuf>,
}

/// `wireperf history` subcommands.
#[derive(Debug, Clone, Subcommand)]
pub enum HistoryCmd {
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

impl HistoryArgs {
    /// Lowers the flags into the store's request.
    pub fn request(&self) -> HistoryRequest {
        let command = match self.command.clone() {
            None => HistoryCommand::default(),
            Some(HistoryCmd::List(l)) => HistoryCommand::List(ListFilter {
                kind: l.kind.as_deref().and_then(RunKind::parse),
                remote_host: l.remote,
                label: l.label,
                since_unix: None,
                limit: l.limit,
            }),
            Some(HistoryCmd::Show { id }) => HistoryCommand::Show(id),
            Some(HistoryCmd::Compare { a, b }) => HistoryCommand::Compare(a, b),
            Some(HistoryCmd::Export { ids, output }) => HistoryCommand::Export { ids, output },
            Some(HistoryCmd::Import { files, label }) => HistoryCommand::Import { files, label },
            Some(HistoryCmd::Delete { id }) => HistoryCommand::Delete(id),
        };
        HistoryRequest { command, json: self.json, db: self.db.clone() }
    }
}
