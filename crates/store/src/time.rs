//! The history's clock: the current Unix time, written as RFC 3339 UTC text (the formatter lives
//! in the protocol crate) so that the stored `time` column sorts and compares as text.

pub use wireperf_protocol::datetime::rfc3339_utc;

/// The current unix time (0 if the clock is before 1970).
pub fn now_unix() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}
