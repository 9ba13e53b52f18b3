//! What the tests are built from, kept apart from the tests themselves: a file here holds
//! helpers and no `#[test]`.
//!
//! - [`harness`]: running wireperf and stock iperf3 side by side on loopback (servers on free
//!   ports, clients with a time limit, their output collected, JSON key trees).
//! - [`lab`]: the network-namespace lab (two hosts joined by veth, a router between them, tbf
//!   shapers and nft drop rules), removed on drop even when a test fails.
//! - [`peers`]: the stock iperf3 versions each interop test runs against, and `per_peer!`.

pub mod harness;
pub mod lab;
pub mod peers;
