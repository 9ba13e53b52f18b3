//! What more than one mode shares, defined once. Flag rules: where to connect and bind (`-c`,
//! `-B`, `-4`/`-6`), how many streams (`-P`), how long the subcommands' phases and timeouts
//! are, the latency probes (`--latency`), and the values of the repeat flags and gates
//! (`--repeat`, `--warmup`, `--confidence`, `--expect-min`, ...). Process plumbing: Ctrl-C
//! (`signals.rs`, every mode that runs tests) and the suite's and selftest's progress line
//! (`progress.rs`). The engine's tuning from the environment (`tuning.rs`).

pub mod endpoint;
pub mod latency;
pub mod parallel;
#[cfg(feature = "suite")]
pub mod progress;
pub mod repeat_args;
#[cfg(any(feature = "suite", feature = "exporter"))]
pub mod seconds;
pub mod signals;
pub mod tuning;
