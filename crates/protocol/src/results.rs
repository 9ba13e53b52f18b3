//! The results JSON both sides exchange after TEST_END.
//!
//! Each side reports, per stream id, what it measured itself; the peer fills in the half it
//! could not see (a sender learns what arrived, a receiver learns what was sent). wireperf adds
//! a `wireperf` object with extension figures; stock peers ignore unknown keys.

use crate::json_num::{as_f64, as_i64, as_u64};
use crate::schema::DropUnit;
use serde_json::{Map, Value, json};

/// The results key of the watch extension (also the parameter that asks for it).
pub const WATCH_KEY: &str = "wireperf_watch";

/// One stream's figures in the results exchange.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StreamResult {
    /// Stream id (1, 3, 4, 5, ... in creation order).
    pub id: i32,
    /// Bytes sent (sending stream) or received (receiving stream), after omit.
    pub bytes: u64,
    /// TCP retransmits of a sending stream, -1 when not applicable.
    pub retransmits: i64,
    /// UDP jitter in seconds (receiving stream).
    pub jitter: f64,
    /// UDP datagrams lost (receiving stream).
    pub errors: i64,
    /// `errors` at the end of the omit period (3.14+).
    pub omitted_errors: Option<i64>,
    /// UDP datagrams: sent, or highest sequence number seen.
    pub packets: i64,
    /// `packets` at the end of the omit period (3.14+).
    pub omitted_packets: Option<i64>,
    /// Always 0.
    pub start_time: f64,
    /// Seconds from stream start to the final sample.
    pub end_time: f64,
    /// wireperf extension: datagrams the receiving socket dropped (SO_RXQ_OVFL).
    pub socket_drops: Option<u64>,
    /// wireperf extension: what `socket_drops` counts (packets when the socket had GRO on).
    pub socket_drops_unit: Option<DropUnit>,
    /// wireperf extension: duplicate datagrams seen by the receiver.
    pub duplicates: Option<u64>,
    /// wireperf extension: out-of-order datagrams seen by the receiver.
    pub out_of_order: Option<u64>,
    /// wireperf extension: datagrams the sender could not send (ENOBUFS/EAGAIN).
    pub send_drops: Option<u64>,
    /// wireperf extension: received datagrams without a receive time of their own (GRO
    /// coalesced them), which the jitter could not include.
    pub jitter_untimed: Option<u64>,
}

/// A whole results message.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ExchangeResults {
    /// Process CPU over wall time, percent.
    pub cpu_util_total: f64,
    /// User CPU, percent.
    pub cpu_util_user: f64,
    /// System CPU, percent.
    pub cpu_util_system: f64,
    /// -1 if this side only received, 1 if it sent TCP with retransmit info, else 0.
    pub sender_has_retransmits: i64,
    /// Congestion control algorithm in use on this side.
    pub congestion_used: Option<String>,
    /// The server's whole `-J` document (only when asked and the server runs with `-J`).
    pub server_output_json: Option<Value>,
    /// The server's text output (only when asked and the server runs in text mode).
    pub server_output_text: Option<String>,
    /// Per-stream figures.
    pub streams: Vec<StreamResult>,
    /// wireperf extension (`wireperf_watch`): what the sender's host saw during the test
    /// (the bottleneck watcher's samples), sent only when the peer asked for it. Opaque here:
    /// the doctor crate owns its shape. Stock peers ignore the key.
    pub watch: Option<Value>,
}

/// Why a results message could not be used.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ResultsError {
    /// A key stock readers require is missing or of the wrong type.
    #[error("results message lacks a valid \"{0}\"")]
    Missing(&'static str),
    /// `omitted_errors` without `omitted_packets` or the reverse.
    #[error("results message has only one of omitted_errors / omitted_packets")]
    HalfOmitted,
}

