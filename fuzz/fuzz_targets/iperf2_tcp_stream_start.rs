//! The start of an iperf 2 TCP stream as its server reads it (test header length, test header, and
//! the header ack a client reads).
//! The checks are shared with the seeded harness in `crates/iperf2/tests/iperf2/`.
#![no_main]
use libfuzzer_sys::fuzz_target;

#[path = "../../crates/iperf2/tests/iperf2/support/wire_checks.rs"]
mod wire_checks;

fuzz_target!(|data: &[u8]| wire_checks::tcp_stream_start(data));
