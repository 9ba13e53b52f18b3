//! Verdicts and doctor findings: JSON made readable.
//!
//! Both arrive as stored JSON whose exact shape belongs to other crates (the suite's verdicts,
//! the doctor's findings), so this module reads the fields it knows by name and shows any
//! other scalar field as `key: value` instead of dropping it. A shape it does not recognise
//! still renders, as a list of those fields.

use std::fmt::Write as _;

use serde_json::{Map, Value};

use crate::escape::xml;

/// Keys that name the subject of a verdict.
const TITLE_KEYS: [&str; 4] = ["phase", "name", "direction", "id"];
/// Keys that hold the judgement word.
const BADGE_KEYS: [&str; 7] = ["verdict", "status", "level", "severity", "grade", "result", "rating"];
/// Keys that hold the sentence.
const TEXT_KEYS: [&str; 7] = ["summary", "text", "message", "sentence", "words", "explanation", "description"];

/// CSS class of a judgement word: `crit`, `warn`, `info`, `ok` or `neutral`.
pub fn tone(word: &str) -> &'static str {
    let w = word.to_ascii_lowercase();
    let any = |list: &[&str]| list.iter().any(|k| w.contains(k));
    if any(&["crit", "fail", "bad", "error", "broken", "poor", "slow"]) {
        "crit"
    } else if any(&["warn", "degrad", "limited", "asym", "fair"]) {
        "warn"
    } else if any(&["ok", "good", "pass", "fast", "fine", "healthy", "excellent", "at-line"]) {
        "ok"
    } else if any(&["info", "note"]) {
        "info"
    } else {
        "neutral"
    }
}

fn scalar(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

fn first_str(o: &Map<String, Value>, keys: &[&str]) -> Option<(String, String)> {
    keys.iter().find_map(|k| o.get(*k).and_then(scalar).map(|v| ((*k).to_string(), v)))
}

fn humanize(key: &str) -> String {
    key.replace('_', " ")
}

/// A detail value: rates (`*_bps`) and sizes (`*_bytes`) in units, other scalars as text,
/// lists of scalars joined, anything else as compact JSON.
fn detail_value(key: &str, v: &Value) -> String {
    if let Some(x) = v.as_f64() {
        if key.ends_with("bps") || key.ends_with("bits_per_second") {
            return wireperf_protocol::outcome::words::rate(x);
        }
        if key == "ratio" {
            return format!("{:.0}%", x * 100.0);
        }
        if key.ends_with("bytes") && x >= 0.0 {
            // Stored as a JSON number; a byte count is integral.
            return super::figures::bytes(x.round() as u64);
        }
    }
    match v {
        Value::Array(items) if items.iter().all(|i| scalar(i).is_some()) => {
            items.iter().filter_map(scalar).collect::<Vec<_>>().join(", ")
        }
        other => scalar(other).unwrap_or_else(|| other.to_string()),
    }
}

/// One verdict item from an object (`title` is the map key when it came from one).
fn verdict_item(out: &mut String, title: Option<&str>, v: &Value) {
    let Value::Object(o) = v else {
        let text = scalar(v).unwrap_or_else(|| v.to_string());
        let _ = write!(
            out,
            "<li class=\"{}\"><div class=\"note-head\">{}</div><p class=\"note-text\">{}</p></li>",
            tone(&text),
            title.map_or(String::new(), |t| format!("<span class=\"title\">{}</span>", xml(t))),
            xml(&text)
        );
        return;
    };
    let title_kv = first_str(o, &TITLE_KEYS);
    // `upload · download`-style headings when a verdict names both phase and direction.
    let direction = o
        .get("direction")
        .and_then(Value::as_str)
        .filter(|d| title_kv.as_ref().is_some_and(|(k, v)| k != "direction" && v != d));
    let badge = first_str(o, &BADGE_KEYS);
    let text = first_str(o, &TEXT_KEYS);
    let class = badge.as_ref().map_or("neutral", |(_, b)| tone(b));
    let heading =
        title.map(str::to_string).or_else(|| title_kv.as_ref().map(|(_, v)| v.clone())).map(|h| match direction {
            Some(d) => format!("{h} · {d}"),
            None => h,
        });
    let _ = write!(out, "<li class=\"{class}\"><div class=\"note-head\">");
    if let Some((_, b)) = &badge {
        let _ = write!(out, "<span class=\"badge {class}\">{}</span>", xml(b));
    }
    if let Some(h) = &heading {
        let _ = write!(out, "<span class=\"title\">{}</span>", xml(h));
    }
    out.push_str("</div>");
    if let Some((_, t)) = &text {
        let _ = write!(out, "<p class=\"note-text\">{}</p>", xml(t));
    }
    let mut used: Vec<&str> =
        [&title_kv, &badge, &text].iter().filter_map(|x| x.as_ref().map(|(k, _)| k.as_str())).collect();
    // The direction is in the heading, or is the heading's word already.
    if title_kv.is_some() && o.get("direction").is_some_and(Value::is_string) {
        used.push("direction");
    }
    let rest: Vec<(&String, &Value)> = o.iter().filter(|(k, v)| !used.contains(&k.as_str()) && !v.is_null()).collect();
    if !rest.is_empty() {
        out.push_str("<ul class=\"details\">");
        for (k, v) in rest {
            let _ = write!(out, "<li><b>{}:</b> {}</li>", xml(&humanize(k)), xml(&detail_value(k, v)));
        }
        out.push_str("</ul>");
    }
    out.push_str("</li>");
}

/// The verdicts as a list. Accepts a list of verdict objects, an object keyed by phase, or
/// an object with a `verdicts`/`phases` list inside.
pub fn verdicts(v: &Value) -> String {
    let mut out = String::from("<ul class=\"notes verdicts\">");
    match v {
        Value::Array(items) => items.iter().for_each(|i| verdict_item(&mut out, None, i)),
        Value::Object(o) => {
            if let Some((list_key, inner)) =
                ["verdicts", "phases", "items"].iter().find_map(|k| o.get(*k).filter(|x| x.is_array()).map(|v| (*k, v)))
            {
                // The list, then any list of sentences beside it (the suite's `remarks`).
                let mut html = verdicts(inner);
                html.truncate(html.len() - "</ul>".len());
                for (k, v) in o {
                    if let Some(lines) = v.as_array().filter(|_| k != list_key) {
                        for line in lines.iter().filter_map(Value::as_str) {
                            let _ = write!(
                                html,
                                "<li class=\"info\"><div class=\"note-head\"><span class=\"title\">{}</span></div><p class=\"note-text\">{}</p></li>",
                                xml(&humanize(k)),
                                xml(line)
                            );
                        }
                    }
                }
                html.push_str("</ul>");
                return html;
            }
            if o.values().all(Value::is_object) {
                for (k, item) in o {
                    verdict_item(&mut out, Some(k), item);
                }
            } else {
                verdict_item(&mut out, None, v);
            }
        }
        other => verdict_item(&mut out, None, other),
    }
    out.push_str("</ul>");
    out
}

fn strings(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array).map(|a| a.iter().filter_map(scalar).collect()).unwrap_or_default()
}

