//! Axis scales: "nice" ticks at 1, 2 or 5 × 10ⁿ of the unit a reader expects, and their labels.
//!
//! Ticks are chosen in the *display* unit (Gbit/s, MByte), not in raw bits or bytes: a cwnd
//! axis in raw bytes would put ticks at 500 000 bytes and label them `488 KByte`. So the
//! scale (K, M, G…) is picked from the largest value first, and the 1/2/5 steps are laid
//! out on the scaled numbers; labels then go through [`format_unit`] with that fixed scale,
//! so every label on one axis has the same unit.

use crate::units::format_unit;

/// What the values on an axis measure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AxisUnit {
    /// Bits per second (the value is bit/s; labels are decimal, `Gbit/s`).
    BitsPerSecond,
    /// Bytes (binary scales, `MByte`).
    Bytes,
    /// Plain counts (retransmits, packets): integer ticks, no unit.
    Count,
    /// Seconds (the time axis).
    Seconds,
    /// Milliseconds (round trips): decimal ticks, no scale letters.
    Milliseconds,
}

/// Ticks laid out for one axis: from 0 to `max`, in steps of `step`.
#[derive(Clone, Debug, PartialEq)]
pub struct Ticks {
    /// Tick values in raw units (bit/s, bytes, count, seconds), ascending, first is 0.
    pub values: Vec<f64>,
    /// The top of the axis (the last tick), raw units; always > 0.
    pub max: f64,
    /// Label of each tick, same order as `values`.
    pub labels: Vec<String>,
}

/// Roughly how many intervals an axis is split into.
const TARGET_STEPS: f64 = 5.0;

/// The smallest of 1, 2, 5, 10 × 10ⁿ that is at least `rough` (for `rough` > 0).
pub fn nice_step(rough: f64) -> f64 {
    if !(rough.is_finite() && rough > 0.0) {
        return 1.0;
    }
    let magnitude = 10f64.powf(rough.log10().floor());
    let residual = rough / magnitude;
    // A hair of tolerance so 2.0000000001 (a float artefact of e.g. 10/5) stays 2.
    let nice = [1.0, 2.0, 5.0, 10.0].into_iter().find(|n| residual <= n * (1.0 + 1e-9)).unwrap_or(10.0);
    nice * magnitude
}

/// Scale letter for [`format_unit`] and its divisor, chosen so `max` reads as 1…999.
fn scale_for(unit: AxisUnit, max: f64) -> (char, f64) {
    let (base, letters): (f64, [char; 5]) = match unit {
        // format_unit takes bytes and multiplies by 8 for bit letters.
        AxisUnit::BitsPerSecond => (1000.0, ['b', 'k', 'm', 'g', 't']),
        AxisUnit::Bytes => (1024.0, ['B', 'K', 'M', 'G', 'T']),
        AxisUnit::Count | AxisUnit::Seconds | AxisUnit::Milliseconds => return (' ', 1.0),
    };
    let mut divisor = 1.0;
    let mut i = 0;
    while i + 1 < letters.len() && max >= divisor * base {
        divisor *= base;
        i += 1;
    }
    (letters[i], divisor)
}

/// Lays out ticks from 0 to at least `data_max`.
pub fn ticks(unit: AxisUnit, data_max: f64) -> Ticks {
    let data_max = if data_max.is_finite() && data_max > 0.0 { data_max } else { 0.0 };
    let (letter, divisor) = scale_for(unit, data_max);
    let scaled_max = data_max / divisor;
    let mut step = nice_step(scaled_max / TARGET_STEPS);
    if unit == AxisUnit::Count {
        step = step.max(1.0);
    }
    // A max on a tick adds no empty step. Time gets more slack: a 4 s test ends at
    // 4.0003 s, and an axis to 5 s for that would waste a fifth of the chart.
    let slack = if unit == AxisUnit::Seconds { 0.02 } else { 1e-9 };
    let n = if scaled_max > 0.0 { (scaled_max / step - slack).ceil().max(1.0) } else { 1.0 };
    // n is small (about TARGET_STEPS); the cast cannot truncate.
    let count = n as usize;
    let values: Vec<f64> = (0..=count).map(|i| i as f64 * step * divisor).collect();
    let labels = values.iter().map(|v| tick_label(unit, *v, letter)).collect();
    Ticks { max: count as f64 * step * divisor, values, labels }
}

