#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The `wireperf` binary's integration tests: interop with Debian's iperf3 in both
//! directions, output layout, robustness of the server, and command-line handling.
//!
//! One test binary for the crate (link time matters on 2 cores); themes in modules.

mod harness;
mod interop_client;
mod interop_server;
mod keytree;
mod options;
mod params;
mod regression;
mod robustness;
mod suite;
mod text_layout;
