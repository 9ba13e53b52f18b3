//! `wireperf doctor`: flags in `args.rs`; the doctor itself is [`wireperf_doctor::run_with`], writing
//! to stdout through `wireperf_sys::stdout` (quiet when the reader goes away).

mod args;

pub use args::DoctorArgs;

/// Runs the doctor; returns the exit status.
pub fn run(a: &DoctorArgs) -> i32 {
    match wireperf_doctor::run_with(&a.config(), &mut wireperf_sys::stdout::Stdout) {
        Ok(code) => code,
        Err(e) => {
            // 3, not 1: exit 1 and 2 already mean "a warn/crit finding".
            eprintln!("wireperf: doctor error - {e}");
            3
        }
    }
}
