//! The proof of a step: the same series before and after it, compared per direction with
//! Welch's t-test, and the decision to keep or undo it.
//!
//! The figures compared are the upload phase's upload, the download phase's download and the
//! bidir phase's total: a bidir test's two directions share the hosts' CPUs and the link, so
//! a fix that speeds one of them may take from the other without the pair getting worse;
//! their sum is what a regression would show in. A step is kept when a direction it targets
//! improved significantly and no figure got significantly worse; anything else (no change
//! beyond noise, a regression, too few rounds to tell) undoes it.

use crate::step::Direction;
use serde::Serialize;
use wireperf_stats::{Summary, welch};
use wireperf_suite::Phase;
use wireperf_suite::series::SeriesResult;

/// One figure before and after.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FigureChange {
    /// `upload`, `download` or `bidir total`.
    pub figure: String,
    /// The direction it measures (`None` for the bidir total).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub direction: Option<Direction>,
    /// Goodput over the rounds before, bit/s.
    pub before: Summary,
    /// And after.
    pub after: Summary,
    /// (after − before) / before, percent.
    pub change_pct: f64,
    /// Welch's two-sided p value; `None` when a side has fewer than two rounds or no spread.
    pub p: Option<f64>,
    /// Beyond noise at the loop's level.
    pub significant: bool,
}

impl FigureChange {
    /// Up beyond noise.
    pub fn improved(&self) -> bool {
        self.significant && self.change_pct > 0.0
    }

    /// Down beyond noise.
    pub fn regressed(&self) -> bool {
        self.significant && self.change_pct < 0.0
    }
}

/// Keep or undo.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    /// Keep the step.
    Keep,
    /// Undo it.
    Undo,
}

/// The comparison of two series and what it decides.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Proof {
    /// Per figure.
    pub figures: Vec<FigureChange>,
    /// The decision.
    pub decision: Decision,
    /// One sentence: why.
    pub reason: String,
}

/// The figures a proof compares, each over the counted rounds of `s`.
fn figures(s: &SeriesResult, level: f64) -> Vec<(String, Option<Direction>, Option<Summary>)> {
    let bidir: Vec<f64> = s
        .counted()
        .iter()
        .flat_map(|r| r.phases.iter().filter(|p| p.phase == Phase::Bidir && p.error.is_none()))
        .map(|p| p.upload_bps + p.download_bps)
        .collect();
    vec![
        ("upload".into(), Some(Direction::Upload), s.stats(Phase::Upload, "upload").map(|d| d.throughput_bps)),
        ("download".into(), Some(Direction::Download), s.stats(Phase::Download, "download").map(|d| d.throughput_bps)),
        ("bidir total".into(), None, Summary::of(&bidir, level)),
    ]
}

/// Every figure of `before` against `after` at `level` percent.
pub fn compare(before: &SeriesResult, after: &SeriesResult, level: f64) -> Vec<FigureChange> {
    let a = figures(before, level);
    let b = figures(after, level);
    a.into_iter()
        .zip(b)
        .filter_map(|((figure, direction, x), (_, _, y))| {
            let (x, y) = (x?, y?);
            let w = welch(&x, &y);
            let change_pct = if x.mean > 0.0 { (y.mean - x.mean) / x.mean * 100.0 } else { 0.0 };
            Some(FigureChange {
                figure,
                direction,
                before: x,
                after: y,
                change_pct,
                p: w.map(|w| w.p),
                significant: w.is_some_and(|w| w.significant(level)),
            })
        })
        .collect()
}

/// Decides a step that targets `targets` from `before` and `after`.
pub fn judge(before: &SeriesResult, after: &SeriesResult, targets: &[Direction], level: f64) -> Proof {
    let figures = compare(before, after, level);
    decide(figures, targets, level)
}

