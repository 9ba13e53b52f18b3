//! C `printf` number conversions that Rust's `format!` does not have.
//!
//! iperf3 prints through glibc `printf`, and cJSON prints numbers with `%1.15g`/`%1.17g`.
//! Rust's fixed-precision formatting (`{:.N}`) already rounds exactly like glibc (exact
//! decimal expansion, ties to even), so `%N.Mf` maps onto `{:N.M}` for finite values. What is
//! missing is `%g` (significant digits, trailing zeros removed, C exponents such as `e-05`)
//! and C's spelling of non-finite values (`nan`, `inf`). Those live here.

/// `%W.Pf` (`left = false`) or `%-W.Pf` (`left = true`), with C's `nan`/`inf` spelling.
pub(crate) fn c_fixed(x: f64, width: usize, precision: usize, left: bool) -> String {
    let body = if x.is_finite() { format!("{x:.precision$}") } else { non_finite(x).to_string() };
    pad(&body, width, left)
}

fn pad(body: &str, width: usize, left: bool) -> String {
    if left { format!("{body:<width$}") } else { format!("{body:>width$}") }
}

fn non_finite(x: f64) -> &'static str {
    match (x.is_nan(), x.is_sign_negative()) {
        (true, false) => "nan",
        (true, true) => "-nan",
        (false, false) => "inf",
        (false, true) => "-inf",
    }
}

/// C `%.Pg`: `precision` significant digits, trailing zeros and a trailing dot removed,
/// exponent form (`1e+02`, `2.9e-05`, at least two exponent digits) when the decimal
/// exponent is below -4 or at least `precision`.
///
/// iperf3 uses `%.2g` for the loss percentage (`0`, `3.9`, `0.26`, `1e+02`, `0.013`) and
/// cJSON uses `%1.15g` / `%1.17g` for non-integer numbers. A precision of 0 means 1, as in C.
pub fn format_g(x: f64, precision: usize) -> String {
    let p = precision.max(1);
    if !x.is_finite() {
        return non_finite(x).to_string();
    }
    if x == 0.0 {
        return if x.is_sign_negative() { "-0" } else { "0" }.to_string();
    }
    // The exponent C's rule looks at is the one of the `%e` conversion with P-1 decimals,
    // i.e. after rounding (9.96 with P=2 is 1.0e1, so it prints as "10").
    let sci = format!("{:.*e}", p - 1, x);
    let (mantissa, exp) = match sci.split_once('e') {
        Some((m, e)) => (m, e.parse::<i32>().unwrap_or(0)),
        None => (sci.as_str(), 0),
    };
    let p_i32 = i32::try_from(p).unwrap_or(i32::MAX);
    if exp < -4 || exp >= p_i32 {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{}e{}{:02}", strip_fraction_zeros(mantissa), sign, exp.unsigned_abs())
    } else {
        // 0 <= decimals because exp < p; exp >= -4 keeps it bounded by p + 3.
        let decimals = usize::try_from(p_i32 - 1 - exp).unwrap_or(0);
        strip_fraction_zeros(&format!("{x:.decimals$}"))
    }
}

