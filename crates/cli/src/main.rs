//! The `wireperf` binary: parse, lower, run, map errors to exit codes.
//!
//! All of wireperf's command-line parsing lives in this crate; the libraries take typed
//! configurations. Each mode has a folder with its flags (`args.rs`, clap) and their lowering.
//!
//! # Layout
//! - `cli.rs` — the whole command line: iperf3's flags and the subcommands; [`cli::parse_from`].
//! - `shared/` — what several modes share: flag rules (`endpoint.rs`: `-c host%dev`, `-B`,
//!   `-4`/`-6`; `parallel.rs`: `-P`, iperf3's 1..=128; the latency and repeat flags), Ctrl-C
//!   (`signals.rs`) and the suite's and selftest's progress line (`progress.rs`, `indicatif`).
//! - `iperf/` — iperf3 mode: flags, the role check derived from them, the lowering into one
//!   typed run description (`run_spec.rs`), and running the client or server with its text,
//!   `-J`, `--tui` and log output (see its `mod.rs`).
//! - `iperf2/` — `--iperf2`: iperf 2's own flag set, lowered into the iperf2 crate's test.
//! - `suite/` — `wireperf suite`: flags, run and save, `render.rs` the text result.
//! - `selftest/` — `wireperf selftest`: the suite against an in-process server, plus the doctor.
//! - `doctor/`, `history/`, `exporter/` — those subcommands' flags, lowered into
//!   `wireperf_doctor::DoctorConfig`, `wireperf_store::HistoryRequest`,
//!   `wireperf_exporter::ExporterConfig`.
//! - `html_cmd.rs` — `wireperf report`: stored runs to HTML or SVG. `manual.rs` — `wireperf
//!   completions` and `wireperf man`, generated from the same clap definitions.
//!
//! Cargo features (`history`, `suite`, `exporter`, all on by default) leave out the history,
//! the suite/selftest and the exporter; `--no-default-features` is the small build.

#![forbid(unsafe_code)]

/// `println!` for stdout that ends quietly when its reader goes away (`wireperf_sys::stdout`):
/// `print!` would panic with a backtrace on the closed pipe of `wireperf … | head -1`.
macro_rules! outln {
    ($($arg:tt)*) => {{
        let _ = wireperf_sys::stdout::println(&format!($($arg)*));
    }};
}

/// `print!` through `wireperf_sys::stdout`, as [`outln!`].
macro_rules! out {
    ($($arg:tt)*) => {{
        let _ = wireperf_sys::stdout::print(&format!($($arg)*));
    }};
}

mod cli;
mod doctor;
#[cfg(feature = "exporter")]
mod exporter;
#[cfg(feature = "history")]
mod history;
#[cfg(feature = "history")]
mod html_cmd;
mod iperf;
mod iperf2;
mod manual;
#[cfg(feature = "suite")]
mod selftest;
mod shared;
#[cfg(feature = "suite")]
mod suite;

use std::process::ExitCode;

fn main() -> ExitCode {
    // Before any thread exists: one allocator arena instead of one per thread (the data loops
    // do not allocate; the arenas' resident pages grew with -P). docs/performance.md, Memory.
    wireperf_sys::malloc::limit_arenas(1);
    // iperf 2 mode has its own flag set (-d, -r, -L, -y ...) and its own parser (iperf2/).
    if std::env::args_os().nth(1).is_some_and(|a| a == "--iperf2") {
        // Its engine takes no interrupt flag (SIGINT keeps its default action there): with
        // nobody reading, it exits at once, as iperf 2 does on SIGPIPE, but quietly.
        wireperf_sys::stdout::on_reader_gone(|| std::process::exit(0));
        let code = iperf2::main_from_args(std::env::args_os().skip(2));
        return ExitCode::from(u8::try_from(code).unwrap_or(1));
    }
    if let Some((name, feature)) = std::env::args_os().nth(1).and_then(|a| cli::left_out(&a.to_string_lossy())) {
        eprintln!(
            "wireperf: error - `wireperf {name}` is not in this build (built without the cargo feature `{feature}`)"
        );
        return ExitCode::from(1);
    }
    // A closed stdout ends a running test or server as Ctrl-C would (the peer is told, the run
    // saved), and the process then exits 0 without a word (below).
    wireperf_sys::stdout::on_reader_gone(shared::signals::raise);
    let (cli, roles) = match cli::parse_from(std::env::args_os()) {
        Ok(c) => c,
        Err(e) => {
            // clap prints help/version to stdout (exit 0) and usage errors to stderr (exit 2);
            // iperf3 exits 1 on a bad option, so map that.
            let _ = e.print();
            return if e.use_stderr() { ExitCode::from(1) } else { ExitCode::SUCCESS };
        }
    };
    let code = match cli.command {
        #[cfg(feature = "suite")]
        Some(cli::Command::Selftest(a)) => selftest::run(&a),
        Some(cli::Command::Completions(a)) => manual::completions(&a, cli::command()),
        Some(cli::Command::Man(a)) => manual::man_pages(&a, cli::command()),
        #[cfg(feature = "suite")]
        Some(cli::Command::Suite(a)) => suite::run(&a),
        #[cfg(feature = "exporter")]
        Some(cli::Command::Exporter(a)) => exporter::run(&a),
        #[cfg(feature = "history")]
        Some(cli::Command::Report(a)) => html_cmd::run(&a),
        #[cfg(feature = "history")]
        Some(cli::Command::History(a)) => history::run(&a),
        Some(cli::Command::Doctor(a)) => doctor::run(&a),
        None => iperf::run(&cli.iperf, &roles),
    };
    // Ended because nobody reads the output any more: exit quietly, as `grep -q` and `head`
    // expect of the program they cut off.
    if wireperf_sys::stdout::reader_gone() {
        return ExitCode::SUCCESS;
    }
    ExitCode::from(u8::try_from(code).unwrap_or(1))
}