/// One tick's label: `0`, `2.5 Gbit/s`, `512 KByte`, `40`, `2.5 s`.
fn tick_label(unit: AxisUnit, value: f64, letter: char) -> String {
    if value == 0.0 {
        return "0".to_string();
    }
    match unit {
        AxisUnit::BitsPerSecond => format!("{}/s", trim_number(&format_unit(value / 8.0, letter))),
        AxisUnit::Bytes => trim_number(&format_unit(value, letter)),
        AxisUnit::Count | AxisUnit::Seconds => trim_number(&format!("{value:.2}")),
        AxisUnit::Milliseconds => trim_number(&format!("{value:.2}")) + " ms",
    }
}

/// `" 5.00 Gbit"` → `"5 Gbit"`, `"2.50 MByte"` → `"2.5 MByte"`: tick values are round
/// numbers, so the trailing zeros format_unit pads with only add noise.
fn trim_number(s: &str) -> String {
    let s = s.trim();
    let (num, rest) = match s.find(' ') {
        Some(i) => (&s[..i], &s[i..]),
        None => (s, ""),
    };
    let num = if num.contains('.') { num.trim_end_matches('0').trim_end_matches('.') } else { num };
    format!("{num}{rest}")
}

/// A value in words for tooltips and tables: `13.7 Gbit/s`, `2.56 MByte`, `77`.
pub fn value_label(unit: AxisUnit, value: f64) -> String {
    match unit {
        AxisUnit::BitsPerSecond => wireperf_protocol::outcome::words::rate(value),
        AxisUnit::Bytes => format_unit(value, 'A').trim().to_string(),
        AxisUnit::Count => format!("{}", value.round()),
        AxisUnit::Seconds => trim_number(&format!("{value:.2}")) + " s",
        AxisUnit::Milliseconds => format!("{value:.3} ms"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_are_one_two_five() {
        assert_eq!(nice_step(0.3), 0.5);
        assert_eq!(nice_step(1.0), 1.0);
        assert_eq!(nice_step(1.1), 2.0);
        assert_eq!(nice_step(2.0), 2.0);
        assert_eq!(nice_step(3.2), 5.0);
        assert_eq!(nice_step(7.0), 10.0);
        assert_eq!(nice_step(2740.0), 5000.0);
    }

    #[test]
    fn bit_rate_axis_in_gbits() {
        let t = ticks(AxisUnit::BitsPerSecond, 13.7e9);
        assert_eq!(t.labels, ["0", "5 Gbit/s", "10 Gbit/s", "15 Gbit/s"]);
        assert_eq!(t.max, 15e9);
    }

    #[test]
    fn byte_axis_uses_binary_scale() {
        let t = ticks(AxisUnit::Bytes, 2.6 * 1024.0 * 1024.0);
        assert_eq!(t.labels, ["0", "1 MByte", "2 MByte", "3 MByte"]);
    }

    #[test]
    fn counts_are_integers() {
        let t = ticks(AxisUnit::Count, 3.0);
        assert_eq!(t.labels, ["0", "1", "2", "3"]);
        let t = ticks(AxisUnit::Count, 0.0);
        assert_eq!(t.labels, ["0", "1"]);
    }

    #[test]
    fn max_on_a_tick_adds_no_empty_step() {
        let t = ticks(AxisUnit::Seconds, 10.0);
        assert_eq!(t.labels, ["0", "2", "4", "6", "8", "10"]);
        let t = ticks(AxisUnit::Seconds, 4.0003);
        assert_eq!(t.labels, ["0", "1", "2", "3", "4"]);
    }

    #[test]
    fn empty_axis_still_has_a_range() {
        let t = ticks(AxisUnit::BitsPerSecond, 0.0);
        assert!(t.max > 0.0);
        assert_eq!(t.values.len(), 2);
    }
}
