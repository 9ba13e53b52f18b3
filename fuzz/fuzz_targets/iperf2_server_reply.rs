//! What an iperf 2 UDP client reads after its FIN: the server report or a stale header ack.
//! The checks are shared with the seeded harness in `crates/iperf2/tests/iperf2/`.
#![no_main]
use libfuzzer_sys::fuzz_target;

#[path = "../../crates/iperf2/tests/iperf2/support/wire_checks.rs"]
mod wire_checks;

fuzz_target!(|data: &[u8]| wire_checks::server_reply(data));
