//! wireperf-store's integration tests: a real SQLite file in a temp dir, real iperf3 `-J`
//! documents produced by Debian's iperf3 on loopback, and the failure modes a history file
//! meets in practice (not a database, locked by another process, written by a newer build).

#![allow(clippy::unwrap_used)]

mod import;
mod migrations;
mod roundtrip;
mod safety;
mod support;
