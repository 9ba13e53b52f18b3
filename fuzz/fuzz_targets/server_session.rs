//! The server's control-connection state machine fed arbitrary bytes in arbitrary chunks, with
//! a permissive engine that accepts whatever arrives so that every phase is reachable.
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::time::Duration;
use wireperf_protocol::server::{ServerEvent, ServerLimits, ServerSession};

fuzz_target!(|data: &[u8]| {
    let Some((&chunk, rest)) = data.split_first() else { return };
    let mut s = ServerSession::new(Duration::ZERO, ServerLimits { max_params: 8192, ..Default::default() });
    for (i, c) in rest.chunks(usize::from(chunk).max(1)).enumerate() {
        let now = Duration::from_millis(i as u64);
        if s.handle_input(now, c).is_err() {
            break;
        }
        while let Some(ev) = s.poll_event() {
            match ev {
                ServerEvent::Params(_) => {
                    let _ = s.accept_params(now);
                    let _ = s.start_test(now, Some(Duration::from_secs(1)));
                }
                ServerEvent::TestEnd => {
                    let _ = s.begin_exchange(now);
                }
                ServerEvent::ClientResults(r) => {
                    let _ = s.send_results(now, &r);
                }
                _ => {}
            }
        }
        let _ = s.take_output();
        let _ = s.handle_timeout(now);
    }
    let _ = s.handle_eof();
});
