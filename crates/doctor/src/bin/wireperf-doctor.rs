//! Standalone `wireperf-doctor` binary: the same as `wireperf doctor`, for development, for
//! tests that must run the doctor inside a network namespace (`ip netns exec`), and for hosts
//! where only this crate is built.

use clap::Parser;

/// `wireperf-doctor [IFACE...] [--json] [--root DIR] ...`
#[derive(Debug, Parser)]
#[command(name = "wireperf-doctor", about = "Why is this link slow, and what is the fix")]
struct Cli {
    #[command(flatten)]
    args: wireperf_doctor::cli::DoctorArgs,
}

fn main() {
    let cli = Cli::parse();
    match wireperf_doctor::cli::run(&cli.args) {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            eprintln!("wireperf doctor: {e}");
            std::process::exit(3);
        }
    }
}