/// Removes trailing zeros after a decimal point, then the point itself if nothing is left.
fn strip_fraction_zeros(s: &str) -> String {
    if !s.contains('.') {
        return s.to_string();
    }
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// A number as iperf3's bundled cJSON 1.7.15 prints it (`print_number`).
///
/// * NaN and infinities print as `null` (cJSON writes no non-finite literals).
/// * If the double equals its 64-bit integer truncation (saturated at the `i64` range, as
///   `cJSON_CreateNumber` does), it prints as that integer with no decimal point: `0`,
///   `5391`, `2.0` → `2`. iperf3 3.12/3.13 pass that integer through an *unsigned*
///   conversion, which turns `-1` into `18446744073709551615`; that is a bug fixed in 3.14,
///   and wireperf prints the signed value as 3.14+ does (stock readers accept both).
/// * Otherwise `%1.15g`, unless reading that text back differs from the value by more than
///   a relative `DBL_EPSILON`, in which case `%1.17g`: `1.001312`, `9110657857.99319`,
///   `1.0013120174407959`, `2.9e-05`.
pub fn format_c_number(d: f64) -> String {
    if !d.is_finite() {
        return "null".to_string();
    }
    // `as` saturates at the i64 range, matching cJSON_CreateNumber's explicit saturation.
    let truncated = d as i64;
    if d == truncated as f64 {
        return truncated.to_string();
    }
    let short = format_g(d, 15);
    match short.parse::<f64>() {
        Ok(back) if compare_double(back, d) => short,
        _ => format_g(d, 17),
    }
}

/// cJSON's `compare_double`: equal within a relative `DBL_EPSILON`.
fn compare_double(a: f64, b: f64) -> bool {
    let max = a.abs().max(b.abs());
    (a - b).abs() <= max * f64::EPSILON
}

#[cfg(test)]
// Values are typed exactly as the captured samples print them.
#[allow(clippy::excessive_precision)]
mod tests {
    use super::*;

    #[test]
    fn g2_loss_percentages_as_iperf3_prints_them() {
        assert_eq!(format_g(0.0, 2), "0");
        assert_eq!(format_g(3.9318479685452163, 2), "3.9");
        assert_eq!(format_g(7.874015748031496, 2), "7.9");
        assert_eq!(format_g(0.26, 2), "0.26");
        assert_eq!(format_g(100.0, 2), "1e+02");
        assert_eq!(format_g(0.013, 2), "0.013");
        assert_eq!(format_g(0.0001234, 2), "0.00012");
        assert_eq!(format_g(0.00001234, 2), "1.2e-05");
        assert_eq!(format_g(9.96, 2), "10");
        assert_eq!(format_g(99.6, 2), "1e+02");
        assert_eq!(format_g(50.0, 2), "50");
        assert_eq!(format_g(1.0 / 3.0, 2), "0.33");
        assert_eq!(format_g(-2.5, 2), "-2.5");
        assert_eq!(format_g(0.25, 1), "0.2"); // ties to even, like glibc
        assert_eq!(format_g(12345.0, 0), "1e+04");
    }

    #[test]
    fn g_non_finite_like_c() {
        assert_eq!(format_g(f64::NAN, 2), "nan");
        assert_eq!(format_g(f64::INFINITY, 2), "inf");
        assert_eq!(format_g(f64::NEG_INFINITY, 2), "-inf");
        assert_eq!(format_g(-0.0, 2), "-0");
    }

    #[test]
    fn c_numbers_as_cjson_prints_them() {
        assert_eq!(format_c_number(0.0), "0");
        assert_eq!(format_c_number(-0.0), "0");
        assert_eq!(format_c_number(5391.0), "5391");
        assert_eq!(format_c_number(1.001312), "1.001312");
        assert_eq!(format_c_number(1.0013120174407959), "1.0013120174407959");
        assert_eq!(format_c_number(9110657857.99319), "9110657857.99319");
        assert_eq!(format_c_number(8964014353.2341862), "8964014353.2341862");
        assert_eq!(format_c_number(0.01065627004832851), "0.01065627004832851");
        assert_eq!(format_c_number(2.9e-05), "2.9e-05");
        assert_eq!(format_c_number(0.1), "0.1");
        assert_eq!(format_c_number(-1.0), "-1");
        assert_eq!(format_c_number(1e300), "1e+300");
        assert_eq!(format_c_number(9.223372036854775807e18), "9223372036854775807");
        assert_eq!(format_c_number(f64::NAN), "null");
        assert_eq!(format_c_number(f64::INFINITY), "null");
    }

    #[test]
    fn fixed_matches_printf() {
        assert_eq!(c_fixed(0.0, 6, 2, false), "  0.00");
        assert_eq!(c_fixed(1.0, 6, 2, true), "1.00  ");
        assert_eq!(c_fixed(100.0, 6, 2, true), "100.00");
        assert_eq!(c_fixed(0.25, 4, 1, false), " 0.2");
        assert_eq!(c_fixed(f64::NAN, 4, 1, false), " nan");
    }
}
