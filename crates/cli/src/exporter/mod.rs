//! `wireperf exporter`: flags in `args.rs`; the exporter itself is [`wireperf_exporter::run`].

mod args;

pub use args::ExporterArgs;

/// Runs the exporter until the process stops; returns the exit status.
pub fn run(a: &ExporterArgs) -> i32 {
    match a.config().and_then(|cfg| wireperf_exporter::run(&cfg)) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("wireperf: exporter error - {e}");
            1
        }
    }
}
