//! The `wireperf` binary: parse, lower, run, map errors to exit codes.

#![forbid(unsafe_code)]

mod cli;
mod client_cmd;
mod debug_out;
mod iperf;
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
    // iperf 2 mode has its own flag set (-d, -r, -L, -y ...), parsed by its crate.
    if std::env::args_os().nth(1).is_some_and(|a| a == "--iperf2") {
        let code = wireperf_iperf2::cli::main_from_args(std::env::args_os().skip(2));
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
        Some(cli::Command::Exporter(a)) => match wireperf_exporter::cli::run(&a) {
            Ok(()) => 0,
            Err(e) => {
                eprintln!("wireperf: exporter error - {e}");
                1
            }
        },
        Some(cli::Command::Report(a)) => report_cmd::run(&a),
        Some(cli::Command::History(a)) => wireperf_store::cli::run(&a).unwrap_or_else(|e| {
            eprintln!("wireperf: history error - {e}");
            1
        }),
        Some(cli::Command::Doctor(a)) => match wireperf_doctor::cli::run(&a) {
            Ok(code) => code,
            Err(e) => {
                // 3, not 1: exit 1 and 2 already mean "a warn/crit finding".
                eprintln!("wireperf: doctor error - {e}");
                3
            }
        },
        None => iperf::run(&cli.iperf, &roles),
    };
    ExitCode::from(u8::try_from(code).unwrap_or(1))
}