/// One doctor finding: id, severity badge, summary, evidence, fix commands and checks.
fn finding(out: &mut String, f: &Value, iface: Option<&str>) {
    if let Some(id) = f.as_str() {
        // Only the id was stored: show it, pointing at where the details live.
        let _ = write!(
            out,
            "<li class=\"neutral\"><div class=\"note-head\"><code>{}</code></div>\
             <p class=\"note-text muted\">Run <code>wireperf doctor</code> for the evidence and the fix.</p></li>",
            xml(id)
        );
        return;
    }
    let get = |k: &str| f.get(k).and_then(scalar);
    let severity = get("severity").unwrap_or_else(|| "info".to_string());
    let class = tone(&severity);
    let _ = write!(
        out,
        "<li class=\"{class}\"><div class=\"note-head\"><span class=\"badge {class}\">{}</span>",
        xml(&severity)
    );
    if let Some(id) = get("id") {
        let _ = write!(out, "<code>{}</code>", xml(&id));
    }
    if let Some(i) = iface {
        let _ = write!(out, "<span class=\"muted\">on {}</span>", xml(i));
    }
    out.push_str("</div>");
    if let Some(s) = get("summary") {
        let _ = write!(out, "<p class=\"note-text\">{}</p>", xml(&s));
    }
    let evidence = strings(f.get("evidence"));
    if !evidence.is_empty() {
        out.push_str("<ul class=\"evidence\">");
        for e in evidence {
            let _ = write!(out, "<li>{}</li>", xml(&e));
        }
        out.push_str("</ul>");
    }
    let fix = f.get("fix");
    for (label, key) in [("Fix", "commands"), ("Verify", "verify")] {
        let lines = strings(fix.and_then(|x| x.get(key)));
        if !lines.is_empty() {
            let _ = write!(out, "<div class=\"fix-label\">{label}</div><pre>{}</pre>", xml(&lines.join("\n")));
        }
    }
    if fix.and_then(|x| x.get("drops_link")).and_then(Value::as_bool).unwrap_or(false) {
        out.push_str("<p class=\"drops-link\">⚠ Running the fix takes the link down for a moment.</p>");
    }
    for note in strings(fix.and_then(|x| x.get("notes"))) {
        let _ = write!(out, "<p class=\"muted\">{}</p>", xml(&note));
    }
    out.push_str("</li>");
}

