//! `TestParams::from_json` on any JSON a client could send.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(v) = serde_json::from_slice::<serde_json::Value>(data) {
        if let Ok(p) = wireperf_protocol::TestParams::from_json(&v) {
            // What was accepted must serialize and parse back.
            let again = wireperf_protocol::TestParams::from_json(&p.to_json());
            assert!(again.is_ok());
        }
    }
});
