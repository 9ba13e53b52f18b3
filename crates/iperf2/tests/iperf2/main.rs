#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The iperf2 crate's integration tests: its parsers of network input under seeded random and
//! mutated bytes (the inputs of the cargo-fuzz targets, run without a fuzzer).

mod fuzz_inputs;
mod support;
