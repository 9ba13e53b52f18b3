//! Flag rules more than one mode shares, defined once: where to connect and bind (`-c`, `-B`,
//! `-4`/`-6`), how many streams (`-P`), how long the subcommands' phases and timeouts are,
//! and the latency probes (`--latency`).

pub mod endpoint;
pub mod latency;
pub mod parallel;
#[cfg(any(feature = "suite", feature = "exporter"))]
pub mod seconds;
