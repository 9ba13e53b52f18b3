//! `wireperf completions SHELL` and `wireperf man --out DIR`: shell completions and man pages
//! generated from the same clap definitions that parse the command line, so they can never
//! describe a flag that does not exist (or miss one that does). The Debian package installs
//! both (scripts/package-deb).
//!
//! The command line comes in as a [`clap::Command`] (`crate::cli::command`): `cli.rs` names
//! these subcommands' flags, so this file does not reach back for the whole command line.

use clap::{Args, Command};
use clap_complete::Shell;
use std::path::{Path, PathBuf};

/// `wireperf completions SHELL`.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    pub shell: Shell,
}

/// `wireperf man --out DIR`.
#[derive(Debug, Args)]
pub struct ManArgs {
    /// Directory to write `wireperf.1` and `wireperf-SUBCOMMAND.1` into (created if missing).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
}

/// Prints the completion script of `cmd` (the whole command line) for `a.shell` to stdout.
pub fn completions(a: &CompletionsArgs, mut cmd: Command) -> i32 {
    // Into memory first: clap_complete panics when its writer fails (a closed pipe).
    let mut script = Vec::new();
    clap_complete::generate(a.shell, &mut cmd, "wireperf", &mut script);
    out!("{}", String::from_utf8_lossy(&script));
    0
}

/// Writes the man pages of `cmd` (the whole command line); prints each path written.
pub fn man_pages(a: &ManArgs, cmd: Command) -> i32 {
    match write_man_pages(&a.out, cmd) {
        Ok(paths) => {
            for p in paths {
                outln!("{}", p.display());
            }
            0
        }
        Err(e) => {
            eprintln!("wireperf: man error - {}: {e}", a.out.display());
            1
        }
    }
}

/// `wireperf.1` for the binary (the iperf3 flags) and one page per visible subcommand, named
/// as git and cargo name theirs (`wireperf-suite.1`).
fn write_man_pages(dir: &Path, cmd: Command) -> std::io::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir)?;
    let cmd = cmd.version(env!("CARGO_PKG_VERSION"));
    let mut written = Vec::new();
    let top = dir.join("wireperf.1");
    let mut buf = Vec::new();
    clap_mangen::Man::new(cmd.clone()).render(&mut buf)?;
    std::fs::write(&top, buf)?;
    written.push(top);
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        let name = format!("wireperf-{}", sub.get_name());
        let page = sub.clone().name(name.clone()).version(env!("CARGO_PKG_VERSION"));
        let mut buf = Vec::new();
        clap_mangen::Man::new(page).render(&mut buf)?;
        let path = dir.join(format!("{name}.1"));
        std::fs::write(&path, buf)?;
        written.push(path);
    }
    Ok(written)
}
