//! Whether B differs from A beyond noise: Welch's t-test of each direction's goodput over the
//! runs on each side (one run, or the rounds of a `suite --repeat` series).
//!
//! Why a test and not a percent: back-to-back runs of one test differ by 10–20 % on ordinary
//! hardware, so "+12 %" from one run against one run can be noise. With two or more runs a
//! side the change gets a confidence interval and a p-value; with one run on a side it says so
//! and how many runs would tell.

use serde::Serialize;
use wireperf_stats::{Summary, Welch, runs_needed, welch};

use crate::model::{RunDetail, RunId};

/// Confidence level of the intervals, percent, unless the caller asks for another
/// ([`significance_at`]: `suite --compare-to --significance 99`).
pub const LEVEL: f64 = 95.0;

/// Noise assumed when neither side has a series to measure it (the low end of what
/// back-to-back runs differ by on ordinary hardware); said in the sentence.
pub const ASSUMED_NOISE: f64 = 0.10;

/// Smallest change of the means, percent, that is called a change. A series of 1-2 s tests
/// on one steady path measures its mean to a fraction of a percent, so Welch's test alone
/// would call a 1 % shift (a CPU's clock, a neighbour's load, which second the queue drained
/// in) significant; a user asking "did the fix help?" needs a change that matters. Criterion
/// applies the same kind of noise threshold to its benchmarks.
pub const MIN_CHANGE_PCT: f64 = 2.0;

/// `--repeat`'s cap: advice never asks for more runs than a series can have.
const MAX_REPEAT: usize = 100;

/// One direction's goodput on both sides.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DirectionChange {
    /// `upload`, `download`, `bidir upload`, ... (the phase, and the direction within it).
    pub direction: String,
    /// Side A's goodput, bit/s, over its runs.
    pub a: Summary,
    /// Side B's.
    pub b: Summary,
    /// (B − A) / A, percent.
    pub change_percent: f64,
    /// B − A, when both sides have two runs or more and some spread.
    pub welch: Option<Welch>,
    /// Significant at the comparison's level, and at least [`MIN_CHANGE_PCT`].
    pub significant: bool,
    /// What the user reads.
    pub sentence: String,
}

/// Both sides' runs compared direction by direction.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Significance {
    /// Confidence level of the intervals and the test, percent.
    pub level: f64,
    /// Runs of side A.
    pub a_runs: Vec<RunId>,
    /// Runs of side B.
    pub b_runs: Vec<RunId>,
    /// Directions present on both sides.
    pub directions: Vec<DirectionChange>,
}

/// Goodput per direction of one run: (direction, bit/s).
fn goodputs(r: &RunDetail) -> Vec<(String, f64)> {
    let mut out = Vec::new();
    for p in &r.phase_details {
        match (p.upload_bps, p.download_bps) {
            (Some(u), Some(d)) => {
                out.push((format!("{} upload", p.name), u));
                out.push((format!("{} download", p.name), d));
            }
            _ => {
                if let Some(v) = p.figures.received_bps {
                    out.push((p.name.clone(), v));
                }
            }
        }
    }
    out
}

fn values(runs: &[RunDetail], direction: &str) -> Vec<f64> {
    runs.iter().flat_map(goodputs).filter(|(d, _)| d == direction).map(|(_, v)| v).collect()
}

/// `p = 0.002`, `p = 0.41`, `p < 0.001`.
fn p_text(p: f64) -> String {
    if p < 0.001 {
        "p < 0.001".into()
    } else if p < 0.01 {
        format!("p = {p:.3}")
    } else {
        format!("p = {p:.2}")
    }
}

/// The sentence for one direction.
fn sentence(direction: &str, a: &Summary, b: &Summary, w: Option<&Welch>, level: f64) -> (bool, String) {
    let change = if a.mean != 0.0 { (b.mean - a.mean) / a.mean * 100.0 } else { 0.0 };
    if a.n < 2 || b.n < 2 {
        let measured = [a, b].into_iter().filter(|s| s.n >= 2).filter_map(Summary::noise).reduce(f64::max);
        let noise = measured.unwrap_or(ASSUMED_NOISE);
        let need = runs_needed(noise, (change / 100.0).abs());
        let basis = match measured {
            Some(n) => format!("with the series' noise of ±{:.0} %", n * 100.0),
            None => format!("if back-to-back runs differ by ±{:.0} %", noise * 100.0),
        };
        let how = if need > MAX_REPEAT {
            format!("even {MAX_REPEAT} runs a side (the --repeat cap) could not tell a change this small")
        } else {
            format!("{need} runs a side (suite --repeat {need}) would tell a change this size")
        };
        return (
            false,
            format!("{direction} {change:+.1} %: a single run cannot tell noise from change; {basis}, {how}"),
        );
    }
    let Some(w) = w else {
        return (change != 0.0, format!("{direction} {change:+.1} %: both series have no spread at all"));
    };
    let rel = |x: f64| if a.mean != 0.0 { x / a.mean * 100.0 } else { 0.0 };
    let significant = w.significant(level);
    if significant && change.abs() < MIN_CHANGE_PCT {
        let (lo, hi) = (rel(w.ci.0), rel(w.ci.1));
        return (
            false,
            format!(
                "{direction}: no significant change ({change:+.1} % [{lo:+.1} %, {hi:+.1} %], {}: beyond the series' \
                 noise but under the {MIN_CHANGE_PCT} % that counts as a change)",
                p_text(w.p)
            ),
        );
    }
    if significant {
        let word = if w.diff > 0.0 { "faster" } else { "slower" };
        let (lo, hi) = if w.diff > 0.0 { (rel(w.ci.0), rel(w.ci.1)) } else { (-rel(w.ci.1), -rel(w.ci.0)) };
        (true, format!("{direction} {word} by {:.1} % [{lo:.1} %, {hi:.1} %] ({})", change.abs(), p_text(w.p)))
    } else {
        let noise = [a, b].into_iter().filter_map(Summary::noise).fold(0.0, f64::max);
        (
            false,
            format!(
                "{direction}: no significant change ({}; the series' noise is ±{:.0} %)",
                p_text(w.p),
                noise * 100.0
            ),
        )
    }
}

