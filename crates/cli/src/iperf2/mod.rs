//! iperf 2 mode (`wireperf --iperf2 …`): its own flag set (`-d`, `-r`, `-L`, `-y` …), lowered
//! into a [`wireperf_iperf2::run::Test`] and run by the iperf2 crate.

mod args;
mod lower;

use args::Top;
use clap::Parser;
use std::ffi::OsString;
use wireperf_iperf2::output::Format;

/// Parses iperf2-style flags (the arguments after `--iperf2`) and runs; returns the exit code.
pub fn main_from_args(args: impl IntoIterator<Item = OsString>) -> i32 {
    let argv = std::iter::once(OsString::from("wireperf --iperf2")).chain(args);
    match Top::try_parse_from(argv) {
        Ok(t) => run(&t.args),
        Err(e) => {
            let _ = e.print();
            if e.use_stderr() { 1 } else { 0 }
        }
    }
}

/// Runs the test the flags describe.
fn run(a: &args::Iperf2Args) -> i32 {
    if a.version {
        outln!("wireperf {} (iperf 2.1.8 protocol)", env!("CARGO_PKG_VERSION"));
        return 0;
    }
    let test = match lower::lower(a) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("wireperf: parameter error - {e}");
            return 1;
        }
    };
    let format = if a.json {
        Format::Json
    } else if a.reportstyle.is_some() {
        Format::Csv
    } else {
        Format::Text
    };
    wireperf_iperf2::run::run(&test, format, a.enhanced)
}
