//! iperf3's unit conventions, both ways.
//!
//! Printing: [`format_unit`] is iperf3's `unit_snprintf` (`src/units.c`, unchanged from 3.12
//! to HEAD). Reading: [`parse_size`], [`parse_rate`] and [`parse_rate_burst`] are its
//! `unit_atoi`/`unit_atof`/`unit_atof_rate` plus the `-b RATE/BURST` split. Sizes are binary
//! (K = 1024) and rates decimal (K = 1000), as everywhere in iperf3. The C number
//! conversions that Rust lacks (`%g`, cJSON numbers) are in [`format_g`] and
//! [`format_c_number`].

mod cfmt;
mod parse;

pub(crate) use cfmt::c_fixed;
pub use cfmt::{format_c_number, format_g};
pub use parse::{MAX_BURST, UnitError, parse_rate, parse_rate_burst, parse_size};

/// Multipliers for byte scales, written as units.c writes them (`1.0 / 1024 / 1024`…), so
/// the products round exactly as iperf3's do.
const CONVERSION_BYTES: [f64; 5] =
    [1.0, 1.0 / 1024.0, 1.0 / 1024.0 / 1024.0, 1.0 / 1024.0 / 1024.0 / 1024.0, 1.0 / 1024.0 / 1024.0 / 1024.0 / 1024.0];

/// Multipliers for bit scales (`1.0 / 1000 / 1000`…).
const CONVERSION_BITS: [f64; 5] =
    [1.0, 1.0 / 1000.0, 1.0 / 1000.0 / 1000.0, 1.0 / 1000.0 / 1000.0 / 1000.0, 1.0 / 1000.0 / 1000.0 / 1000.0 / 1000.0];

const LABEL_BYTE: [&str; 5] = ["Byte", "KByte", "MByte", "GByte", "TByte"];
const LABEL_BIT: [&str; 5] = ["bit", "Kbit", "Mbit", "Gbit", "Tbit"];

/// Highest scale index (tera).
const TERA: usize = 4;

/// iperf3's `unit_snprintf`: an amount in **bytes** (or bytes per second) printed in the unit
/// the format letter asks for, e.g. `2.24 GByte`, ` 856 MByte`, `19.2 Gbit`.
///
/// The caller appends `s` (transfer, cwnd: `2.24 GBytes`) or `s/sec` (rate:
/// `19.2 Gbits/sec`), exactly as iperf3's format strings do.
///
/// * A letter that is not upper case means bits: the value is multiplied by 8 and scales are
///   powers of 1000 (`bit Kbit Mbit Gbit Tbit`). Upper case means bytes, powers of 1024
///   (`Byte KByte MByte GByte TByte`).
/// * `b/k/m/g/t` (either case) fix the scale; any other letter (`a`, `A`) is adaptive: divide
///   by the base while the value is at least the base, stopping at tera.
/// * Digits are chosen on the scaled value: below 9.995 `%4.2f`, below 99.95 `%4.1f`, else
///   `%4.0f`, so columns stay 4 wide. Adaptive bytes can still print `1023 KBytes` or
///   `1024 KBytes` and adaptive bits `1000 Mbits/sec` (the scale is chosen before rounding),
///   and fixed scales simply widen (`23767 Mbits/sec`), as in iperf3.
pub fn format_unit(value: f64, fmt: char) -> String {
    let bits = !fmt.is_ascii_uppercase();
    let mut n = if bits { value * 8.0 } else { value };
    let conv = match fmt.to_ascii_uppercase() {
        'B' => 0,
        'K' => 1,
        'M' => 2,
        'G' => 3,
        'T' => TERA,
        _ => {
            let base = if bits { 1000.0 } else { 1024.0 };
            let mut tmp = n;
            let mut conv = 0;
            while tmp >= base && conv < TERA {
                tmp /= base;
                conv += 1;
            }
            conv
        }
    };
    let label = if bits {
        n *= CONVERSION_BITS[conv];
        LABEL_BIT[conv]
    } else {
        n *= CONVERSION_BYTES[conv];
        LABEL_BYTE[conv]
    };
    let decimals = if n < 9.995 {
        2
    } else if n < 99.95 {
        1
    } else {
        0
    };
    format!("{} {}", c_fixed(n, 4, decimals, false), label)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn xfer(bytes: f64) -> String {
        format!("{}s", format_unit(bytes, 'A'))
    }

    fn rate(bytes_per_sec: f64, fmt: char) -> String {
        format!("{}s/sec", format_unit(bytes_per_sec, fmt))
    }

    const K: f64 = 1024.0;

    #[test]
    fn transfer_column_examples_from_the_reference() {
        assert_eq!(xfer(2.24 * K * K * K), "2.24 GBytes");
        assert_eq!(xfer(856.0 * K * K), " 856 MBytes");
        assert_eq!(xfer(83.4 * K), "83.4 KBytes");
        assert_eq!(xfer(0.0), "0.00 Bytes");
        assert_eq!(xfer(1023.0 * K), "1023 KBytes");
        assert_eq!(xfer(1023.7 * K), "1024 KBytes");
        assert_eq!(xfer(1024.0 * K), "1.00 MBytes");
        assert_eq!(xfer(32.0 * K), "32.0 KBytes");
        assert_eq!(xfer(500.0), " 500 Bytes");
    }

    #[test]
    fn rate_column_examples_from_the_reference() {
        assert_eq!(rate(19.2e9 / 8.0, 'a'), "19.2 Gbits/sec");
        assert_eq!(rate(100e6 / 8.0, 'a'), " 100 Mbits/sec");
        assert_eq!(rate(96.1e6 / 8.0, 'a'), "96.1 Mbits/sec");
        assert_eq!(rate(0.0, 'a'), "0.00 bits/sec");
        assert_eq!(rate(999.7e6 / 8.0, 'a'), "1000 Mbits/sec");
        assert_eq!(rate(1e9 / 8.0, 'a'), "1.00 Gbits/sec");
        assert_eq!(rate(23767e6 / 8.0, 'm'), "23767 Mbits/sec");
        assert_eq!(rate(20e9 / 8.0, 't'), "0.02 Tbits/sec");
        assert_eq!(rate(1861213.0 * K, 'K'), "1861213 KBytes/sec");
        assert_eq!(rate(2.94 * K * K * K, 'G'), "2.94 GBytes/sec");
        assert_eq!(rate(2.62 * K * K * K, 'T'), "0.00 TBytes/sec");
        assert_eq!(rate(25856771e3 / 8.0, 'k'), "25856771 Kbits/sec");
        assert_eq!(rate(104e3 / 8.0, 'a'), " 104 Kbits/sec");
    }

    #[test]
    fn digit_thresholds_are_chosen_before_rounding() {
        assert_eq!(format_unit(9.994, 'B'), "9.99 Byte");
        assert_eq!(format_unit(9.995, 'B'), "10.0 Byte");
        assert_eq!(format_unit(99.94, 'B'), "99.9 Byte");
        assert_eq!(format_unit(99.95, 'B'), " 100 Byte");
        assert_eq!(format_unit(999.4, 'B'), " 999 Byte");
    }

    #[test]
    fn adaptive_stops_at_tera() {
        assert_eq!(format_unit(5.0 * K * K * K * K * K, 'A'), "5120 TByte");
    }
}
