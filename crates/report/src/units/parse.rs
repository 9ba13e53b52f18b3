//! Reading `-n 20M`, `-l 128K`, `-w 1M`, `-b 100M/10` the way iperf3 does.
//!
//! iperf3 reads a floating-point number, then looks at exactly one following character for a
//! `k m g t` suffix (either case) and ignores anything after it (`sscanf("%lf%c")`), so
//! `10MB` means 10 M. In 3.12 an unknown suffix was silently ignored (`-b 10Q` = 10 bit/s) and
//! a non-number read as 0; since 3.20 both are the error `invalid unit value or suffix`.
//! wireperf follows 3.20: a typo should not silently run a different test.

use thiserror::Error;

/// Largest `-b RATE/BURST` burst iperf3 accepts.
pub const MAX_BURST: u32 = 1000;

/// Why a size or rate argument was rejected. Messages are iperf3's (3.20+) where it has one.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum UnitError {
    /// Not a number, or a suffix other than `k m g t`.
    #[error("invalid unit value or suffix: '{0}'")]
    Invalid(String),
    /// A number that does not fit the target (negative, infinite, or beyond 64 bits).
    #[error("value out of range: '{0}'")]
    OutOfRange(String),
    /// The `/BURST` part of `-b` is not an integer in 1..=1000.
    #[error("invalid burst count (maximum = {max})", max = MAX_BURST)]
    Burst(String),
}

/// A size with binary suffixes (K = 1024 … T = 1024⁴), truncated to an integer:
/// `20M` → 20 971 520, `1.5K` → 1536, `128` → 128. iperf3's `unit_atoi` (`-n`, `-k`, `-l`,
/// `-w`, `--pacing-timer`, …).
pub fn parse_size(arg: &str) -> Result<u64, UnitError> {
    parse_scaled(arg, 1024.0)
}

/// A rate in bit/s with decimal suffixes (K = 1000 … T = 10¹²), truncated to an integer:
/// `100M` → 100 000 000, `1.5G` → 1 500 000 000. iperf3's `unit_atof_rate` (`-b`,
/// `--fq-rate`, `--server-bitrate-limit`).
pub fn parse_rate(arg: &str) -> Result<u64, UnitError> {
    parse_scaled(arg, 1000.0)
}

/// `-b RATE[/BURST]`: the rate as [`parse_rate`] and, after a `/`, the number of packets sent
/// per pacing tick (1..=1000, read like C `atoi`, so trailing text is ignored as iperf3 does).
pub fn parse_rate_burst(arg: &str) -> Result<(u64, Option<u32>), UnitError> {
    match arg.split_once('/') {
        None => Ok((parse_rate(arg)?, None)),
        Some((rate, burst)) => {
            let b = c_atoi(burst);
            if b <= 0 || b > i64::from(MAX_BURST) {
                return Err(UnitError::Burst(arg.to_string()));
            }
            let b = u32::try_from(b).map_err(|_| UnitError::Burst(arg.to_string()))?;
            Ok((parse_rate(rate)?, Some(b)))
        }
    }
}

fn parse_scaled(arg: &str, base: f64) -> Result<u64, UnitError> {
    let invalid = || UnitError::Invalid(arg.to_string());
    let (number, rest) = scan_c_double(arg).ok_or_else(invalid)?;
    let exponent = match rest.chars().next() {
        None => 0,
        Some('k' | 'K') => 1,
        Some('m' | 'M') => 2,
        Some('g' | 'G') => 3,
        Some('t' | 'T') => 4,
        Some(_) => return Err(invalid()),
    };
    let mut n = number;
    for _ in 0..exponent {
        n *= base;
    }
    // 2^64 as f64; anything at or above it does not fit.
    const LIMIT: f64 = 18_446_744_073_709_551_616.0;
    if !(0.0..LIMIT).contains(&n) {
        return Err(UnitError::OutOfRange(arg.to_string()));
    }
    // Truncation toward zero, as the C cast does.
    Ok(n as u64)
}

/// The longest prefix a C `%lf` would read as a decimal number (leading white space, sign,
/// digits with an optional point, optional exponent), and the rest. Hex floats, `inf` and
/// `nan` are refused: they are never meant as sizes.
fn scan_c_double(s: &str) -> Option<(f64, &str)> {
    let trimmed = s.trim_start();
    let bytes = trimmed.as_bytes();
    let mut i = 0;
    if matches!(bytes.first(), Some(b'+' | b'-')) {
        i += 1;
    }
    let int_start = i;
    while bytes.get(i).is_some_and(u8::is_ascii_digit) {
        i += 1;
    }
    let mut digits = i - int_start;
    if bytes.get(i) == Some(&b'.') {
        i += 1;
        let frac_start = i;
        while bytes.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        digits += i - frac_start;
    }
    if digits == 0 {
        return None;
    }
    if matches!(bytes.get(i), Some(b'e' | b'E')) {
        let mut j = i + 1;
        if matches!(bytes.get(j), Some(b'+' | b'-')) {
            j += 1;
        }
        let exp_start = j;
        while bytes.get(j).is_some_and(u8::is_ascii_digit) {
            j += 1;
        }
        if j > exp_start {
            i = j;
        }
    }
    let (num, rest) = trimmed.split_at(i);
    num.parse::<f64>().ok().map(|n| (n, rest))
}

