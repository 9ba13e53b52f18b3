//! Lenient number reading for JSON written by stock iperf3 peers.
//!
//! iperf3 3.12/3.13 print negative integers through an unsigned conversion, so `-1` arrives as
//! `18446744073709551615`; cJSON readers saturate. Integers may also arrive as floats from
//! other implementations. These helpers accept all of that without panicking.

use serde_json::Value;

/// Reads a JSON number as `i64`, mapping values at or above 2^63 to `-1` as stock peers do.
pub(crate) fn as_i64(v: &Value) -> Option<i64> {
    if let Some(i) = v.as_i64() {
        return Some(i);
    }
    if v.as_u64().is_some() {
        // Only values >= 2^63 fail as_i64 but pass as_u64: the 3.12 unsigned-print quirk.
        return Some(-1);
    }
    let f = v.as_f64()?;
    if f.is_finite() { Some(f.clamp(i64::MIN as f64, i64::MAX as f64) as i64) } else { None }
}

/// Reads a JSON number as a non-negative count; negative values read as 0.
pub(crate) fn as_u64(v: &Value) -> Option<u64> {
    if let Some(u) = v.as_u64() {
        return Some(u);
    }
    let f = v.as_f64()?;
    if f.is_finite() { Some(if f <= 0.0 { 0 } else { f.min(u64::MAX as f64) as u64 }) } else { None }
}

/// Reads any JSON number as `f64`.
pub(crate) fn as_f64(v: &Value) -> Option<f64> {
    v.as_f64().filter(|f| f.is_finite())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn unsigned_minus_one_reads_as_minus_one() {
        let v: Value = serde_json::from_str("18446744073709551615").unwrap();
        assert_eq!(as_i64(&v), Some(-1));
        assert_eq!(as_i64(&json!(-1)), Some(-1));
        assert_eq!(as_i64(&json!(2.9)), Some(2));
        assert_eq!(as_u64(&json!(-3)), Some(0));
        assert_eq!(as_i64(&json!("x")), None);
    }
}
