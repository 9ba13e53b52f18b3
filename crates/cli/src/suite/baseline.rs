//! `suite --compare-to last|ID|LABEL`: which stored run the new one is compared with, and the
//! `--fail-on-regression` gate read from that comparison.
//!
//! The baseline is found before the suite runs: a typo in a label, or a first run with nothing
//! to compare with, is said at once rather than after minutes of testing.

use wireperf_store::significance::Significance;
use wireperf_store::{ListFilter, RunId, RunKind, Store};
use wireperf_suite::gates::{GateResult, GateStatus};

/// What `--compare-to` named.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Baseline {
    /// The newest suite run (or series) against the same host.
    Last,
    /// A run id; a series' head stands for its counted rounds.
    Id(RunId),
    /// The newest run (or series) with this label.
    Label(String),
}

/// `last`, a run id, or else a label.
pub fn parse(s: &str) -> Result<Baseline, String> {
    let s = s.trim();
    if s.is_empty() {
        return Err("give last, a run id or a label".into());
    }
    Ok(match s {
        "last" => Baseline::Last,
        _ => match s.parse::<RunId>() {
            Ok(id) => Baseline::Id(id),
            Err(_) => Baseline::Label(s.to_string()),
        },
    })
}

/// The stored run `b` names, or why there is none.
pub fn resolve(store: &Store, b: &Baseline, host: &str) -> Result<RunId, String> {
    let newest = |filter: ListFilter, what: String| -> Result<RunId, String> {
        let runs = store.list(&ListFilter { limit: Some(1), ..filter }).map_err(|e| e.to_string())?;
        runs.last().map(|r| r.id).ok_or(what)
    };
    let db = store.path().display();
    match b {
        Baseline::Last => newest(
            ListFilter { kind: Some(RunKind::Suite), remote_host: Some(host.to_string()), ..Default::default() },
            format!("no earlier suite run against {host} in {db}: run the suite once without --compare-to first"),
        ),
        Baseline::Label(l) => newest(
            ListFilter { label: Some(l.clone()), ..Default::default() },
            format!("no run labelled {l:?} in {db} (wireperf history list shows the labels)"),
        ),
        Baseline::Id(id) => match store.get(*id) {
            Ok(_) => Ok(*id),
            Err(e) => Err(e.to_string()),
        },
    }
}

/// `--fail-on-regression PCT`: one gate per direction of the comparison, missed when the
/// direction is significantly slower than the baseline by more than `pct` percent. A drop the
/// test cannot tell from noise passes: the gate is for changes, not for bad luck.
pub fn regression_gates(sig: &Significance, pct: f64) -> Vec<GateResult> {
    sig.directions
        .iter()
        .map(|d| {
            let name = format!("fail-on-regression {}", d.direction);
            let regressed = d.significant && d.change_percent < -pct;
            GateResult {
                name,
                status: if regressed { GateStatus::Missed } else { GateStatus::Met },
                measured: Some(d.change_percent),
                limit: -pct,
                message: if regressed {
                    format!("{}: more than the {pct} % allowed", d.sentence)
                } else {
                    d.sentence.clone()
                },
            }
        })
        .collect()
}

/// `--significance LEVEL`: 50-99.9 percent.
pub fn level(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if (50.0..=99.9).contains(&v) => Ok(v),
        _ => Err(format!("'{s}' is not a confidence level: give 50 to 99.9 (percent)")),
    }
}

/// `--fail-on-regression PCT`: 0 to 100 percent.
pub fn percent(s: &str) -> Result<f64, String> {
    match s.trim().trim_end_matches('%').parse::<f64>() {
        Ok(v) if (0.0..=100.0).contains(&v) => Ok(v),
        _ => Err(format!("'{s}' is not a percentage: give 0 to 100")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wireperf_stats::Summary;
    use wireperf_store::significance::DirectionChange;

    #[test]
    fn baselines_are_last_an_id_or_a_label() {
        assert_eq!(parse("last"), Ok(Baseline::Last));
        assert_eq!(parse("12"), Ok(Baseline::Id(RunId(12))));
        assert_eq!(parse("before-rps"), Ok(Baseline::Label("before-rps".into())));
        assert!(parse(" ").is_err());
        assert_eq!(level("99"), Ok(99.0));
        assert!(level("100").is_err() && level("x").is_err());
        assert_eq!(percent("5%"), Ok(5.0));
        assert!(percent("-1").is_err());
    }

    #[test]
    fn only_a_significant_drop_beyond_the_allowance_misses() {
        let s = |v: &[f64]| Summary::of(v, 95.0).unwrap();
        let dir = |name: &str, change: f64, significant: bool| DirectionChange {
            direction: name.into(),
            a: s(&[1.0, 1.1]),
            b: s(&[1.0, 1.1]),
            change_percent: change,
            welch: None,
            significant,
            sentence: format!("{name} sentence"),
        };
        let sig = Significance {
            level: 95.0,
            a_runs: vec![],
            b_runs: vec![],
            directions: vec![
                dir("upload", -12.0, true),
                dir("download", -12.0, false),
                dir("bidir upload", -3.0, true),
            ],
        };
        let g = regression_gates(&sig, 5.0);
        let st: Vec<GateStatus> = g.iter().map(|g| g.status).collect();
        assert_eq!(st, [GateStatus::Missed, GateStatus::Met, GateStatus::Met]);
        assert_eq!(g[0].name, "fail-on-regression upload");
        assert_eq!(g[0].message, "upload sentence: more than the 5 % allowed");
    }
}
