//! The control-connection reader with each `Expect`: cookie, state, JSON, SERVER_ERROR codes.
#![no_main]
use libfuzzer_sys::fuzz_target;
use wireperf_protocol::frame::{Expect, FrameReader};

fuzz_target!(|data: &[u8]| {
    for e in [Expect::Cookie, Expect::State, Expect::Json { max_len: 8192 }, Expect::ErrorCodes] {
        let mut r = FrameReader::new();
        // Split the input in two pushes to exercise partial frames.
        let mid = data.first().map_or(0, |b| usize::from(*b)).min(data.len());
        r.push(&data[..mid]);
        while let Ok(Some(_)) = r.next(e) {}
        r.push(&data[mid..]);
        while let Ok(Some(_)) = r.next(e) {}
        let _ = r.at_eof(e);
    }
});
