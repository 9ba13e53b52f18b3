//! Integration tests of the link doctor: fixture trees (one scenario per failure mode, each
//! asserting the exact set of finding ids), JSON/text output, --snapshot round trips,
//! and --apply/--undo on fixtures. The live system and a veth in a network namespace are
//! tested through the `wireperf doctor` binary in the cli crate (`doctor_live.rs`).

mod committed;
mod scenarios;
mod snapshot_apply;
mod support;