impl ExchangeResults {
    /// Encodes the message as 3.14+ peers do (signed integers, `omitted_*` keys).
    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("cpu_util_total".into(), json!(self.cpu_util_total));
        m.insert("cpu_util_user".into(), json!(self.cpu_util_user));
        m.insert("cpu_util_system".into(), json!(self.cpu_util_system));
        m.insert("sender_has_retransmits".into(), json!(self.sender_has_retransmits));
        if let Some(c) = &self.congestion_used {
            m.insert("congestion_used".into(), json!(c));
        }
        if let Some(j) = &self.server_output_json {
            m.insert("server_output_json".into(), j.clone());
        }
        if let Some(t) = &self.server_output_text {
            m.insert("server_output_text".into(), json!(t));
        }
        let streams: Vec<Value> = self.streams.iter().map(StreamResult::to_json).collect();
        m.insert("streams".into(), Value::Array(streams));
        if let Some(w) = &self.watch {
            m.insert(WATCH_KEY.into(), w.clone());
        }
        Value::Object(m)
    }

    /// Reads a message from a stock or wireperf peer, with 3.18's validation rules.
    pub fn from_json(v: &Value) -> Result<Self, ResultsError> {
        let num = |k: &'static str| v.get(k).and_then(as_f64).ok_or(ResultsError::Missing(k));
        let streams = v
            .get("streams")
            .and_then(Value::as_array)
            .ok_or(ResultsError::Missing("streams"))?
            .iter()
            .map(StreamResult::from_json)
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self {
            cpu_util_total: num("cpu_util_total")?,
            cpu_util_user: num("cpu_util_user")?,
            cpu_util_system: num("cpu_util_system")?,
            sender_has_retransmits: v
                .get("sender_has_retransmits")
                .and_then(as_i64)
                .ok_or(ResultsError::Missing("sender_has_retransmits"))?,
            congestion_used: v.get("congestion_used").and_then(Value::as_str).map(str::to_owned),
            server_output_json: v.get("server_output_json").filter(|j| j.is_object()).cloned(),
            server_output_text: v.get("server_output_text").and_then(Value::as_str).map(str::to_owned),
            streams,
            watch: v.get(WATCH_KEY).filter(|w| w.is_object()).cloned(),
        })
    }
}

