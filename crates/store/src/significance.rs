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

/// Confidence level of the intervals, percent.
pub const LEVEL: f64 = 95.0;

/// Noise assumed when neither side has a series to measure it (the low end of what
/// back-to-back runs differ by on ordinary hardware); said in the sentence.
pub const ASSUMED_NOISE: f64 = 0.10;

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
    /// B − A, when both sides have two runs or more and some spread.
    pub welch: Option<Welch>,
    /// Significant at [`LEVEL`].
    pub significant: bool,
    /// What the user reads.
    pub sentence: String,
}

/// Both sides' runs compared direction by direction.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Significance {
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
fn sentence(direction: &str, a: &Summary, b: &Summary, w: Option<&Welch>) -> (bool, String) {
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
    let significant = w.significant(LEVEL);
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
/// a direction missing on one side is left out: there is nothing to compare it with).
pub fn significance(a: &[RunDetail], b: &[RunDetail]) -> Significance {
    let mut names: Vec<String> = Vec::new();
    for (d, _) in a.iter().flat_map(goodputs) {
        if !names.contains(&d) {
            names.push(d);
        }
    }
    let directions = names
        .into_iter()
        .filter_map(|d| {
            let sa = Summary::of(&values(a, &d), LEVEL)?;
            let sb = Summary::of(&values(b, &d), LEVEL)?;
            let w = welch(&sa, &sb);
            let (significant, sentence) = sentence(&d, &sa, &sb, w.as_ref());
            Some(DirectionChange { direction: d, a: sa, b: sb, welch: w, significant, sentence })
        })
        .collect();
    Significance {
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
        let (sig, text) = sentence("download", &a, &b, w.as_ref());
        assert!(sig);
        assert!(text.starts_with("download faster by 33.1 % ["), "{text}");
        assert!(text.ends_with("(p < 0.001)"), "{text}");
        let (sig, text) = sentence("download", &b, &a, welch(&b, &a).as_ref());
        assert!(sig && text.starts_with("download slower by 24.9 % ["), "{text}");
    }

    #[test]
    fn noise_reads_no_significant_change() {
        let (a, b) = (s(&[300e6, 330e6, 270e6]), s(&[310e6, 280e6, 320e6]));
        let (sig, text) = sentence("upload", &a, &b, welch(&a, &b).as_ref());
        assert!(!sig);
        assert!(text.starts_with("upload: no significant change (p = 0."), "{text}");
        assert!(text.ends_with("the series' noise is ±10 %)"), "{text}");
    }

    #[test]
    fn single_runs_say_so_and_how_many_runs_would_tell() {
        let (a, b) = (s(&[300e6]), s(&[336e6]));
        let (sig, text) = sentence("upload", &a, &b, None);
        assert!(!sig);
        // 2·(1.96 + 0.84)²·(0.10 / 0.12)² = 10.9 → 11.
        assert_eq!(
            text,
            "upload +12.0 %: a single run cannot tell noise from change; if back-to-back runs differ \
             by ±10 %, 11 runs a side (suite --repeat 11) would tell a change this size"
        );
        let (_, text) = sentence("upload", &a, &s(&[297e6]), None);
        assert!(text.ends_with("even 100 runs a side (the --repeat cap) could not tell a change this small"), "{text}");
    }
}
