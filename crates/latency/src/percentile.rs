//! Percentiles and the trimmed mean of round-trip samples.
//!
//! Percentiles use the **nearest-rank** definition: the p-th percentile of n sorted samples is
//! the one at rank ⌈p/100 · n⌉ (1-based), so it is always a value that was measured (no
//! interpolation between two probes), p100 is the maximum and a single sample is every
//! percentile of itself. NaN samples are never produced by the prober and are ignored here.

/// The samples sorted ascending, NaN removed.
pub fn sorted(samples: &[f64]) -> Vec<f64> {
    let mut v: Vec<f64> = samples.iter().copied().filter(|x| !x.is_nan()).collect();
    v.sort_by(f64::total_cmp);
    v
}

/// The nearest-rank `p`-th percentile (0 < p ≤ 100) of already sorted samples; `None` when
/// there are none.
pub fn nearest_rank(sorted: &[f64], p: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let n = sorted.len();
    let rank = ((p / 100.0) * n as f64).ceil() as usize;
    sorted.get(rank.clamp(1, n) - 1).copied()
}

/// The mean of the samples at or below the nearest-rank `keep`-th percentile (the draft's
/// "trimmed mean": `keep` = 95 drops the slowest 5 %). `None` when there are none.
pub fn trimmed_mean(samples: &[f64], keep: f64) -> Option<f64> {
    let s = sorted(samples);
    let n = s.len();
    if n == 0 {
        return None;
    }
    let kept = (((keep / 100.0) * n as f64).ceil() as usize).clamp(1, n);
    Some(s[..kept].iter().sum::<f64>() / kept as f64)
}

/// Probe jitter: the mean absolute difference between consecutive round trips in the order
/// they were sent (the unsmoothed form of RFC 3550's interarrival jitter, applied to round
/// trips). `None` with fewer than two samples.
pub fn jitter(in_order: &[f64]) -> Option<f64> {
    if in_order.len() < 2 {
        return None;
    }
    let sum: f64 = in_order.windows(2).map(|w| (w[1] - w[0]).abs()).sum();
    Some(sum / (in_order.len() - 1) as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_picks_measured_values() {
        let s = sorted(&[15.0, 20.0, 35.0, 40.0, 50.0]);
        // Ranks: p30 → ⌈1.5⌉ = 2, p40 → 2, p50 → ⌈2.5⌉ = 3, p100 → 5.
        assert_eq!(nearest_rank(&s, 30.0), Some(20.0));
        assert_eq!(nearest_rank(&s, 40.0), Some(20.0));
        assert_eq!(nearest_rank(&s, 50.0), Some(35.0));
        assert_eq!(nearest_rank(&s, 100.0), Some(50.0));
        assert_eq!(nearest_rank(&s, 1.0), Some(15.0));
    }

    #[test]
    fn percentiles_of_1_to_100() {
        let s = sorted(&(1..=100).rev().map(f64::from).collect::<Vec<_>>());
        assert_eq!(nearest_rank(&s, 50.0), Some(50.0));
        assert_eq!(nearest_rank(&s, 90.0), Some(90.0));
        assert_eq!(nearest_rank(&s, 99.0), Some(99.0));
        assert_eq!(nearest_rank(&s, 100.0), Some(100.0));
    }

    #[test]
    fn empty_and_single() {
        assert_eq!(nearest_rank(&[], 50.0), None);
        assert_eq!(nearest_rank(&[7.5], 99.0), Some(7.5));
        assert_eq!(trimmed_mean(&[], 95.0), None);
        assert_eq!(jitter(&[3.0]), None);
    }

    #[test]
    fn trimmed_mean_drops_the_slowest_five_percent() {
        // 19 samples of 10 ms and one of 1000 ms: keeping 95 % (19 of 20) drops the outlier.
        let mut v = vec![10.0; 19];
        v.push(1000.0);
        assert_eq!(trimmed_mean(&v, 95.0), Some(10.0));
        // With 10 samples, ⌈9.5⌉ = 10 are kept: too few to trim, the outlier stays.
        let mut w = vec![10.0; 9];
        w.push(100.0);
        assert_eq!(trimmed_mean(&w, 95.0), Some(19.0));
    }

    #[test]
    fn jitter_is_mean_absolute_step() {
        assert_eq!(jitter(&[10.0, 12.0, 11.0, 15.0]), Some((2.0 + 1.0 + 4.0) / 3.0));
    }

    #[test]
    fn nan_is_ignored() {
        assert_eq!(sorted(&[2.0, f64::NAN, 1.0]), vec![1.0, 2.0]);
    }
}
