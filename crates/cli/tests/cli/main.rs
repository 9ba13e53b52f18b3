#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The `wireperf` binary's integration tests: interop with Debian's iperf3 in both
//! directions, output layout, robustness of the server, and command-line handling.
//!
//! One test binary for the crate (link time matters on 2 cores); themes in modules, and the
//! helpers they share in `support/` (no test lives there).
//!
//! The small build (`--no-default-features`) compiles the same binary; `scripts/test` runs its
//! interop modules and `minimal` against it (the other modules drive subcommands it lacks).

mod abuse;
mod affinity;
mod architecture;
mod auth;
mod balance_lab;
mod client_repeat;
mod closed_stdout;
mod concurrency;
mod docs_once;
mod doctor_live;
#[cfg(feature = "exporter")]
mod exporter;
mod far_host_lab;
mod file_transfer;
mod fix_lab;
mod flowlabel;
mod history;
mod interop_client;
mod interop_server;
mod io_batching;
mod iperf2;
mod keytree;
mod latency_lab;
mod manual;
#[cfg(not(all(feature = "suite", feature = "exporter")))]
mod minimal;
mod mptcp;
mod options;
mod params;
mod path_lab;
mod regression;
mod repeat;
mod report;
mod robustness;
mod stock_peers;
mod suite;
mod suite_lab;
mod support;
mod symbol_order;
mod text_layout;
mod tui;
mod udp_exact;
mod udp_interop;
mod udp_jitter;
mod udp_lab;
mod why_lab;
mod zerocopy;
