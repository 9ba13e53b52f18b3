//! Flag rules more than one mode shares, defined once: where to connect and bind (`-c`, `-B`,
//! `-4`/`-6`), how many streams (`-P`) and how long the subcommands' phases and timeouts are.

pub mod endpoint;
pub mod parallel;
#[cfg(any(feature = "suite", feature = "exporter"))]
pub mod seconds;
