//! Durations the subcommands take (`suite -t`, `selftest -t`, the exporter's timeouts), checked
//! once at parse time. iperf3's `-t 0` means "run until interrupted", which a suite of phases or a
//! scrape can never finish, so these modes refuse it with a message instead of hanging.

#[cfg(feature = "suite")]
use wireperf_protocol::params::limits::MAX_TIME;

#[cfg(feature = "suite")]
/// A phase length for `suite`/`selftest`: 1 to iperf3's own limit (one day), whole seconds.
pub fn phase(s: &str) -> Result<u32, String> {
    let n: i64 = s.trim().parse().map_err(|_| format!("'{s}' is not a whole number of seconds"))?;
    match u32::try_from(n) {
        Ok(n) if (1..=MAX_TIME).contains(&n) => Ok(n),
        _ if n < 1 => Err("each phase needs at least 1 second (-t 0, 'until interrupted', cannot end a suite)".into()),
        _ => Err(format!("at most {MAX_TIME} seconds (one day) per phase")),
    }
}

#[cfg(feature = "exporter")]
/// A timeout in seconds, fractions allowed: above zero and at most an hour.
pub fn timeout(s: &str) -> Result<f64, String> {
    let v = number(s)?;
    if v <= 0.0 {
        return Err("must be above 0 seconds".into());
    }
    at_most_an_hour(v)
}

#[cfg(feature = "exporter")]
/// A margin in seconds, fractions allowed: zero or more, at most an hour.
pub fn margin(s: &str) -> Result<f64, String> {
    let v = number(s)?;
    if v < 0.0 {
        return Err("must not be negative".into());
    }
    at_most_an_hour(v)
}

#[cfg(feature = "exporter")]
fn number(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        _ => Err(format!("'{s}' is not a number of seconds")),
    }
}

#[cfg(feature = "exporter")]
fn at_most_an_hour(v: f64) -> Result<f64, String> {
    if v > 3600.0 { Err("at most 3600 seconds".into()) } else { Ok(v) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(feature = "suite")]
    #[test]
    fn phase_refuses_zero_negative_and_more_than_a_day() {
        assert_eq!(phase("2"), Ok(2));
        assert_eq!(phase(" 86400 "), Ok(86400));
        assert!(phase("0").unwrap_err().contains("at least 1 second"));
        assert!(phase("-3").unwrap_err().contains("at least 1 second"));
        assert!(phase("86401").unwrap_err().contains("one day"));
        assert!(phase("1.5").unwrap_err().contains("whole number"));
        assert!(phase("").unwrap_err().contains("whole number"));
    }

    #[cfg(feature = "exporter")]
    #[test]
    fn timeouts_are_positive_and_margins_not_negative() {
        assert_eq!(timeout("0.25"), Ok(0.25));
        assert!(timeout("0").unwrap_err().contains("above 0"));
        assert!(timeout("-1").unwrap_err().contains("above 0"));
        assert!(timeout("nan").unwrap_err().contains("not a number"));
        assert!(timeout("inf").unwrap_err().contains("not a number"));
        assert!(timeout("7200").unwrap_err().contains("3600"));
        assert_eq!(margin("0"), Ok(0.0));
        assert!(margin("-0.5").unwrap_err().contains("negative"));
    }
}