/// C `atoi`: leading white space, optional sign, decimal digits; stops at anything else;
/// 0 when there are no digits. Saturates instead of overflowing.
fn c_atoi(s: &str) -> i64 {
    let t = s.trim_start();
    let (neg, digits) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let mut v: i64 = 0;
    for b in digits.bytes().take_while(u8::is_ascii_digit) {
        v = v.saturating_mul(10).saturating_add(i64::from(b - b'0'));
    }
    if neg { -v } else { v }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn sizes_are_binary() {
        assert_eq!(parse_size("20M"), Ok(20_971_520));
        assert_eq!(parse_size("128K"), Ok(131_072));
        assert_eq!(parse_size("128k"), Ok(131_072));
        assert_eq!(parse_size("1M"), Ok(1_048_576));
        assert_eq!(parse_size("1.5M"), Ok(1_572_864));
        assert_eq!(parse_size("1.5K"), Ok(1536));
        assert_eq!(parse_size("1g"), Ok(1 << 30));
        assert_eq!(parse_size("2T"), Ok(2 << 40));
        assert_eq!(parse_size("1000"), Ok(1000));
        assert_eq!(parse_size("0.3"), Ok(0));
        assert_eq!(parse_size(" 7"), Ok(7));
        assert_eq!(parse_size("1e3"), Ok(1000));
        assert_eq!(parse_size(".5K"), Ok(512));
    }

    #[test]
    fn rates_are_decimal() {
        assert_eq!(parse_rate("100M"), Ok(100_000_000));
        assert_eq!(parse_rate("1.5G"), Ok(1_500_000_000));
        assert_eq!(parse_rate("10k"), Ok(10_000));
        assert_eq!(parse_rate("1T"), Ok(1_000_000_000_000));
        assert_eq!(parse_rate("0"), Ok(0));
    }

    #[test]
    fn text_after_the_suffix_is_ignored_like_iperf3() {
        assert_eq!(parse_size("10MB"), Ok(10 << 20));
        assert_eq!(parse_rate("10Mbit"), Ok(10_000_000));
    }

    #[test]
    fn bad_values_are_errors_with_iperf3s_message() {
        let e = parse_rate("10Q").unwrap_err();
        assert_eq!(e.to_string(), "invalid unit value or suffix: '10Q'");
        assert!(matches!(parse_size("abc"), Err(UnitError::Invalid(_))));
        assert!(matches!(parse_size(""), Err(UnitError::Invalid(_))));
        assert!(matches!(parse_size("10 M"), Err(UnitError::Invalid(_))));
        assert!(matches!(parse_size("inf"), Err(UnitError::Invalid(_))));
        assert!(matches!(parse_size("-5"), Err(UnitError::OutOfRange(_))));
        assert!(matches!(parse_size("99999999T"), Err(UnitError::OutOfRange(_))));
        assert!(matches!(parse_size("1e400"), Err(UnitError::OutOfRange(_))));
    }

    #[test]
    fn rate_with_burst() {
        assert_eq!(parse_rate_burst("100M/10"), Ok((100_000_000, Some(10))));
        assert_eq!(parse_rate_burst("100M"), Ok((100_000_000, None)));
        assert_eq!(parse_rate_burst("1G/1000"), Ok((1_000_000_000, Some(1000))));
        let e = parse_rate_burst("100M/0").unwrap_err();
        assert_eq!(e.to_string(), "invalid burst count (maximum = 1000)");
        assert!(matches!(parse_rate_burst("1M/1001"), Err(UnitError::Burst(_))));
        assert!(matches!(parse_rate_burst("1M/x"), Err(UnitError::Burst(_))));
        assert!(matches!(parse_rate_burst("1X/5"), Err(UnitError::Invalid(_))));
    }

    proptest! {
        #[test]
        fn plain_integers_round_trip(n in 0u64..(1u64 << 53)) {
            prop_assert_eq!(parse_size(&n.to_string()), Ok(n));
            prop_assert_eq!(parse_rate(&n.to_string()), Ok(n));
        }

        #[test]
        fn suffixes_scale_exactly(n in 0u64..(1u64 << 20), s in 0usize..4) {
            let (lower, upper) = [("k", "K"), ("m", "M"), ("g", "G"), ("t", "T")][s];
            let pow = u32::try_from(s + 1).unwrap();
            prop_assert_eq!(parse_size(&format!("{n}{upper}")), Ok(n * 1024u64.pow(pow)));
            prop_assert_eq!(parse_rate(&format!("{n}{lower}")), Ok(n * 1000u64.pow(pow)));
        }

        #[test]
        fn fractions_truncate_like_c(x in 0.0f64..1.0e6) {
            let text = format!("{x}M");
            prop_assert_eq!(parse_size(&text), Ok((x * 1024.0 * 1024.0) as u64));
            prop_assert_eq!(parse_rate(&text), Ok((x * 1000.0 * 1000.0) as u64));
        }

        #[test]
        fn burst_round_trips(rate in 0u64..1_000_000_000, burst in 1u32..=MAX_BURST) {
            prop_assert_eq!(parse_rate_burst(&format!("{rate}/{burst}")), Ok((rate, Some(burst))));
        }

        #[test]
        fn never_panics(s in ".{0,12}") {
            let _ = parse_size(&s);
            let _ = parse_rate_burst(&s);
        }
    }
}