/// Compares the runs of side A with those of side B, direction by direction (in A's order;
/// a direction missing on one side is left out: there is nothing to compare it with), at
/// [`LEVEL`].
pub fn significance(a: &[RunDetail], b: &[RunDetail]) -> Significance {
    significance_at(a, b, LEVEL)
}

/// [`significance`] at another confidence level (percent, 50-99.9): a script that compares
/// the same path often and must not cry wolf one time in twenty asks for 99 or 99.9.
pub fn significance_at(a: &[RunDetail], b: &[RunDetail], level: f64) -> Significance {
    let mut names: Vec<String> = Vec::new();
    for (d, _) in a.iter().flat_map(goodputs) {
        if !names.contains(&d) {
            names.push(d);
        }
    }
    let directions = names
        .into_iter()
        .filter_map(|d| {
            let sa = Summary::of(&values(a, &d), level)?;
            let sb = Summary::of(&values(b, &d), level)?;
            let w = welch(&sa, &sb);
            let (significant, sentence) = sentence(&d, &sa, &sb, w.as_ref(), level);
            let change_percent = if sa.mean != 0.0 { (sb.mean - sa.mean) / sa.mean * 100.0 } else { 0.0 };
            Some(DirectionChange { direction: d, a: sa, b: sb, change_percent, welch: w, significant, sentence })
        })
        .collect();
    Significance {
        level,
        a_runs: a.iter().map(|r| r.summary.id).collect(),
        b_runs: b.iter().map(|r| r.summary.id).collect(),
        directions,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[f64]) -> Summary {
        Summary::of(v, LEVEL).unwrap()
    }

    #[test]
    fn a_clear_change_reads_faster_with_interval_and_p() {
        let (a, b) = (s(&[300e6, 302e6, 298e6, 301e6]), s(&[400e6, 398e6, 402e6, 399e6]));
        let w = welch(&a, &b);
        let (sig, text) = sentence("download", &a, &b, w.as_ref(), LEVEL);
        assert!(sig);
        assert!(text.starts_with("download faster by 33.1 % ["), "{text}");
        assert!(text.ends_with("(p < 0.001)"), "{text}");
        let (sig, text) = sentence("download", &b, &a, welch(&b, &a).as_ref(), LEVEL);
        assert!(sig && text.starts_with("download slower by 24.9 % ["), "{text}");
    }

    #[test]
    fn noise_reads_no_significant_change() {
        let (a, b) = (s(&[300e6, 330e6, 270e6]), s(&[310e6, 280e6, 320e6]));
        let (sig, text) = sentence("upload", &a, &b, welch(&a, &b).as_ref(), LEVEL);
        assert!(!sig);
        assert!(text.starts_with("upload: no significant change (p = 0."), "{text}");
        assert!(text.ends_with("the series' noise is ±10 %)"), "{text}");
    }

    #[test]
    fn a_tiny_change_of_two_tight_series_is_not_called_a_change() {
        // 1 % apart with a spread of 0.1 %: Welch's p is tiny, the change does not count.
        let (a, b) = (s(&[300.0e6, 300.3e6, 299.7e6]), s(&[303.0e6, 303.3e6, 302.7e6]));
        let w = welch(&a, &b).unwrap();
        assert!(w.p < 0.001);
        let (sig, text) = sentence("upload", &a, &b, Some(&w), LEVEL);
        assert!(!sig);
        assert!(text.starts_with("upload: no significant change (+1.0 % [+0."), "{text}");
        assert!(text.ends_with("beyond the series' noise but under the 2 % that counts as a change)"), "{text}");
    }

    #[test]
    fn single_runs_say_so_and_how_many_runs_would_tell() {
        let (a, b) = (s(&[300e6]), s(&[336e6]));
        let (sig, text) = sentence("upload", &a, &b, None, LEVEL);
        assert!(!sig);
        // 2·(1.96 + 0.84)²·(0.10 / 0.12)² = 10.9 → 11.
        assert_eq!(
            text,
            "upload +12.0 %: a single run cannot tell noise from change; if back-to-back runs differ \
             by ±10 %, 11 runs a side (suite --repeat 11) would tell a change this size"
        );
        let (_, text) = sentence("upload", &a, &s(&[297e6]), None, LEVEL);
        assert!(text.ends_with("even 100 runs a side (the --repeat cap) could not tell a change this small"), "{text}");
    }
}
