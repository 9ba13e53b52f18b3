//! `ExchangeResults::from_json` on any JSON a peer could send.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(v) = serde_json::from_slice::<serde_json::Value>(data) {
        if let Ok(r) = wireperf_protocol::ExchangeResults::from_json(&v) {
            let _ = r.to_json();
        }
    }
});