/// Where a finding of the suite's list sits: `eth0`, `the server's eth1`, `both ends`.
fn host_label(f: &Value) -> Option<String> {
    let iface = f.get("interface").and_then(Value::as_str);
    match (f.get("host").and_then(Value::as_str), iface) {
        (Some("both"), _) => Some("both ends".into()),
        (Some(h), Some(i)) => Some(format!("the {h}'s {i}")),
        (Some(h), None) => Some(format!("the {h}")),
        (None, i) => i.map(str::to_string),
    }
}

/// (interface, finding) pairs from any of the accepted shapes.
fn collect_findings(v: &Value) -> Vec<(Option<String>, &Value)> {
    match v {
        // The suite's list names each finding's host and interface (`host`: `server`, `both`).
        Value::Array(items) => items.iter().map(|f| (host_label(f), f)).collect(),
        Value::Object(o) => {
            if let Some(Value::Array(list)) = o.get("findings") {
                return list.iter().map(|f| (None, f)).collect();
            }
            if let Some(Value::Array(ifaces)) = o.get("interfaces") {
                return ifaces
                    .iter()
                    .flat_map(|i| {
                        let name = ["name", "iface", "interface"]
                            .iter()
                            .find_map(|k| i.get(*k).and_then(Value::as_str))
                            .map(str::to_string);
                        i.get("findings")
                            .and_then(Value::as_array)
                            .into_iter()
                            .flatten()
                            .map(move |f| (name.clone(), f))
                    })
                    .collect();
            }
            vec![(None, v)]
        }
        _ => Vec::new(),
    }
}

/// The findings as a list; an empty string when there are none.
pub fn findings(v: &Value) -> String {
    let all = collect_findings(v);
    if all.is_empty() {
        return String::new();
    }
    let mut out = String::from("<ul class=\"notes findings\">");
    for (iface, f) in all {
        finding(&mut out, f, iface.as_deref());
    }
    out.push_str("</ul>");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn tones() {
        assert_eq!(tone("crit"), "crit");
        assert_eq!(tone("SLOW"), "crit");
        assert_eq!(tone("fair"), "warn");
        assert_eq!(tone("ok"), "ok");
        assert_eq!(tone("whatever"), "neutral");
    }

    #[test]
    fn verdicts_keyed_by_phase_keep_unknown_fields() {
        let html = verdicts(&json!({"upload": {"verdict": "slow", "summary": "25% of link", "ceiling_bps": 2.35e9}}));
        assert!(html.contains("<b>ceiling bps:</b> 2.35 Gbit/s"), "{html}");
        assert!(html.contains("badge crit"));
        assert!(html.contains("upload"));
        assert!(html.contains("25% of link"));
        assert!(html.contains("ceiling bps:"));
    }

    #[test]
    fn findings_from_a_doctor_document() {
        let doc = json!({"interfaces": [{"name": "eth0", "findings": [
            {"id": "generic-usb-driver", "severity": "crit", "summary": "s <b>",
             "evidence": ["driver cdc_ncm"], "fix": {"commands": ["modprobe r8152"], "verify": [], "drops_link": true, "notes": []}}
        ]}]});
        let html = findings(&doc);
        assert!(html.contains("<code>generic-usb-driver</code>"));
        assert!(html.contains("on eth0"));
        assert!(html.contains("<pre>modprobe r8152</pre>"));
        assert!(html.contains("s &lt;b&gt;"));
        assert!(html.contains("takes the link down"));
        assert_eq!(findings(&json!([])), "");
        // The suite's list: each finding names its host.
        let both = findings(&json!([
            {"id": "rps-off", "severity": "crit", "interface": "eth0"},
            {"id": "generic-usb-driver", "severity": "crit", "interface": "enx0", "host": "server",
             "fix": {"commands": ["sudo modprobe r8152"]}},
            {"id": "mtu-mismatch", "severity": "warn", "host": "both"},
        ]));
        assert!(both.contains("<span class=\"muted\">on eth0</span>"), "{both}");
        assert!(both.contains("<span class=\"muted\">on the server&#39;s enx0</span>"), "{both}");
        assert!(both.contains("<span class=\"muted\">on both ends</span>"), "{both}");
        assert!(both.contains("<pre>sudo modprobe r8152</pre>"), "{both}");
        assert!(findings(&json!(["rx-ring-small"])).contains("<code>rx-ring-small</code>"));
    }
}
