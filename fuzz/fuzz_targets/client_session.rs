//! The client's control-connection state machine fed whatever a server could send.
#![no_main]
use libfuzzer_sys::fuzz_target;
use wireperf_protocol::client::ClientSession;
use wireperf_protocol::{Cookie, TestParams};

fuzz_target!(|data: &[u8]| {
    let mut c = ClientSession::new(Cookie::from_entropy([3; 37]), &TestParams::default());
    let _ = c.take_output();
    for chunk in data.chunks(7) {
        if c.handle_input(chunk).is_err() {
            return;
        }
        while c.poll_event().is_some() {}
        let _ = c.take_output();
    }
    let _ = c.handle_eof();
});
