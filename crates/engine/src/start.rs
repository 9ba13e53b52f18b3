//! Filling the `start` object of a test report: version, system line, timestamp, parameters.

use std::time::{SystemTime, UNIX_EPOCH};
use wireperf_protocol::TestParams;
use wireperf_protocol::schema::{Start, TestStart, Timestamp};

/// The version line wireperf puts where iperf3 puts `iperf 3.12`.
pub fn version_line() -> String {
    format!("wireperf {} (iperf3 {} compatible)", env!("CARGO_PKG_VERSION"), wireperf_protocol::IPERF_COMPAT_VERSION)
}

/// `start` with the fields every document has, even an error document.
pub(crate) fn base_start() -> Start {
    Start { version: version_line(), system_info: wireperf_sys::system_info(), ..Default::default() }
}

/// The current time as iperf3 prints it: RFC 1123 in GMT, and Unix seconds.
pub(crate) fn now_timestamp() -> Timestamp {
    let ms = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as i64).unwrap_or(0);
    let secs = ms / 1000;
    Timestamp { time: rfc1123(secs), timesecs: secs, timemillisecs: Some(ms) }
}

/// Formats Unix seconds as iperf3 does (the one formatter lives with the protocol).
pub use wireperf_protocol::datetime::rfc1123;

/// `start.test_start` from the parameters and this side's report interval (`-i`; 0 = none).
pub(crate) fn test_start(p: &TestParams, interval: Option<std::time::Duration>) -> TestStart {
    TestStart {
        protocol: p.protocol.name().to_string(),
        num_streams: p.parallel,
        blksize: p.len,
        omit: p.omit,
        duration: p.time,
        bytes: p.num,
        blocks: p.blockcount,
        reverse: i32::from(p.reverse),
        tos: p.tos.unwrap_or(0),
        target_bitrate: p.bandwidth.unwrap_or(0),
        bidir: Some(i32::from(p.bidirectional)),
        fqrate: Some(p.fqrate.unwrap_or(0)),
        interval: Some(interval.map_or(0.0, |i| i.as_secs_f64())),
        gso: Some(i32::from(p.offload.gso)),
        gro: Some(i32::from(p.offload.gro)),
    }
}