/// The decision over computed figures (see the module's doc).
pub fn decide(figures: Vec<FigureChange>, targets: &[Direction], level: f64) -> Proof {
    let targeted: Vec<&FigureChange> =
        figures.iter().filter(|f| f.direction.is_some_and(|d| targets.contains(&d))).collect();
    let confidence = format!("{level:.0}%");
    let (decision, reason) = if let Some(r) = figures.iter().find(|f| f.regressed()) {
        (
            Decision::Undo,
            format!("the {} got worse beyond noise ({:+.1}%, {confidence} confidence)", r.figure, r.change_pct),
        )
    } else if let Some(g) = targeted.iter().find(|f| f.improved()) {
        (
            Decision::Keep,
            format!(
                "the {} improved {:+.1}% beyond noise ({confidence} confidence) and no direction got worse",
                g.figure, g.change_pct
            ),
        )
    } else if targeted.is_empty() || targeted.iter().all(|f| f.p.is_none()) {
        (Decision::Undo, "too few rounds to tell a change from noise (at least 2 per series are needed)".to_string())
    } else {
        let names: Vec<&str> = targeted.iter().map(|f| f.figure.as_str()).collect();
        (Decision::Undo, format!("the {} did not change beyond noise ({confidence} confidence)", names.join(" and ")))
    };
    Proof { figures, decision, reason }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(values: &[f64]) -> Summary {
        Summary::of(values, 95.0).unwrap_or_else(|| panic!("{values:?}"))
    }

    fn change(figure: &str, d: Option<Direction>, before: &[f64], after: &[f64]) -> FigureChange {
        let (x, y) = (summary(before), summary(after));
        let w = welch(&x, &y);
        FigureChange {
            figure: figure.into(),
            direction: d,
            before: x,
            after: y,
            change_pct: (y.mean - x.mean) / x.mean * 100.0,
            p: w.map(|w| w.p),
            significant: w.is_some_and(|w| w.significant(95.0)),
        }
    }

    const FLAT: [f64; 5] = [10.0, 10.2, 9.9, 10.1, 10.0];
    const UP: [f64; 5] = [20.0, 20.3, 19.8, 20.1, 20.2];
    const DOWN: [f64; 5] = [5.0, 5.1, 4.9, 5.2, 5.0];

    #[test]
    fn a_targeted_gain_without_a_regression_is_kept() {
        let f = vec![
            change("upload", Some(Direction::Upload), &FLAT, &UP),
            change("download", Some(Direction::Download), &FLAT, &FLAT),
            change("bidir total", None, &FLAT, &FLAT),
        ];
        let p = decide(f, &[Direction::Upload], 95.0);
        assert_eq!(p.decision, Decision::Keep, "{}", p.reason);
        assert!(p.reason.contains("upload improved +"), "{}", p.reason);
    }

    #[test]
    fn a_gain_elsewhere_is_not_the_steps_and_a_regression_undoes() {
        let f = vec![
            change("upload", Some(Direction::Upload), &FLAT, &FLAT),
            change("download", Some(Direction::Download), &FLAT, &UP),
        ];
        let p = decide(f, &[Direction::Upload], 95.0);
        assert_eq!(p.decision, Decision::Undo);
        assert!(p.reason.contains("did not change beyond noise"), "{}", p.reason);
        let f = vec![
            change("upload", Some(Direction::Upload), &FLAT, &UP),
            change("download", Some(Direction::Download), &FLAT, &DOWN),
        ];
        let p = decide(f, &[Direction::Upload], 95.0);
        assert_eq!(p.decision, Decision::Undo);
        assert!(p.reason.contains("download got worse"), "{}", p.reason);
    }

    #[test]
    fn noise_is_not_a_gain_and_one_round_cannot_prove() {
        let noisy_a = [10.0, 14.0, 8.0, 12.0, 9.0];
        let noisy_b = [11.0, 15.0, 8.5, 12.0, 10.0];
        let p = decide(vec![change("upload", Some(Direction::Upload), &noisy_a, &noisy_b)], &[Direction::Upload], 95.0);
        assert_eq!(p.decision, Decision::Undo, "{p:?}");
        let p = decide(vec![change("upload", Some(Direction::Upload), &[10.0], &[20.0])], &[Direction::Upload], 95.0);
        assert_eq!(p.decision, Decision::Undo);
        assert!(p.reason.contains("too few rounds"), "{}", p.reason);
    }
}
