//! Flag rules more than one mode shares, defined once: where to connect and bind (`-c`, `-B`,
//! `-4`/`-6`), how many streams (`-P`), how long the subcommands' phases and timeouts are,
//! the latency probes (`--latency`), and the values of the repeat flags and gates
//! (`--repeat`, `--warmup`, `--confidence`, `--expect-min`, ...), and the engine's tuning
//! from the environment (`tuning`).

pub mod endpoint;
pub mod latency;
pub mod parallel;
pub mod repeat_args;
#[cfg(any(feature = "suite", feature = "exporter"))]
pub mod seconds;
pub mod tuning;
