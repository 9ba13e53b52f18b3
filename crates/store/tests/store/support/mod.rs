//! What the store's tests are built from, kept apart from the tests (no `#[test]` here):
//! [`fixtures`] runs real iperf3 tests on loopback for the store to save.

pub mod fixtures;
