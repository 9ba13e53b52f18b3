//! Unix seconds as the text iperf3 and the history write, with no time-zone database: both are
//! always UTC, so the conversion is pure arithmetic and means the same on every machine.

const DAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
const MONTHS: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

/// `Sun, 29 Nov 2026 18:00:41 GMT`: iperf3's `timestamp.time` and iperf 2's `Time:` line.
pub fn rfc1123(unix: i64) -> String {
    let (days, (h, mi, s)) = split(unix);
    let (y, m, d) = civil_from_days(days);
    format!("{}, {d:02} {} {y} {h:02}:{mi:02}:{s:02} GMT", DAYS[days.rem_euclid(7) as usize], MONTHS[m - 1])
}

/// `2026-11-29T18:00:41Z`: the history's `time` column, which sorts and compares as text.
pub fn rfc3339_utc(unix: i64) -> String {
    let (days, (h, mi, s)) = split(unix);
    let (y, m, d) = civil_from_days(days);
    format!("{y:04}-{m:02}-{d:02}T{h:02}:{mi:02}:{s:02}Z")
}

/// Whole days since 1970-01-01 and the time of day.
fn split(unix: i64) -> (i64, (i64, i64, i64)) {
    let secs = unix.rem_euclid(86_400);
    (unix.div_euclid(86_400), (secs / 3600, secs % 3600 / 60, secs % 60))
}

/// Proleptic Gregorian date of a day count since 1970-01-01 (the era-based method: 400-year
/// eras of 146,097 days, years starting in March so the leap day comes last). Month and day
/// are 1-based.
fn civil_from_days(z: i64) -> (i64, usize, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    // `mp` is 0..=11, so `m` is 1..=12.
    (yoe + era * 400 + i64::from(m <= 2), m as usize, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc1123_formats_like_iperf3() {
        assert_eq!(rfc1123(1_795_975_249), "Sun, 29 Nov 2026 18:00:49 GMT");
        assert_eq!(rfc1123(0), "Thu, 01 Jan 1970 00:00:00 GMT");
        assert_eq!(rfc1123(951_782_400), "Tue, 29 Feb 2000 00:00:00 GMT");
        assert_eq!(rfc1123(-1), "Wed, 31 Dec 1969 23:59:59 GMT");
    }

    #[test]
    fn rfc3339_known_dates() {
        assert_eq!(rfc3339_utc(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339_utc(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339_utc(1_795_975_241), "2026-11-29T18:00:41Z");
        assert_eq!(rfc3339_utc(-1), "1969-12-31T23:59:59Z");
    }
}
