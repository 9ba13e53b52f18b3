//! Statistics for repeated tests: is a difference real, or the noise of the path?
//!
//! Back-to-back runs of the same test on the same hosts differ by 10-20 % on a busy machine,
//! so one run against one run cannot tell a fix from noise. A series of runs gives a mean and
//! its spread; the Student-t confidence interval of the mean says how well the series pins
//! the mean down (netperf's `-I LEVEL,WIDTH` repeats until it is narrow enough), and Welch's
//! t-test (unequal variances, since a change of NIC or driver changes the noise too) says
//! whether two series differ by more than their noise.
//!
//! Pure functions over `f64` slices; the quantiles and the t distribution's CDF come from
//! the `distrs` crate.

use distrs::StudentsT;
use serde::{Deserialize, Serialize};

/// One figure over a series of runs (throughput, retransmits, loaded latency).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Runs the figures come from.
    pub n: usize,
    /// Arithmetic mean.
    pub mean: f64,
    /// Median.
    pub median: f64,
    /// Sample standard deviation (n − 1); 0 for one run.
    pub sd: f64,
    /// Smallest.
    pub min: f64,
    /// Largest.
    pub max: f64,
    /// The confidence level of `ci`, percent (95).
    pub level: f64,
    /// The confidence interval of the mean at `level` (Student t, n − 1 degrees of freedom);
    /// `None` for a single run, whose spread is unknown.
    pub ci: Option<(f64, f64)>,
}

