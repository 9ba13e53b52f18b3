//! The `--json` document. One object, versioned: consumers check `schema_version` and ignore
//! fields they do not know. Field-by-field documentation is in docs/doctor.md.
//!
//! The interface objects are the serialized [`InterfaceReport`](crate::InterfaceReport), with
//! `chip` flattened to its name (`"RTL8156B"`) and the identification details in `chip_info`.

use serde_json::{Value, json};

use crate::Report;

/// Bumped when a field is removed or changes meaning (adding fields does not bump it).
pub const SCHEMA_VERSION: u32 = 1;

/// Builds the JSON document for a report.
pub fn to_value(report: &Report) -> Result<Value, serde_json::Error> {
    let mut interfaces = Vec::new();
    for i in &report.interfaces {
        let mut v = serde_json::to_value(i)?;
        if let Some(o) = v.as_object_mut() {
            let chip = o.remove("chip").unwrap_or(Value::Null);
            let name = chip.get("name").cloned().unwrap_or(Value::Null);
            // Re-insert in a readable place: serde_json keeps insertion order (preserve_order).
            let mut out = serde_json::Map::new();
            for (k, val) in std::mem::take(o) {
                let after_driver = k == "driver";
                out.insert(k, val);
                if after_driver {
                    out.insert("chip".into(), name.clone());
                    out.insert("chip_info".into(), chip.clone());
                }
            }
            *o = out;
        }
        interfaces.push(v);
    }
    Ok(json!({
        "schema": "wireperf-doctor",
        "schema_version": SCHEMA_VERSION,
        "root": report.root,
        "host": serde_json::to_value(&report.host)?,
        "interfaces": interfaces,
    }))
}

/// The document as pretty-printed text.
pub fn to_string(report: &Report) -> Result<String, serde_json::Error> {
    serde_json::to_string_pretty(&to_value(report)?)
}
