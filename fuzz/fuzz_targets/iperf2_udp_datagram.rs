//! An iperf 2 UDP datagram as its server reads it: the datagram header (32/64-bit sequence numbers)
//! and a first datagram's test header.
//! The checks are shared with the seeded harness in `crates/iperf2/tests/iperf2/`.
#![no_main]
use libfuzzer_sys::fuzz_target;

#[path = "../../crates/iperf2/tests/iperf2/support/wire_checks.rs"]
mod wire_checks;

fuzz_target!(|data: &[u8]| wire_checks::udp_datagram(data));
