//! `history import`: a stock iperf3 `-J` document (client or server side, TCP or UDP) as a run.
//!
//! The document's text is stored exactly as read, so keys the typed schema does not model
//! (newer iperf3 versions add some) are kept; the typed report is only used for the columns.

use serde_json::Value;
use wireperf_protocol::schema::TestReport;

use crate::error::StoreError;
use crate::model::{NewPhase, NewRun, RunId, RunKind, phase_name_for};
use crate::store::Store;

/// Builds the run for an iperf3 `-J` document without storing it.
pub fn run_from_iperf3_json(text: &str, source_name: &str) -> Result<NewRun, StoreError> {
    let bad = |reason: String| StoreError::Import { source_name: source_name.to_string(), reason };
    let trimmed = text.trim();
    let mut docs = serde_json::Deserializer::from_str(trimmed).into_iter::<Value>();
    let value = match docs.next() {
        Some(Ok(v)) => v,
        Some(Err(e)) => return Err(bad(format!("not JSON ({e})"))),
        None => return Err(bad("the file is empty".into())),
    };
    if docs.next().is_some() {
        return Err(bad("more than one JSON document (a server's output without -1, or --json-stream); \
             import one test per file"
            .into()));
    }
    let Some(obj) = value.as_object() else {
        return Err(bad("not an iperf3 -J document (expected a JSON object)".into()));
    };
    if !obj.contains_key("start") || !(obj.contains_key("end") || obj.contains_key("error")) {
        return Err(bad("not an iperf3 -J document (no \"start\" and \"end\" objects)".into()));
    }
    let report: TestReport =
        serde_json::from_value(value.clone()).map_err(|e| bad(format!("unexpected iperf3 -J layout ({e})")))?;
    let parameters = value.pointer("/start/test_start").cloned().unwrap_or(Value::Object(Default::default()));
    let name = phase_name_for(&report);
    let mut phase = NewPhase::new(name, report);
    phase.document = Some(trimmed.to_string());
    let mut run = NewRun::new(RunKind::Import, None);
    run.parameters = Some(parameters);
    run.source = Some(source_name.to_string());
    run.phases.push(phase);
    Ok(run)
}

impl Store {
    /// Imports one iperf3 `-J` document; `source_name` (the file name) is kept with the run.
    pub fn import_iperf3_json(&mut self, text: &str, source_name: &str) -> Result<RunId, StoreError> {
        let run = run_from_iperf3_json(text, source_name)?;
        self.insert_run(&run)
    }
}
