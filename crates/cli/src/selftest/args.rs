//! `wireperf selftest` flags.

use clap::Args;

/// `wireperf selftest`.
#[derive(Debug, Args)]
pub struct SelftestArgs {
    /// Seconds per phase.
    #[arg(short = 't', long = "time", value_parser = crate::shared::seconds::phase, default_value_t = 2)]
    pub time: u32,
    /// Parallel streams per phase.
    #[arg(short = 'P', long = "parallel", default_value_t = 1, value_parser = crate::shared::parallel::parse)]
    pub parallel: u32,
    /// Print the results (suite and doctor) as one JSON document.
    #[arg(long)]
    pub json: bool,
    /// Do not store the run in the history database.
    #[arg(long)]
    pub no_save: bool,
    /// History database (default: $WIREPERF_DB, else ~/.local/share/wireperf/history.sqlite).
    #[arg(long, value_name = "PATH")]
    pub db: Option<std::path::PathBuf>,
}
