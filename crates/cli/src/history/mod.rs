//! `wireperf history`: flags in `args.rs`; the store answers ([`wireperf_store::run`]).

mod args;

pub use args::HistoryArgs;

/// Runs a history command; returns the exit status.
pub fn run(a: &HistoryArgs) -> i32 {
    wireperf_store::run(&a.request()).unwrap_or_else(|e| {
        eprintln!("wireperf: history error - {e}");
        1
    })
}