impl StreamResult {
    fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("id".into(), json!(self.id));
        m.insert("bytes".into(), json!(self.bytes));
        m.insert("retransmits".into(), json!(self.retransmits));
        m.insert("jitter".into(), json!(self.jitter));
        m.insert("errors".into(), json!(self.errors));
        m.insert("omitted_errors".into(), json!(self.omitted_errors.unwrap_or(0)));
        m.insert("packets".into(), json!(self.packets));
        m.insert("omitted_packets".into(), json!(self.omitted_packets.unwrap_or(0)));
        m.insert("start_time".into(), json!(self.start_time));
        m.insert("end_time".into(), json!(self.end_time));
        let mut ext = Map::new();
        for (k, v) in [
            ("socket_drops", self.socket_drops),
            ("duplicates", self.duplicates),
            ("out_of_order", self.out_of_order),
            ("send_drops", self.send_drops),
            ("jitter_untimed", self.jitter_untimed),
        ] {
            if let Some(v) = v {
                ext.insert(k.into(), json!(v));
            }
        }
        if let Some(unit) = self.socket_drops_unit.and_then(|u| serde_json::to_value(u).ok()) {
            ext.insert("socket_drops_unit".into(), unit);
        }
        if !ext.is_empty() {
            m.insert("wireperf".into(), Value::Object(ext));
        }
        Value::Object(m)
    }

    fn from_json(v: &Value) -> Result<Self, ResultsError> {
        let int = |k: &'static str| v.get(k).and_then(as_i64).ok_or(ResultsError::Missing(k));
        let oe = v.get("omitted_errors").and_then(as_i64);
        let op = v.get("omitted_packets").and_then(as_i64);
        if oe.is_some() != op.is_some() {
            return Err(ResultsError::HalfOmitted);
        }
        let ext = v.get("wireperf");
        let ext_u = |k: &str| ext.and_then(|e| e.get(k)).and_then(as_u64);
        Ok(Self {
            id: int("id")? as i32,
            bytes: v.get("bytes").and_then(as_u64).ok_or(ResultsError::Missing("bytes"))?,
            retransmits: int("retransmits")?,
            jitter: v.get("jitter").and_then(as_f64).ok_or(ResultsError::Missing("jitter"))?,
            errors: int("errors")?,
            omitted_errors: oe,
            packets: int("packets")?,
            omitted_packets: op,
            start_time: v.get("start_time").and_then(as_f64).unwrap_or(0.0),
            end_time: v.get("end_time").and_then(as_f64).unwrap_or(0.0),
            socket_drops: ext_u("socket_drops"),
            socket_drops_unit: ext
                .and_then(|e| e.get("socket_drops_unit"))
                .and_then(|u| serde_json::from_value(u.clone()).ok()),
            duplicates: ext_u("duplicates"),
            out_of_order: ext_u("out_of_order"),
            send_drops: ext_u("send_drops"),
            jitter_untimed: ext_u("jitter_untimed"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_3_12_server_message_with_unsigned_minus_one() {
        let raw = r#"{"cpu_util_total":0.081136531335798262,"cpu_util_user":0,"cpu_util_system":0.081136531335798262,"sender_has_retransmits":18446744073709551615,"congestion_used":"bbr","streams":[{"id":1,"bytes":5111808,"retransmits":18446744073709551615,"jitter":0,"errors":0,"packets":0,"start_time":0,"end_time":2.000322}]}"#;
        let r = ExchangeResults::from_json(&serde_json::from_str(raw).unwrap()).unwrap();
        assert_eq!(r.sender_has_retransmits, -1);
        assert_eq!(r.streams[0].retransmits, -1);
        assert_eq!(r.streams[0].bytes, 5111808);
        assert_eq!(r.congestion_used.as_deref(), Some("bbr"));
    }

    #[test]
    fn round_trips_with_extensions() {
        let r = ExchangeResults {
            cpu_util_total: 12.5,
            sender_has_retransmits: 1,
            streams: vec![StreamResult {
                id: 3,
                bytes: 42,
                retransmits: 7,
                omitted_errors: Some(0),
                omitted_packets: Some(0),
                end_time: 1.5,
                socket_drops: Some(9),
                socket_drops_unit: Some(DropUnit::Packets),
                ..Default::default()
            }],
            ..Default::default()
        };
        let j = r.to_json();
        assert_eq!(j["streams"][0]["wireperf"]["socket_drops_unit"], "packets");
        assert_eq!(ExchangeResults::from_json(&j).unwrap(), r);
        // An unknown unit reads as absent, not as a wrong one.
        let mut j = j;
        j["streams"][0]["wireperf"]["socket_drops_unit"] = serde_json::json!("bytes");
        assert_eq!(ExchangeResults::from_json(&j).unwrap().streams[0].socket_drops_unit, None);
    }

    #[test]
    fn watch_extension_round_trips_and_non_objects_are_ignored() {
        let r = ExchangeResults { watch: Some(serde_json::json!({"samples": [1, 2]})), ..Default::default() };
        let j = r.to_json();
        assert_eq!(j[WATCH_KEY]["samples"][1], 2);
        assert_eq!(ExchangeResults::from_json(&j).unwrap(), r);
        let mut j = j;
        j[WATCH_KEY] = serde_json::json!("junk");
        assert_eq!(ExchangeResults::from_json(&j).unwrap().watch, None);
        assert!(ExchangeResults::default().to_json().get(WATCH_KEY).is_none());
    }

    #[test]
    fn missing_keys_are_errors() {
        let v = serde_json::json!({"cpu_util_total": 1, "streams": []});
        assert_eq!(ExchangeResults::from_json(&v), Err(ResultsError::Missing("cpu_util_user")));
        let v = serde_json::json!({"cpu_util_total":1,"cpu_util_user":1,"cpu_util_system":1,
            "sender_has_retransmits":1,"streams":[{"id":1,"bytes":1,"retransmits":0,"jitter":0,
            "errors":0,"packets":0,"omitted_errors":0}]});
        assert_eq!(ExchangeResults::from_json(&v), Err(ResultsError::HalfOmitted));
    }
}
