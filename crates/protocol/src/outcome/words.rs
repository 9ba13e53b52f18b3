//! How an outcome's figures read outside iperf3's own output: the one human rate format
//! (`13.7 Gbit/s`), counts (`1,386`) and the one percent change, so the suite's sentences, history's tables and
//! the HTML report print the same number the same way.
//!
//! iperf3-identical text (`19.2 Gbits/sec`, padded columns) is not this: it is the report
//! crate's `format_unit`, iperf3's own `unit_snprintf`.

/// Decimal scales (rates are powers of 1000, as in iperf3), written as iperf3's units.c
/// writes its multipliers so a value rounds exactly as iperf3 would round it.
const SCALES: [(f64, &str); 5] = [
    (1.0, "bit/s"),
    (1.0 / 1000.0, "Kbit/s"),
    (1.0 / 1000.0 / 1000.0, "Mbit/s"),
    (1.0 / 1000.0 / 1000.0 / 1000.0, "Gbit/s"),
    (1.0 / 1000.0 / 1000.0 / 1000.0 / 1000.0, "Tbit/s"),
];

/// `941 Mbit/s`, `41.2 Gbit/s`, `1.05 Mbit/s`: the largest scale that keeps the value at or
/// above 1 (up to tera), then three significant digits the way iperf3 picks them (below 9.995
/// two decimals, below 99.95 one, else none — so 999.7 Mbit/s reads `1000 Mbit/s`).
pub fn rate(bits_per_second: f64) -> String {
    let mut scaled = bits_per_second;
    let mut i = 0;
    while scaled >= 1000.0 && i + 1 < SCALES.len() {
        scaled /= 1000.0;
        i += 1;
    }
    let (factor, unit) = SCALES[i];
    let n = bits_per_second * factor;
    let decimals = if n < 9.995 {
        2
    } else if n < 99.95 {
        1
    } else {
        0
    };
    format!("{n:.decimals$} {unit}")
}

/// The change from `from` to `to` in percent (`+5.0` is 5 % more); `None` when `from` is zero
/// or not a number, where no change can be stated.
pub fn percent_change(from: f64, to: f64) -> Option<f64> {
    (from.is_finite() && from != 0.0).then(|| (to - from) / from * 100.0)
}

/// `1,386`: a count with thousands separated.
pub fn count(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_read_as_three_significant_digits() {
        assert_eq!(rate(941_000_000.0), "941 Mbit/s");
        assert_eq!(rate(41_234_000_000.0), "41.2 Gbit/s");
        assert_eq!(rate(1_048_435.5), "1.05 Mbit/s");
        assert_eq!(rate(13.7e9), "13.7 Gbit/s");
        assert_eq!(rate(99_990_000.0), "100 Mbit/s");
        assert_eq!(rate(9_999_000.0), "10.0 Mbit/s");
        assert_eq!(rate(999.7e6), "1000 Mbit/s");
        assert_eq!(rate(0.0), "0.00 bit/s");
        assert_eq!(rate(12e15), "12000 Tbit/s");
    }

    #[test]
    fn counts_group_thousands() {
        assert_eq!(count(0), "0");
        assert_eq!(count(999), "999");
        assert_eq!(count(1386), "1,386");
        assert_eq!(count(1_234_567), "1,234,567");
    }

    #[test]
    fn percent_change_is_relative_to_the_first_value() {
        assert_eq!(percent_change(100.0, 105.0), Some(5.0));
        assert_eq!(percent_change(100.0, 90.0), Some(-10.0));
        assert_eq!(percent_change(0.0, 1.0), None);
        assert_eq!(percent_change(f64::NAN, 1.0), None);
    }
}
