//! The value parsers of the repeat and gate flags: `--repeat`, `--warmup`, `--confidence
//! LEVEL,WIDTH` (the suite and `-c`), `--expect-min RATE|up=RATE,down=RATE`,
//! `--expect-max-loaded-latency MS` (the suite). Each refuses a bad value while the arguments
//! are read, with a message that says what is allowed.

/// Most rounds a series may run (a 10 s suite × 100 is most of an hour).
pub const MAX_ROUNDS: usize = 100;

/// `--repeat N`: 1 to [`MAX_ROUNDS`].
pub fn rounds(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(n) if (1..=MAX_ROUNDS).contains(&n) => Ok(n),
        _ => Err(format!("'{s}' is not a round count: give 1 to {MAX_ROUNDS}")),
    }
}

/// `--warmup N`: 0 to 10 leading rounds left out of the statistics.
pub fn warmup(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(n) if n <= 10 => Ok(n),
        _ => Err(format!("'{s}' is not a warm-up count: give 0 to 10")),
    }
}

/// `--confidence LEVEL,WIDTH` as netperf's `-I`: LEVEL 50-99.9 percent, WIDTH the interval's
/// whole width in percent of the mean (5 = ±2.5 %), above 0 and at most 100.
pub fn confidence(s: &str) -> Result<(f64, f64), String> {
    let bad = || format!("'{s}' is not LEVEL,WIDTH (e.g. 95,5: a 95% interval within ±2.5% of the mean)");
    let (l, w) = s.split_once(',').ok_or_else(bad)?;
    let (level, width) = (l.trim().parse::<f64>().map_err(|_| bad())?, w.trim().parse::<f64>().map_err(|_| bad())?);
    if !(50.0..=99.9).contains(&level) {
        return Err(format!("confidence level {level} is outside 50-99.9 percent"));
    }
    if !(width > 0.0 && width <= 100.0) {
        return Err(format!("interval width {width} must be above 0 and at most 100 percent of the mean"));
    }
    Ok((level, width))
}

/// `--expect-min RATE` (both directions) or `up=RATE,down=RATE` (either or both), rates as
/// `-b` reads them (`2G`, `940M`).
#[cfg(feature = "suite")]
pub fn expect_min(s: &str) -> Result<(Option<f64>, Option<f64>), String> {
    let one = |v: &str| -> Result<f64, String> {
        match wireperf_report::units::parse_rate(v.trim()) {
            Ok(r) if r > 0 => Ok(r as f64),
            Ok(_) => Err(format!("'{v}': a minimum rate must be above 0")),
            Err(e) => Err(e.to_string()),
        }
    };
    if !s.contains('=') {
        let r = one(s)?;
        return Ok((Some(r), Some(r)));
    }
    let (mut up, mut down) = (None, None);
    for part in s.split(',') {
        match part.split_once('=') {
            Some(("up" | "upload", v)) => up = Some(one(v)?),
            Some(("down" | "download", v)) => down = Some(one(v)?),
            _ => return Err(format!("'{part}': give up=RATE, down=RATE or both, comma separated")),
        }
    }
    Ok((up, down))
}

/// `--expect-max-loaded-latency MS`: above 0, at most 60 000.
#[cfg(feature = "suite")]
pub fn latency_ms(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v > 0.0 && v <= 60_000.0 => Ok(v),
        _ => Err(format!("'{s}' is not a latency in ms: give a number above 0 and at most 60000")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_read_or_refused_with_what_is_allowed() {
        assert_eq!(rounds("5"), Ok(5));
        assert!(rounds("0").unwrap_err().contains("1 to 100"));
        assert!(rounds("101").is_err() && rounds("x").is_err());
        assert_eq!(warmup("1"), Ok(1));
        assert!(warmup("11").is_err());
        assert_eq!(confidence("95,5"), Ok((95.0, 5.0)));
        assert_eq!(confidence("99, 2.5"), Ok((99.0, 2.5)));
        assert!(confidence("95").unwrap_err().contains("LEVEL,WIDTH"));
        assert!(confidence("100,5").is_err() && confidence("95,0").is_err());
    }

    #[cfg(feature = "suite")]
    #[test]
    fn gate_values_are_read_or_refused_with_what_is_allowed() {
        assert_eq!(expect_min("2G"), Ok((Some(2e9), Some(2e9))));
        assert_eq!(expect_min("up=2G,down=940M"), Ok((Some(2e9), Some(940e6))));
        assert_eq!(expect_min("down=1G"), Ok((None, Some(1e9))));
        assert!(expect_min("sideways=1G").unwrap_err().contains("up=RATE"));
        assert!(expect_min("up=fast").is_err() && expect_min("0").is_err());
        assert_eq!(latency_ms("25"), Ok(25.0));
        assert!(latency_ms("-1").is_err() && latency_ms("nan").is_err());
    }
}
