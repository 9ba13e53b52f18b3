//! The `wireperf` binary: parse, lower, run, map errors to exit codes.

#![forbid(unsafe_code)]

mod args;
mod client_cmd;
mod debug_out;
mod json_out;
mod lower;
mod output;
mod progress;
mod selftest;
mod server_cmd;
mod signals;
mod suite_cmd;
mod text_out;

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
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
        Some(args::Command::Suite(a)) => suite_cmd::run(&a),
        Some(args::Command::Doctor(a)) => match wireperf_doctor::cli::run(&a) {
            Ok(code) => code,
            Err(e) => {
                eprintln!("wireperf: doctor error - {e}");
                1
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
        Ok(lower::Mode::Client(cfg, out)) => client_cmd::run(&cfg, &out),
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
