//! `wireperf doctor`: flags in `args.rs`; the doctor itself is [`wireperf_doctor::run`].

mod args;

pub use args::DoctorArgs;

/// Runs the doctor; returns the exit status.
pub fn run(a: &DoctorArgs) -> i32 {
    match wireperf_doctor::run(&a.config()) {
        Ok(code) => code,
        Err(e) => {
            // 3, not 1: exit 1 and 2 already mean "a warn/crit finding".
            eprintln!("wireperf: doctor error - {e}");
            3
        }
    }
}
