//! A suite run once it has ended: its series, what was saved, the comparison with its baseline
//! and the gates' results, and the three things made of them: the JSON document (stdout with
//! `--json`, and `--json-file`), the text, and the exit status. Computed once in `run`, read
//! here, so the JSON and the text cannot tell different stories.

use super::render::{render, render_comparison, render_gates, render_series};
use std::time::Duration;
use wireperf_store::significance::Significance;
use wireperf_store::{RunId, SeriesIds};
use wireperf_suite::gates::{self, GateResult, GateStatus};
use wireperf_suite::series::SeriesResult;

/// Everything a finished suite run reports.
pub(super) struct Finished {
    /// The rounds (one without `--repeat`) and their statistics.
    pub series: SeriesResult,
    /// `--repeat` was given: the result is a series, not one run.
    pub is_series: bool,
    /// The history ids, unless `--no-save` or the save failed.
    pub saved: Option<SeriesIds>,
    /// `--compare-to`: the baseline and the change per direction.
    pub comparison: Option<(RunId, Significance)>,
    /// The gates' results, when a gate was asked for.
    pub checked: Option<Vec<GateResult>>,
}

impl Finished {
    /// The JSON document: one run as the suite prints it, or the series, with the saved ids,
    /// the comparison and the gates added.
    pub fn json(&self) -> Result<String, String> {
        let mut doc = match (self.is_series, self.series.rounds.last()) {
            (false, Some(r)) => serde_json::to_value(r).unwrap_or_default(),
            _ => serde_json::to_value(&self.series).unwrap_or_default(),
        };
        if let Some(obj) = doc.as_object_mut() {
            match &self.saved {
                None => {}
                Some(ids) if !self.is_series => {
                    obj.insert("saved_run".into(), serde_json::json!(ids.head.0));
                }
                Some(ids) => {
                    obj.insert("saved_series".into(), serde_json::json!(ids.head.0));
                    let rounds: Vec<i64> = ids.rounds.iter().map(|i| i.0).collect();
                    obj.insert("saved_runs".into(), serde_json::json!(rounds));
                }
            }
            if let Some((base, sig)) = &self.comparison {
                let mut c = serde_json::to_value(sig).unwrap_or_default();
                if let Some(o) = c.as_object_mut() {
                    o.insert("baseline".into(), serde_json::json!(base.0));
                }
                obj.insert("comparison".into(), c);
            }
            if let Some(g) = &self.checked {
                obj.insert("gates".into(), serde_json::to_value(g).unwrap_or_default());
            }
        }
        serde_json::to_string_pretty(&doc).map_err(|e| format!("cannot encode the result: {e}"))
    }

    /// `--json-file` (the document) and `--junit` (the gates, timed over `took`).
    pub fn write_files(&self, a: &super::SuiteArgs, json: &str, took: Duration) -> Result<(), String> {
        if let Some(path) = &a.json_file {
            std::fs::write(path, format!("{json}\n"))
                .map_err(|e| format!("cannot write the JSON result to {}: {e}", path.display()))?;
        }
        if let (Some(path), Some(g)) = (&a.junit, &self.checked) {
            std::fs::write(path, gates::junit_xml(g, took.as_secs_f64()))
                .map_err(|e| format!("cannot write the JUnit file {}: {e}", path.display()))?;
        }
        Ok(())
    }

    /// The text: the run or the series, the comparison, the gates, where it was saved.
    pub fn text(&self) -> String {
        let mut out = String::new();
        if self.is_series {
            out.push_str(&render_series(&self.series));
        } else if let Some(r) = self.series.rounds.last() {
            out.push_str(&render(r));
        }
        if let Some((base, sig)) = &self.comparison {
            out.push_str(&render_comparison(*base, sig));
        }
        if let Some(g) = &self.checked {
            out.push_str(&render_gates(g));
        }
        match (&self.saved, self.is_series) {
            (None, _) => {}
            (Some(ids), false) => {
                out.push_str(&format!("\nsaved as run #{} (wireperf history show {})\n", ids.head.0, ids.head.0));
            }
            (Some(ids), true) => {
                let rounds = match (ids.rounds.first(), ids.rounds.last()) {
                    (Some(f), Some(l)) => format!("rounds #{}-#{}", f.0, l.0),
                    _ => "no rounds".into(),
                };
                out.push_str(&format!(
                    "\nsaved as series #{} ({rounds}; wireperf history show {})\n",
                    ids.head.0, ids.head.0
                ));
            }
        }
        out
    }

    /// Without a gate 1 if a phase failed; with one 0 met, 1 missed, 2 could not be judged,
    /// and one line on stderr that a script's log shows: why it did not pass.
    pub fn exit_status(&self) -> i32 {
        let Some(g) = &self.checked else {
            return i32::from(!self.series.all_ok());
        };
        let code = gates::exit_code(&self.series, g);
        if let Some(miss) = g.iter().find(|x| x.status != GateStatus::Met) {
            eprintln!("wireperf suite: gate {}: {}", miss.name, miss.message);
        } else if code == 2 {
            eprintln!("wireperf suite: a phase failed: the gates could not be judged");
        }
        code
    }
}
