//! `history export`: runs as one JSON document.

use serde_json::{Value, json};

use crate::error::StoreError;
use crate::migrate::SCHEMA_VERSION;
use crate::model::{ListFilter, RunId};
use crate::store::Store;
use crate::time::{now_unix, rfc3339_utc};

/// The `schema` value of an export document.
pub const EXPORT_SCHEMA: &str = "wireperf-history";

impl Store {
    /// The runs `ids` (all runs when empty, a series' head and its rounds alike) as one document:
    /// `{"schema": "wireperf-history", "schema_version", "exported_at", "runs": [RunDetail...]}`.
    /// Each phase's `report` is its full `-J` document.
    pub fn export(&self, ids: &[RunId]) -> Result<Value, StoreError> {
        let ids: Vec<RunId> = if ids.is_empty() {
            self.list(&ListFilter { members: true, ..ListFilter::default() })?.into_iter().map(|r| r.id).collect()
        } else {
            ids.to_vec()
        };
        let mut runs = Vec::with_capacity(ids.len());
        for id in ids {
            runs.push(serde_json::to_value(self.get(id)?)?);
        }
        Ok(json!({
            "schema": EXPORT_SCHEMA,
            "schema_version": SCHEMA_VERSION,
            "exported_at": rfc3339_utc(now_unix()),
            "runs": runs,
        }))
    }
}
