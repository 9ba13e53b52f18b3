//! The UDP datagram header (32- and 64-bit counters) and the connect-reply check.
#![no_main]
use libfuzzer_sys::fuzz_target;
use wireperf_protocol::udp::{UdpHeader, is_connect_reply};

fuzz_target!(|data: &[u8]| {
    for wide in [false, true] {
        if let Some(h) = UdpHeader::read(data, wide) {
            let mut buf = vec![0u8; UdpHeader::len(wide)];
            assert!(h.write(&mut buf, wide));
            let _ = h.time_secs();
        }
    }
    let _ = is_connect_reply(data);
});
