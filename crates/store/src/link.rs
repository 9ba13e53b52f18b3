//! Link facts read back from the doctor JSON stored with a run, for `compare`.
//!
//! The store does not depend on the doctor crate: it reads the documented keys of the doctor's
//! `--json` document (`interfaces[]` with `name`, `driver`, `speed_mbps`, `duplex`, `mtu`,
//! `findings[].id`; see docs/doctor.md). A run may hold the whole document or a single
//! interface object; the separate `findings` column may hold finding objects or plain ids.

use std::collections::BTreeSet;

use serde::Serialize;
use serde_json::Value;

/// The facts `compare` shows for one interface.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct LinkFacts {
    /// Interface name.
    pub name: String,
    /// `driver`.
    pub driver: Option<String>,
    /// `chip` (adapter chip name, when identified).
    pub chip: Option<String>,
    /// `speed_mbps`.
    pub speed_mbps: Option<i64>,
    /// `duplex`.
    pub duplex: Option<String>,
    /// `mtu`.
    pub mtu: Option<i64>,
    /// USB link speed, Mbit/s, when on USB.
    pub usb_speed_mbps: Option<i64>,
}

impl LinkFacts {
    /// `(field, value as text)` pairs in display order.
    pub fn fields(&self) -> Vec<(&'static str, Option<String>)> {
        vec![
            ("driver", self.driver.clone()),
            ("chip", self.chip.clone()),
            ("speed", self.speed_mbps.map(|s| format!("{s} Mbit/s"))),
            ("duplex", self.duplex.clone()),
            ("MTU", self.mtu.map(|m| m.to_string())),
            ("USB link", self.usb_speed_mbps.map(|s| format!("{s} Mbit/s"))),
        ]
    }
}

fn interface_objects(doctor: &Value) -> Vec<&Value> {
    match doctor.get("interfaces").and_then(Value::as_array) {
        Some(list) => list.iter().collect(),
        None if doctor.get("name").is_some() => vec![doctor],
        None => Vec::new(),
    }
}

/// The interfaces in a doctor document.
pub fn interfaces(doctor: &Value) -> Vec<LinkFacts> {
    let s = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
    let n = |v: &Value, k: &str| v.get(k).and_then(Value::as_i64);
    interface_objects(doctor)
        .into_iter()
        .map(|i| LinkFacts {
            name: s(i, "name").unwrap_or_default(),
            driver: s(i, "driver"),
            chip: s(i, "chip"),
            speed_mbps: n(i, "speed_mbps"),
            duplex: s(i, "duplex"),
            mtu: n(i, "mtu"),
            usb_speed_mbps: i.get("usb").and_then(|u| n(u, "link_speed_mbps")),
        })
        .collect()
}

/// Finding ids in the doctor document and the findings column, as `id`, `id (iface)`, `id
/// (server iface)` for a finding of the server's host, or `id (both ends)` for one about the
/// two hosts together (the `host` key the suite stores).
pub fn finding_ids(doctor: Option<&Value>, findings: Option<&Value>) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut add = |f: &Value, iface: Option<&str>| {
        let id = f.as_str().or_else(|| f.get("id").and_then(Value::as_str));
        let iface = f.get("interface").and_then(Value::as_str).or(iface);
        let host = f.get("host").and_then(Value::as_str);
        if let Some(id) = id {
            out.insert(match (host, iface) {
                (Some("both"), _) => format!("{id} (both ends)"),
                (Some(h), Some(i)) if !i.is_empty() => format!("{id} ({h} {i})"),
                (Some(h), _) => format!("{id} ({h})"),
                (None, Some(i)) if !i.is_empty() => format!("{id} ({i})"),
                (None, _) => id.to_string(),
            });
        }
    };
    if let Some(d) = doctor {
        for i in interface_objects(d) {
            let name = i.get("name").and_then(Value::as_str);
            for f in i.get("findings").and_then(Value::as_array).into_iter().flatten() {
                add(f, name);
            }
        }
    }
    if let Some(list) = findings.and_then(Value::as_array) {
        for f in list {
            add(f, None);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_whole_document_or_one_interface() {
        let iface = json!({"name": "enx0", "driver": "cdc_ncm", "speed_mbps": 2500, "duplex": "half",
                           "mtu": 1500, "usb": {"link_speed_mbps": 5000},
                           "findings": [{"id": "generic-usb-driver"}]});
        let doc = json!({"schema": "wireperf-doctor", "interfaces": [iface.clone()]});
        for v in [&doc, &iface] {
            let l = interfaces(v);
            assert_eq!(l.len(), 1);
            assert_eq!(l[0].driver.as_deref(), Some("cdc_ncm"));
            assert_eq!(l[0].usb_speed_mbps, Some(5000));
        }
        let ids = finding_ids(Some(&doc), Some(&json!(["mtu-mismatch", {"id": "x", "interface": "eth1"}])));
        let ids: Vec<_> = ids.into_iter().collect();
        assert_eq!(ids, ["generic-usb-driver (enx0)", "mtu-mismatch", "x (eth1)"]);
        // The suite's list names the server's findings and the two ends'.
        let list = json!([{"id": "rps-off", "interface": "eth0"},
                          {"id": "generic-usb-driver", "interface": "enx0", "host": "server"},
                          {"id": "mtu-mismatch", "host": "both"}]);
        let ids: Vec<_> = finding_ids(None, Some(&list)).into_iter().collect();
        assert_eq!(ids, ["generic-usb-driver (server enx0)", "mtu-mismatch (both ends)", "rps-off (eth0)"]);
    }
}
