//! The `wireperf` binary: parse, lower, run, map errors to exit codes.

#![forbid(unsafe_code)]

mod args;
mod args_server;
mod auth_cmd;
mod client_cmd;
mod debug_out;
mod json_out;
mod lower;
mod lower_server;
mod lower_zerocopy;
mod manual;
mod output;
mod progress;
mod report_cmd;
mod selftest;
mod server_cmd;
mod server_log;
mod signals;
mod suite_cmd;
mod text_out;

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    // iperf 2 mode has its own flag set (-d, -r, -L, -y ...), parsed by its crate.
    if std::env::args_os().nth(1).is_some_and(|a| a == "--iperf2") {
        let code = wireperf_iperf2::cli::main_from_args(std::env::args_os().skip(2));
        return ExitCode::from(u8::try_from(code).unwrap_or(1));
    }
    let cli = match args::Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            // clap prints help/version to stdout (exit 0) and usage errors to stderr (exit 2);
            // iperf3 exits 1 on a bad option, so map that.
            let _ = e.print();
            return if e.use_stderr() { ExitCode::from(1) } else { ExitCode::SUCCESS };
        }
    };
    let code = match cli.command {
        Some(args::Command::Selftest(a)) => selftest::run(&a),
        Some(args::Command::Completions(a)) => manual::completions(&a),
        Some(args::Command::Man(a)) => manual::man_pages(&a),
        Some(args::Command::Suite(a)) => suite_cmd::run(&a),
        Some(args::Command::Exporter(a)) => match wireperf_exporter::cli::run(&a) {
            Ok(()) => 0,
            Err(e) => {
                eprintln!("wireperf: exporter error - {e}");
                1
            }
        },
        Some(args::Command::Report(a)) => report_cmd::run(&a),
        Some(args::Command::History(a)) => wireperf_store::cli::run(&a).unwrap_or_else(|e| {
            eprintln!("wireperf: history error - {e}");
            1
        }),
        Some(args::Command::Doctor(a)) => match wireperf_doctor::cli::run(&a) {
            Ok(code) => code,
            Err(e) => {
                // 3, not 1: exit 1 and 2 already mean "a warn/crit finding".
                eprintln!("wireperf: doctor error - {e}");
                3
            }
        },
        None => iperf_mode(&cli.iperf),
    };
    ExitCode::from(u8::try_from(code).unwrap_or(1))
}

fn iperf_mode(a: &args::IperfArgs) -> i32 {
    match lower::lower(a) {
        Ok(lower::Mode::Version) => {
            println!("{}", wireperf_engine::report_version());
            println!("{}", wireperf_sys::system_info());
            0
        }
        Ok(lower::Mode::Client(cfg, out)) => {
            let save = (!a.no_save).then(|| a.db.clone());
            client_cmd::run(&cfg, &out, save.as_ref().map(Option::as_deref))
        }
        Ok(lower::Mode::Server(cfg, out, proc)) => server_cmd::run(&cfg, &out, &proc),
        Err(e) => {
            eprintln!("wireperf: parameter error - {e}");
            if !matches!(e, lower::ParamError::NotYet(_)) {
                eprintln!();
                eprintln!("Usage: wireperf [-s|-c host] [options]");
                eprintln!("Try `wireperf --help' for more information.");
            }
            1
        }
    }
}
