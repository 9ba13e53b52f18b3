//! `-P N`: one rule for every mode that runs parallel streams (client, suite, selftest), iperf3's:
//! 1 to 128 streams.

use wireperf_protocol::IperfErrno;
use wireperf_protocol::params::limits::MAX_STREAMS;

/// Why a `-P` value is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ParallelError {
    /// Above iperf3's limit (iperf3's own message).
    #[error("{}", IperfErrno::NUMSTREAMS)]
    TooMany,
    /// Zero or negative (3.22 refuses both ends of the range with the same message).
    #[error("{}", IperfErrno::NUMSTREAMS)]
    TooFew,
}

/// Checks a `-P` value.
pub fn check(n: i64) -> Result<u32, ParallelError> {
    match u32::try_from(n) {
        Ok(n) if n > MAX_STREAMS => Err(ParallelError::TooMany),
        Ok(n) if n >= 1 => Ok(n),
        _ if n > 0 => Err(ParallelError::TooMany),
        _ => Err(ParallelError::TooFew),
    }
}

/// The clap value parser for subcommands' `-P` (the iperf3 client checks it in its lowering, to
/// print iperf3's "parameter error" line instead of clap's).
#[cfg(feature = "suite")]
pub fn parse(s: &str) -> Result<u32, String> {
    let n = s.trim().parse::<i64>().map_err(|e| e.to_string())?;
    check(n).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iperf3_range() {
        assert_eq!(check(1), Ok(1));
        assert_eq!(check(128), Ok(128));
        assert_eq!(check(129), Err(ParallelError::TooMany));
        assert_eq!(check(i64::MAX), Err(ParallelError::TooMany));
        assert_eq!(check(0), Err(ParallelError::TooFew));
        assert_eq!(check(-3), Err(ParallelError::TooFew));
    }

    #[cfg(feature = "suite")]
    #[test]
    fn subcommand_parser_says_what_iperf3_says() {
        assert_eq!(parse("200").unwrap_err(), "invalid number of parallel streams (min = 1, max = 128)");
        assert_eq!(parse("0").unwrap_err(), "invalid number of parallel streams (min = 1, max = 128)", "3.22's -P 0");
        assert!(parse("x").is_err());
    }
}
