//! Flag rules more than one mode shares, defined once: where to connect and bind (`-c`, `-B`,
//! `-4`/`-6`) and how many streams (`-P`).

pub mod endpoint;
pub mod parallel;
