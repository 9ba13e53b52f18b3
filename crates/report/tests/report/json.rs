//! `-J` documents captured from iperf3 3.12, re-printed byte for byte.

use crate::support::fixture;
use serde_json::Value;
use wireperf_protocol::schema::TestReport;
use wireperf_report::to_cjson_string;

/// 3.12 repeats `sock_bufsize`/`sndbuf_actual`/`rcvbuf_actual` once per stream (a bug fixed
/// in 3.14); a JSON map keeps one, so the expected text drops the repeats.
fn without_repeated_buffer_keys(text: &str) -> String {
    let mut seen = std::collections::HashSet::new();
    text.lines()
        .filter(|l| {
            let key = l.trim_start();
            let repeated_kind =
                ["\"sock_bufsize\"", "\"sndbuf_actual\"", "\"rcvbuf_actual\""].iter().any(|k| key.starts_with(k));
            !repeated_kind || seen.insert(key.to_string())
        })
        .map(|l| format!("{l}\n"))
        .collect()
}

#[test]
fn udp_document_from_value() {
    let text = fixture("json_udp.json");
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(to_cjson_string(&v), text);
}

#[test]
fn udp_document_from_the_typed_schema() {
    let text = fixture("json_udp.json");
    let report: TestReport = serde_json::from_str(&text).unwrap();
    assert_eq!(to_cjson_string(&report), text);
}

#[test]
fn tcp_parallel_document_from_value() {
    let text = without_repeated_buffer_keys(&fixture("json_tcp_p2.json"));
    assert!(text.matches("sock_bufsize").count() == 1);
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(to_cjson_string(&v), text);
}

#[test]
fn tcp_parallel_document_from_the_typed_schema() {
    let text = without_repeated_buffer_keys(&fixture("json_tcp_p2.json"));
    let report: TestReport = serde_json::from_str(&text).unwrap();
    assert_eq!(to_cjson_string(&report), text);
}

#[test]
fn client_failure_document_from_the_typed_schema() {
    let report = TestReport {
        start: wireperf_protocol::schema::Start {
            version: "iperf 3.12".into(),
            system_info: "Linux vm 6.18.44-fc-v509 #1 SMP PREEMPT_DYNAMIC @0 x86_64".into(),
            ..Default::default()
        },
        error: Some("unable to connect to server: Connection refused".into()),
        ..Default::default()
    };
    let expected = "{\n\t\"start\":\t{\n\t\t\"connected\":\t[],\n\t\t\"version\":\t\"iperf 3.12\",\n\t\t\"system_info\":\t\"Linux vm 6.18.44-fc-v509 #1 SMP PREEMPT_DYNAMIC @0 x86_64\"\n\t},\n\t\"intervals\":\t[],\n\t\"end\":\t{\n\t},\n\t\"error\":\t\"unable to connect to server: Connection refused\"\n}\n";
    assert_eq!(to_cjson_string(&report), expected);
}
