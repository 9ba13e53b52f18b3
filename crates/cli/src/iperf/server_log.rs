//! The operator's log: one line per accepted, queued, finished, failed, refused test and
//! per dropped connection, as `key=value` text or as one JSON object per line.

use crate::iperf::run_spec::LogFormat;
use serde_json::{Map, Value, json};
use std::time::{SystemTime, UNIX_EPOCH};
use wireperf_engine::server::ServerRecord;

/// Formats one record as a line (without newline).
pub fn format(rec: &ServerRecord, fmt: LogFormat) -> String {
    match fmt {
        LogFormat::Json => to_json(rec, SystemTime::now()).to_string(),
        LogFormat::Text => to_text(rec),
    }
}

fn to_text(rec: &ServerRecord) -> String {
    let mut line = format!("wireperf: {}", rec.kind.name());
    if let Some(t) = rec.test {
        line.push_str(&format!(" test={t}"));
    }
    if let Some(c) = rec.client {
        line.push_str(&format!(" client={c}"));
    }
    if let Some(d) = rec.duration {
        line.push_str(&format!(" duration={:.2}s", d.as_secs_f64()));
    }
    if let Some(b) = rec.bytes {
        line.push_str(&format!(" bytes={b}"));
    }
    if let Some(e) = rec.i_errno {
        line.push_str(&format!(" i_errno={e}"));
    }
    if let Some(l) = rec.limit {
        line.push_str(&format!(" limit={}", l.flag()));
    }
    if let Some(r) = &rec.reason {
        // Quoted, with quotes and newlines escaped, so a line stays one line.
        line.push_str(&format!(" reason={}", Value::String(r.clone())));
    }
    line
}

fn to_json(rec: &ServerRecord, now: SystemTime) -> Value {
    let mut m = Map::new();
    let t = now.duration_since(UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64());
    m.insert("time".into(), json!((t * 1000.0).round() / 1000.0));
    m.insert("event".into(), json!(rec.kind.name()));
    if let Some(t) = rec.test {
        m.insert("test".into(), json!(t));
    }
    if let Some(c) = rec.client {
        m.insert("client".into(), json!(c.ip().to_string()));
        m.insert("client_port".into(), json!(c.port()));
    }
    if let Some(d) = rec.duration {
        m.insert("duration".into(), json!((d.as_secs_f64() * 1000.0).round() / 1000.0));
    }
    if let Some(b) = rec.bytes {
        m.insert("bytes".into(), json!(b));
    }
    if let Some(e) = rec.i_errno {
        m.insert("i_errno".into(), json!(e));
    }
    if let Some(l) = rec.limit {
        m.insert("limit".into(), json!(l.flag()));
    }
    if let Some(r) = &rec.reason {
        m.insert("reason".into(), json!(r));
    }
    Value::Object(m)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;
    use wireperf_engine::server::RecordKind;

    fn rec() -> ServerRecord {
        let mut r = ServerRecord::new(RecordKind::Failed, Some("192.0.2.7:50412".parse().unwrap()))
            .because("authentication failed: wrong password for user 'mario'");
        r.test = Some(3);
        r.duration = Some(Duration::from_millis(1234));
        r.bytes = Some(42);
        r.i_errno = Some(142);
        r
    }

    #[test]
    fn text_is_one_greppable_line() {
        assert_eq!(
            to_text(&rec()),
            "wireperf: failed test=3 client=192.0.2.7:50412 duration=1.23s bytes=42 i_errno=142 \
             reason=\"authentication failed: wrong password for user 'mario'\""
        );
        let r = ServerRecord::new(RecordKind::Dropped, None).because("a\nb");
        assert_eq!(to_text(&r), "wireperf: dropped reason=\"a\\nb\"");
        let mut r = ServerRecord::new(RecordKind::Refused, None).because("full");
        r.limit = Some(wireperf_engine::server::Limit::MaxTestsPerClient);
        assert_eq!(to_text(&r), "wireperf: refused limit=--max-tests-per-client reason=\"full\"");
        assert_eq!(to_json(&r, UNIX_EPOCH)["limit"], "--max-tests-per-client");
    }

    #[test]
    fn json_has_every_field() {
        let v = to_json(&rec(), UNIX_EPOCH + Duration::from_millis(1_700_000_000_123));
        assert_eq!(
            v,
            json!({"time": 1_700_000_000.123, "event": "failed", "test": 3, "client": "192.0.2.7",
                   "client_port": 50412, "duration": 1.234, "bytes": 42, "i_errno": 142,
                   "reason": "authentication failed: wrong password for user 'mario'"})
        );
    }
}
