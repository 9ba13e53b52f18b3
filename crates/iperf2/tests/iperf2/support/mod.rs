//! What the iperf 2 tests are built from, kept apart from the tests (no `#[test]` here):
//! [`wire_checks`], the checks every parser of network input must pass, shared with the
//! cargo-fuzz targets (which include that file by path).

pub mod wire_checks;