impl Summary {
    /// The series' summary at `level` percent (e.g. 95); `None` for an empty series or one
    /// with a value that is not finite.
    pub fn of(values: &[f64], level: f64) -> Option<Summary> {
        if values.is_empty() || values.iter().any(|v| !v.is_finite()) {
            return None;
        }
        let n = values.len();
        let mut sorted = values.to_vec();
        sorted.sort_by(f64::total_cmp);
        // Identical values have exactly their value as mean and no spread; the sum's rounding
        // would otherwise invent a spread of a few ulps.
        let mean = if sorted[0] == sorted[n - 1] { sorted[0] } else { values.iter().sum::<f64>() / n as f64 };
        let median = if n % 2 == 1 { sorted[n / 2] } else { (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0 };
        let sd =
            if n > 1 { (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt() } else { 0.0 };
        let ci = (n > 1).then(|| {
            let half = t_quantile(two_sided(level), (n - 1) as f64) * sd / (n as f64).sqrt();
            (mean - half, mean + half)
        });
        Some(Summary { n, mean, median, sd, min: sorted[0], max: sorted[n - 1], level, ci })
    }

    /// Half the interval's width as a fraction of the mean (0.025 = ±2.5 %); `None` without
    /// an interval or with a zero mean.
    pub fn relative_half_width(&self) -> Option<f64> {
        let (lo, hi) = self.ci?;
        (self.mean != 0.0).then(|| (hi - lo) / 2.0 / self.mean.abs())
    }

    /// The coefficient of variation, sd / mean (the series' noise as a fraction).
    pub fn noise(&self) -> Option<f64> {
        (self.n > 1 && self.mean != 0.0).then(|| self.sd / self.mean.abs())
    }

    /// netperf's `-I LEVEL,WIDTH`: the interval lies within ±`width_pct`/2 % of the mean.
    pub fn within(&self, width_pct: f64) -> bool {
        self.relative_half_width().is_some_and(|h| h * 100.0 <= width_pct / 2.0)
    }
}

/// The upper quantile for a two-sided interval at `level` percent: 95 → 0.975.
fn two_sided(level: f64) -> f64 {
    1.0 - (1.0 - level / 100.0) / 2.0
}

/// The `p` quantile of Student's t with `df` degrees of freedom (`df` may be fractional, as
/// Welch–Satterthwaite's is).
pub fn t_quantile(p: f64, df: f64) -> f64 {
    StudentsT::ppf(p, df)
}

/// Welch's comparison of two series: B − A.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Welch {
    /// Difference of the means, B − A.
    pub diff: f64,
    /// Its confidence interval at the summaries' level.
    pub ci: (f64, f64),
    /// Welch–Satterthwaite degrees of freedom.
    pub df: f64,
    /// The t statistic.
    pub t: f64,
    /// Two-sided p-value: the chance of a difference at least this large were the means equal.
    pub p: f64,
}

impl Welch {
    /// True when the difference is significant at the interval's level (p below 1 − level).
    pub fn significant(&self, level: f64) -> bool {
        self.p < 1.0 - level / 100.0
    }
}

/// Welch's t-test of B against A; `None` unless each side has at least two runs and the
/// series are not both without spread (then there is no noise to compare against: equal
/// means are no change and unequal ones cannot be given a p-value).
pub fn welch(a: &Summary, b: &Summary) -> Option<Welch> {
    if a.n < 2 || b.n < 2 {
        return None;
    }
    let (va, vb) = (a.sd.powi(2) / a.n as f64, b.sd.powi(2) / b.n as f64);
    let se2 = va + vb;
    if se2 <= 0.0 {
        return None;
    }
    let df = se2.powi(2) / (va.powi(2) / (a.n - 1) as f64 + vb.powi(2) / (b.n - 1) as f64);
    let diff = b.mean - a.mean;
    let se = se2.sqrt();
    let t = diff / se;
    let p = (2.0 * (1.0 - StudentsT::cdf(t.abs(), df))).clamp(0.0, 1.0);
    let half = t_quantile(two_sided(a.level), df) * se;
    Some(Welch { diff, ci: (diff - half, diff + half), df, t, p })
}

/// Runs per side a comparison needs to see a change of `change` (a fraction) at about 80 %
/// power and 95 % confidence, given the series' noise `noise` (sd / mean): the usual
/// 2·(z₀.₉₇₅ + z₀.₈)²·(noise / change)² rounded up, and at least 3 (two runs give one
/// degree of freedom and an interval wider than most changes).
pub fn runs_needed(noise: f64, change: f64) -> usize {
    if !(noise.is_finite() && change.is_finite() && change > 0.0) {
        return 3;
    }
    let z = 1.959_964 + 0.841_621;
    let n = 2.0 * z * z * (noise / change).powi(2);
    (n.ceil() as usize).max(3)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn t_quantiles_match_the_tables() {
        // Two-sided 95 % critical values (any statistics table).
        for (df, t) in [(1.0, 12.706_205), (2.0, 4.302_653), (4.0, 2.776_445), (10.0, 2.228_139), (30.0, 2.042_272)] {
            let q = t_quantile(0.975, df);
            assert!(close(q, t, 1e-4), "t(0.975, {df}) = {q}, tables say {t}");
        }
        assert!(close(t_quantile(0.995, 9.0), 3.249_836, 1e-4));
        // A fractional df lies between its neighbours, and the CDF inverts it.
        let q = t_quantile(0.975, 7.5);
        assert!(q < t_quantile(0.975, 7.0) && q > t_quantile(0.975, 8.0), "{q}");
        assert!(close(StudentsT::cdf(q, 7.5), 0.975, 1e-6));
    }

    #[test]
    fn a_series_worked_by_hand() {
        // 940, 950, 960, 930, 970 Mbit/s: mean 950, deviations −10 0 10 −20 20, squares sum
        // 1000, variance 1000/4 = 250, sd 15.811; half width 2.776445 × 15.811 / √5 = 19.633.
        let s = Summary::of(&[940.0, 950.0, 960.0, 930.0, 970.0], 95.0).unwrap();
        assert_eq!((s.n, s.mean, s.median, s.min, s.max), (5, 950.0, 950.0, 930.0, 970.0));
        assert!(close(s.sd, 15.811_388, 1e-5), "{}", s.sd);
        let (lo, hi) = s.ci.unwrap();
        assert!(close(lo, 930.367, 1e-2) && close(hi, 969.633, 1e-2), "{lo} {hi}");
        assert!(close(s.relative_half_width().unwrap(), 19.633 / 950.0, 1e-4));
        assert!(!s.within(4.0), "±2.07 % is not within ±2 %");
        assert!(s.within(5.0), "±2.07 % is within ±2.5 %");
        // An even count's median is the middle pair's mean.
        assert_eq!(Summary::of(&[1.0, 4.0, 2.0, 3.0], 95.0).unwrap().median, 2.5);
        // One run: no spread known, no interval.
        let one = Summary::of(&[5.0], 95.0).unwrap();
        assert_eq!((one.sd, one.ci), (0.0, None));
        assert!(Summary::of(&[], 95.0).is_none());
        assert!(Summary::of(&[1.0, f64::NAN], 95.0).is_none());
    }

    #[test]
    fn welch_worked_by_hand() {
        // A: 10, 12, 14 (mean 12, var 4); B: 15, 17, 19, 21, 23 (mean 19, var 10).
        // se² = 4/3 + 10/5 = 3.3333; t = 7 / 1.8257 = 3.8341;
        // df = 3.3333² / ((4/3)²/2 + 2²/4) = 11.111 / (0.8889 + 1) = 5.8824.
        let a = Summary::of(&[10.0, 12.0, 14.0], 95.0).unwrap();
        let b = Summary::of(&[15.0, 17.0, 19.0, 21.0, 23.0], 95.0).unwrap();
        let w = welch(&a, &b).unwrap();
        assert_eq!(w.diff, 7.0);
        assert!(close(w.t, 3.834_058, 1e-5), "{}", w.t);
        assert!(close(w.df, 5.882_353, 1e-5), "{}", w.df);
        // p from the t distribution at that df: between the df 5 and df 6 values.
        let p5 = 2.0 * (1.0 - StudentsT::cdf(w.t, 5.0));
        let p6 = 2.0 * (1.0 - StudentsT::cdf(w.t, 6.0));
        assert!(w.p < p5 && w.p > p6, "{} not in ({p6}, {p5})", w.p);
        assert!(w.p < 0.01 && w.significant(95.0));
        let half = t_quantile(0.975, w.df) * (10.0f64 / 3.0).sqrt();
        assert!(close(w.ci.0, 7.0 - half, 1e-9) && close(w.ci.1, 7.0 + half, 1e-9));
        // The same series twice: no difference, p = 1.
        let same = welch(&a, &a).unwrap();
        assert_eq!((same.diff, same.p), (0.0, 1.0));
        assert!(!same.significant(95.0));
        // Single runs cannot be compared.
        assert!(welch(&Summary::of(&[1.0], 95.0).unwrap(), &b).is_none());
    }

    #[test]
    fn runs_needed_grows_with_noise() {
        // 10 % noise, 10 % change: 2 × 7.849 = 15.7 → 16 runs per side.
        assert_eq!(runs_needed(0.10, 0.10), 16);
        assert_eq!(runs_needed(0.01, 0.10), 3, "at least three");
        assert_eq!(runs_needed(0.05, 0.0), 3);
    }

    proptest! {
        #[test]
        fn identical_values_have_a_zero_width_interval(v in 1.0f64..1e10, n in 2usize..20) {
            let s = Summary::of(&vec![v; n], 95.0).unwrap();
            prop_assert_eq!(s.sd, 0.0);
            prop_assert_eq!(s.ci, Some((v, v)));
            prop_assert!(s.within(0.0001));
            prop_assert_eq!((s.min, s.max, s.median), (v, v, v));
        }

        #[test]
        fn the_interval_holds_the_mean_and_the_range_holds_the_values(
            values in proptest::collection::vec(0.0f64..1e10, 2..30)
        ) {
            let s = Summary::of(&values, 95.0).unwrap();
            let (lo, hi) = s.ci.unwrap();
            prop_assert!(lo <= s.mean && s.mean <= hi);
            prop_assert!(s.min <= s.median && s.median <= s.max);
            prop_assert!(s.min <= s.mean * (1.0 + 1e-12) && s.mean <= s.max * (1.0 + 1e-12));
        }
    }
}
