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

/// Formats Unix seconds as `Sun, 29 Nov 2026 18:00:41 GMT` (no time-zone database needed:
/// the output is always GMT).
pub fn rfc1123(secs: i64) -> String {
    const DAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    format!(
        "{}, {:02} {} {} {:02}:{:02}:{:02} GMT",
        DAYS[days.rem_euclid(7) as usize],
        d,
        MONTHS[(m - 1) as usize],
        y,
        rem / 3600,
        (rem % 3600) / 60,
        rem % 60
    )
}

/// Howard Hinnant's days-to-civil algorithm (proleptic Gregorian calendar).
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (if m <= 2 { y + 1 } else { y }, m, d)
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_like_iperf3() {
        assert_eq!(rfc1123(1_795_975_249), "Sun, 29 Nov 2026 18:00:49 GMT");
        assert_eq!(rfc1123(0), "Thu, 01 Jan 1970 00:00:00 GMT");
    }
}
