//! `wireperf history`: flags in `args.rs`; the store answers ([`wireperf_store::execute`]).

mod args;

pub use args::HistoryArgs;

/// Runs a history command; returns the exit status.
pub fn run(a: &HistoryArgs) -> i32 {
    match wireperf_store::execute(&a.request()) {
        Ok(out) => {
            out!("{}", out.stdout);
            eprint!("{}", out.stderr);
            out.code
        }
        Err(e) => {
            eprintln!("wireperf: history error - {e}");
            1
        }
    }
}
