//! iperf 2's number formatting and parsing.
//!
//! Transfers print in binary units (`1.65 GBytes`, K = 1024) and rates in decimal bits
//! (`14.1 Gbits/sec`, K = 1000), always four significant places wide, exactly as iperf 2's
//! `byte_snprintf` does, so scripts that parse iperf 2 output keep working.
//!
//! Parsing differs from iperf3: iperf 2 reads `-b 100M` as 100 × 1024 × 1024 bit/s (its
//! "IPG target: 112.15 us" for 1470-byte datagrams shows it), and we follow the peer we imitate.

const BYTE_LABELS: [&str; 6] = ["Byte", "KByte", "MByte", "GByte", "TByte", "PByte"];
const BIT_LABELS: [&str; 6] = ["bit", "Kbit", "Mbit", "Gbit", "Tbit", "Pbit"];

/// Formats `v` in four places: `%4.3f` below 1, `%4.2f` below 10, `%4.1f` below 100, else
/// `%4.0f` (the thresholds are where rounding would add a digit).
fn four_places(v: f64, label: &str) -> String {
    let a = v.abs();
    if a < 0.9995 {
        format!("{v:4.3} {label}")
    } else if a < 9.995 {
        format!("{v:4.2} {label}")
    } else if a < 99.95 {
        format!("{v:4.1} {label}")
    } else {
        format!("{v:4.0} {label}")
    }
}

/// A byte count in adaptive binary units, without the trailing `s` (`1.65 GByte`).
pub fn bytes_adaptive(bytes: f64) -> String {
    let mut v = bytes;
    let mut i = 0;
    while v.abs() >= 1024.0 && i < 5 {
        v /= 1024.0;
        i += 1;
    }
    four_places(v, BYTE_LABELS[i])
}

/// A rate in adaptive decimal bits per second, without `s/sec` (`14.1 Gbit`).
pub fn bits_adaptive(bits_per_sec: f64) -> String {
    let mut v = bits_per_sec;
    let mut i = 0;
    while v.abs() >= 1000.0 && i < 5 {
        v /= 1000.0;
        i += 1;
    }
    four_places(v, BIT_LABELS[i])
}

/// C's `%.2g` (two significant digits, trailing zeros dropped), used for loss percentages.
pub fn g2(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return if v.is_finite() { "0".into() } else { format!("{v}") };
    }
    let exp = v.abs().log10().floor() as i32;
    if !(-5..2).contains(&exp) {
        let s = format!("{v:.1e}");
        // Rust writes `1.2e3`; C writes `1.2e+03`.
        return match s.split_once('e') {
            Some((m, e)) => {
                let m = m.trim_end_matches('0').trim_end_matches('.');
                let n: i32 = e.parse().unwrap_or(0);
                format!("{m}e{}{:02}", if n < 0 { '-' } else { '+' }, n.abs())
            }
            None => s,
        };
    }
    let decimals = (1 - exp).max(0) as usize;
    let s = format!("{v:.decimals$}");
    if s.contains('.') { s.trim_end_matches('0').trim_end_matches('.').to_string() } else { s }
}

/// Why a size or rate could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid number '{0}' (expected e.g. 128K, 100M, 1G)")]
pub struct BadNumber(pub String);

/// Parses `128K`, `1.5M`, `10G` with binary multipliers (iperf 2's `byte_atof` for sizes and
/// `-b`). Lower-case suffixes in iperf 2 mean the same for these options.
pub fn parse_binary(s: &str) -> Result<u64, BadNumber> {
    let t = s.trim();
    let (num, mult) = match t.chars().last() {
        Some('k' | 'K') => (&t[..t.len() - 1], 1u64 << 10),
        Some('m' | 'M') => (&t[..t.len() - 1], 1 << 20),
        Some('g' | 'G') => (&t[..t.len() - 1], 1 << 30),
        Some('t' | 'T') => (&t[..t.len() - 1], 1 << 40),
        _ => (t, 1),
    };
    let v: f64 = num.parse().map_err(|_| BadNumber(s.to_string()))?;
    if !v.is_finite() || v < 0.0 {
        return Err(BadNumber(s.to_string()));
    }
    Ok((v * mult as f64) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_iperf2_samples() {
        assert_eq!(format!("{}s", bytes_adaptive(1.65 * 1024.0 * 1024.0 * 1024.0)), "1.65 GBytes");
        assert_eq!(format!("{}s", bytes_adaptive(13_107_200.0)), "12.5 MBytes");
        assert_eq!(format!("{}s", bytes_adaptive(457.0 * 1048576.0)), " 457 MBytes");
        assert_eq!(format!("{}s/sec", bits_adaptive(105e6)), " 105 Mbits/sec");
        assert_eq!(format!("{}s/sec", bits_adaptive(14.1e9)), "14.1 Gbits/sec");
    }

    #[test]
    fn g2_is_c_like() {
        assert_eq!(g2(0.0), "0");
        assert_eq!(g2(0.011_2), "0.011");
        assert_eq!(g2(1.0), "1");
        assert_eq!(g2(12.3), "12");
        assert_eq!(g2(100.0), "1e+02");
        assert_eq!(g2(0.5), "0.5");
    }

    #[test]
    fn rates_are_binary() {
        assert_eq!(parse_binary("100M"), Ok(104_857_600));
        assert_eq!(parse_binary("128K"), Ok(131_072));
        assert!(parse_binary("x").is_err());
    }
}
