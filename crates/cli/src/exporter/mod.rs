//! `wireperf exporter`: flags in `args.rs`; the exporter itself is [`wireperf_exporter::run`].

mod args;

pub use args::ExporterArgs;

/// Runs the exporter until the process stops; returns the exit status.
pub fn run(a: &ExporterArgs) -> i32 {
    match wireperf_exporter::run(&a.config()) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("wireperf: exporter error - {e}");
            1
        }
    }
}
