//! The `wireperf` binary: parse, lower, run, map errors to exit codes.

#![forbid(unsafe_code)]

mod cli;
mod client_cmd;
mod debug_out;
mod doctor;
mod exporter;
mod history;
mod iperf;
mod iperf2;
mod json_out;
mod manual;
mod output;
mod progress;
mod report_cmd;
mod selftest;
mod server_cmd;
mod server_log;
mod shared;
mod signals;
mod suite;
mod text_out;

use std::process::ExitCode;

fn main() -> ExitCode {
    // iperf 2 mode has its own flag set (-d, -r, -L, -y ...) and its own parser (iperf2/).
    if std::env::args_os().nth(1).is_some_and(|a| a == "--iperf2") {
        let code = iperf2::main_from_args(std::env::args_os().skip(2));
        return ExitCode::from(u8::try_from(code).unwrap_or(1));
    }
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
        Some(cli::Command::Selftest(a)) => selftest::run(&a),
        Some(cli::Command::Completions(a)) => manual::completions(&a),
        Some(cli::Command::Man(a)) => manual::man_pages(&a),
        Some(cli::Command::Suite(a)) => suite::run(&a),
        Some(cli::Command::Exporter(a)) => exporter::run(&a),
        Some(cli::Command::Report(a)) => report_cmd::run(&a),
        Some(cli::Command::History(a)) => history::run(&a),
        Some(cli::Command::Doctor(a)) => doctor::run(&a),
        None => iperf::run(&cli.iperf, &roles),
    };
    ExitCode::from(u8::try_from(code).unwrap_or(1))
}
