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

/// Most runs a side of `compare` takes (a series is capped at 100 rounds).
const MAX_RUN_SET: i64 = 100;

/// One side of `compare`: its runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunSet(pub Vec<RunId>);

/// `7`, `3,4,5`, `3-5` (ranges and lists may mix: `1-3,9`).
fn parse_run_set(s: &str) -> Result<RunSet, String> {
    let mut out = Vec::new();
    for part in s.split(',').map(str::trim) {
        let bad = || format!("{part:?} is not a run id or FIRST-LAST range (e.g. 7, 3,4,5 or 3-5)");
        let (lo, hi) = match part.split_once('-') {
            Some((a, b)) => (a.parse::<RunId>().map_err(|_| bad())?, b.parse::<RunId>().map_err(|_| bad())?),
            None => {
                let id = part.parse::<RunId>().map_err(|_| bad())?;
                (id, id)
            }
        };
        if hi.0 < lo.0 {
            return Err(format!("{part:?}: the range ends before it starts"));
        }
        if hi.0 - lo.0 + 1 + out.len() as i64 > MAX_RUN_SET {
            return Err(format!("at most {MAX_RUN_SET} runs a side"));
        }
        out.extend((lo.0..=hi.0).map(RunId));
    }
    Ok(RunSet(out))
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
    /// Two runs side by side, per phase, with the change in percent, what changed in the link,
    /// and whether each direction's change is beyond noise.
    ///
    /// Each side is one run or several (`3,4,5` or `3-5`); a `--repeat` series' id stands
    /// for its counted rounds.
    /// With two runs or more a side, each direction gets the change of the means with its 95 %
    /// confidence interval and Welch's t-test p-value; with one run a side it says that one run
    /// cannot tell noise from change, and how many runs would.
    Compare {
        /// The earlier run(s), the baseline: ID, ID,ID,... or FIRST-LAST.
        #[arg(value_parser = parse_run_set, value_name = "A")]
        a: RunSet,
        /// The later run(s), as A.
        #[arg(value_parser = parse_run_set, value_name = "B")]
        b: RunSet,
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
    /// Also list the rounds of repeat series (by default a series is one line, its means).
    #[arg(long)]
    pub rounds: bool,
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
                members: l.rounds,
            }),
            Some(HistoryCmd::Show { id }) => HistoryCommand::Show(id),
            Some(HistoryCmd::Compare { a, b }) => HistoryCommand::Compare(a.0, b.0),
            Some(HistoryCmd::Export { ids, output }) => HistoryCommand::Export { ids, output },
            Some(HistoryCmd::Import { files, label }) => HistoryCommand::Import { files, label },
            Some(HistoryCmd::Delete { id }) => HistoryCommand::Delete(id),
        };
        HistoryRequest { command, json: self.json, db: self.db.clone() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_sets_take_ids_lists_and_ranges() {
        let ids = |v: &[i64]| RunSet(v.iter().copied().map(RunId).collect());
        assert_eq!(parse_run_set("7").unwrap(), ids(&[7]));
        assert_eq!(parse_run_set("3,4,5").unwrap(), ids(&[3, 4, 5]));
        assert_eq!(parse_run_set("1-3,9").unwrap(), ids(&[1, 2, 3, 9]));
        assert!(parse_run_set("5-3").unwrap_err().contains("ends before"));
        assert!(parse_run_set("x").unwrap_err().contains("not a run id"));
        assert!(parse_run_set("1-1000000").unwrap_err().contains("at most 100"));
    }
}
