//! The whole command line: iperf3's flags at the top level, wireperf's own modes as
//! subcommands. Each mode's flags live in its folder; [`parse_from`] also reports which role-specific
//! iperf3 flags were given ([`crate::iperf::roles`]).

use crate::iperf::roles::RoleFlags;
use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use std::ffi::OsString;

/// wireperf: an iperf3-compatible network throughput tester with a link doctor.
///
/// Any iperf3 command line works with `iperf3` replaced by `wireperf` (`wireperf -s`,
/// `wireperf -c HOST -R -P 4 -J`). New abilities are subcommands.
#[derive(Debug, Parser)]
#[command(
    name = "wireperf",
    disable_version_flag = true,
    args_conflicts_with_subcommands = true,
    max_term_width = 100,
    after_help = "Sizes (-l, -n, -w) take binary K/M/G/T suffixes (K = 1024); rates (-b) take decimal ones (K = 1000), as in iperf3."
)]
pub struct Cli {
    /// iperf3-compatible client/server flags.
    #[command(flatten)]
    pub iperf: crate::iperf::args::IperfArgs,
    /// wireperf's own commands.
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// Subcommands beyond iperf3.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run a server in-process on 127.0.0.1 and test upload, download and bidir against it.
    #[cfg(feature = "suite")]
    Selftest(crate::selftest::SelftestArgs),
    /// Upload, download and bidir (and UDP) against a server, judged against the link.
    #[cfg(feature = "suite")]
    Suite(Box<crate::suite::SuiteArgs>),
    /// Explain why a network link is slow, and how to fix it.
    Doctor(crate::doctor::DoctorArgs),
    /// Prometheus exporter: /probe runs one test per scrape, /metrics has its own counters.
    #[cfg(feature = "exporter")]
    Exporter(crate::exporter::ExporterArgs),
    /// Past runs: list, show, compare, export, import iperf3 -J files, delete.
    #[cfg(feature = "history")]
    History(crate::history::HistoryArgs),
    /// Draw stored runs as one self-contained HTML page (--html) or SVG charts (--svg).
    #[cfg(feature = "history")]
    Report(crate::html_cmd::HtmlArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell) to stdout.
    Completions(crate::manual::CompletionsArgs),
    /// Write man pages for wireperf and each subcommand into a directory.
    Man(crate::manual::ManArgs),
}

/// The subcommand `name` and the cargo feature it needs, when this build left it out (the small
/// build: `--no-default-features`), so the user hears why instead of "unexpected argument".
pub fn left_out(name: &str) -> Option<(&'static str, &'static str)> {
    let all: [(&'static str, &'static str, bool); 5] = [
        ("selftest", "suite", cfg!(feature = "suite")),
        ("suite", "suite", cfg!(feature = "suite")),
        ("exporter", "exporter", cfg!(feature = "exporter")),
        ("history", "history", cfg!(feature = "history")),
        ("report", "history", cfg!(feature = "history")),
    ];
    all.into_iter().find(|(n, _, built)| *n == name && !built).map(|(n, f, _)| (n, f))
}

/// The whole command line's definition, for the completions and man pages (`manual.rs`).
pub fn command() -> clap::Command {
    Cli::command()
}

/// Parses a command line (`argv[0]` first) into the flags and the role-specific flags given.
pub fn parse_from<I, T>(argv: I) -> Result<(Cli, RoleFlags), clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let mut cmd = Cli::command();
    let matches = cmd.try_get_matches_from_mut(argv)?;
    let mut cli = Cli::from_arg_matches(&matches).map_err(|e| e.format(&mut cmd))?;
    cli.iperf.settle_protocol(&matches);
    let roles = RoleFlags::given(&cmd, &matches);
    Ok((cli, roles))
}
