//! `import_iperf3_json` on documents the real iperf3 3.12 wrote: the stored numbers are the
//! file's numbers, and the file's text is kept byte for byte.

use serde_json::Value;
use wireperf_store::{Direction, RunKind, Side, Store, StoreError};

use crate::support::fixtures::{f, iperf3_pair, n, temp_db};

/// Imports `text` and checks every stored figure against the document.
fn check_import(store: &mut Store, text: &str, name: &str, side: Side, udp: bool) {
    let doc: Value = serde_json::from_str(text).unwrap();
    let id = store.import_iperf3_json(text, name).unwrap();
    let d = store.get(id).unwrap();
    assert_eq!(d.summary.kind, RunKind::Import);
    assert_eq!(d.source.as_deref(), Some(name));
    assert_eq!(d.summary.time_unix, i64::try_from(n(&doc, "/start/timestamp/timesecs")).unwrap());
    assert_eq!(d.parameters, doc["start"]["test_start"]);
    let hp = if side == Side::Client { "/start/connecting_to" } else { "/start/accepted_connection" };
    assert_eq!(d.summary.remote_host.as_deref(), doc.pointer(&format!("{hp}/host")).and_then(Value::as_str));
    assert_eq!(u64::from(d.summary.remote_port.unwrap()), n(&doc, &format!("{hp}/port")));

    assert_eq!(d.phase_details.len(), 1);
    let p = &d.phase_details[0];
    assert_eq!(p.side, side);
    assert_eq!(p.name, if udp { "udp" } else { "upload" });
    assert_eq!(p.document, text.trim(), "the document must be stored exactly as read");
    let g = &p.figures;
    assert_eq!(g.protocol.as_deref(), Some(if udp { "UDP" } else { "TCP" }));
    assert_eq!(g.received_bps, Some(f(&doc, "/end/sum_received/bits_per_second")));
    assert_eq!(g.received_bytes, Some(n(&doc, "/end/sum_received/bytes")));
    assert_eq!(g.sent_bps, Some(f(&doc, "/end/sum_sent/bits_per_second")));
    assert_eq!(g.sent_bytes, Some(n(&doc, "/end/sum_sent/bytes")));
    assert_eq!(p.upload_bps, g.received_bps);
    assert_eq!(p.download_bps, None);
    assert_eq!(g.retransmits, doc.pointer("/end/sum_sent/retransmits").and_then(Value::as_u64));
    assert_eq!(g.cpu_host, Some(f(&doc, "/end/cpu_utilization_percent/host_total")));
    assert_eq!(g.cpu_remote, Some(f(&doc, "/end/cpu_utilization_percent/remote_total")));
    if udp {
        assert_eq!(p.packets, doc.pointer("/end/sum_received/packets").and_then(Value::as_i64));
        assert_eq!(p.lost_packets, doc.pointer("/end/sum_received/lost_packets").and_then(Value::as_i64));
        assert_eq!(p.jitter_ms, Some(f(&doc, "/end/sum_received/jitter_ms")));
    }
    // The run's figures are the single phase's.
    assert_eq!(&d.summary.figures, g);

    let intervals = doc["intervals"].as_array().unwrap();
    let sums: Vec<_> = p.intervals.iter().filter(|r| r.stream.is_none()).collect();
    assert_eq!(sums.len(), intervals.len());
    for (row, iv) in sums.iter().zip(intervals) {
        assert_eq!(row.bytes, n(iv, "/sum/bytes"));
        assert_eq!(row.bits_per_second, f(iv, "/sum/bits_per_second"));
        assert_eq!(row.end, f(iv, "/sum/end"));
        assert_eq!(row.direction, Some(Direction::Upload));
        assert_eq!(row.retransmits, iv.pointer("/sum/retransmits").and_then(Value::as_u64));
    }
    let per_stream = p.intervals.iter().filter(|r| r.stream.is_some()).count();
    let expected: usize = intervals.iter().map(|iv| iv["streams"].as_array().unwrap().len()).sum();
    assert_eq!(per_stream, expected);
    if side == Side::Client && !udp {
        let cwnd = n(&intervals[0], "/streams/0/snd_cwnd");
        assert_eq!(p.intervals.iter().find(|r| r.stream.is_some()).unwrap().cwnd, Some(cwnd));
    }
    assert_eq!(p.streams.len(), doc["end"]["streams"].as_array().unwrap().len());

    // Export gives the document back with every number exactly as iperf3 printed it.
    let export = store.export(&[id]).unwrap();
    assert_eq!(export["runs"][0]["phase_details"][0]["report"], doc);
    assert_eq!(export["runs"][0]["id"], serde_json::json!(id.0));
}

#[test]
fn imports_real_iperf3_tcp_client_and_server_documents() {
    let pair = iperf3_pair(&[]);
    let (_dir, path) = temp_db();
    let mut store = Store::open(&path).unwrap();
    check_import(&mut store, &pair.client, "client.json", Side::Client, false);
    check_import(&mut store, &pair.server, "server.json", Side::Server, false);
    assert_eq!(store.list(&Default::default()).unwrap().len(), 2);
}

#[test]
fn imports_real_iperf3_udp_client_and_server_documents() {
    let pair = iperf3_pair(&["-u"]);
    let (_dir, path) = temp_db();
    let mut store = Store::open(&path).unwrap();
    check_import(&mut store, &pair.client, "udp-client.json", Side::Client, true);
    check_import(&mut store, &pair.server, "udp-server.json", Side::Server, true);
}

#[test]
fn imports_real_iperf3_bidir_with_both_directions() {
    let pair = iperf3_pair(&["--bidir"]);
    let doc: Value = serde_json::from_str(&pair.client).unwrap();
    let (_dir, path) = temp_db();
    let mut store = Store::open(&path).unwrap();
    let id = store.import_iperf3_json(&pair.client, "bidir.json").unwrap();
    let p = store.get(id).unwrap().phase_details.remove(0);
    assert_eq!(p.name, "bidir");
    assert_eq!(p.upload_bps, Some(f(&doc, "/end/sum_received/bits_per_second")));
    assert_eq!(p.download_bps, Some(f(&doc, "/end/sum_received_bidir_reverse/bits_per_second")));
    let total = n(&doc, "/end/sum_received/bytes") + n(&doc, "/end/sum_received_bidir_reverse/bytes");
    assert_eq!(p.figures.received_bytes, Some(total));
    let down: Vec<_> = p.sum_series(Direction::Download).collect();
    let intervals = doc["intervals"].as_array().unwrap();
    assert_eq!(down.len(), intervals.len());
    assert_eq!(down[0].bytes, n(&intervals[0], "/sum_bidir_reverse/bytes"));

    // The server's view of the same test: its first direction is the download.
    let id = store.import_iperf3_json(&pair.server, "bidir-server.json").unwrap();
    let s = store.get(id).unwrap().phase_details.remove(0);
    assert_eq!(s.side, Side::Server);
    let sdoc: Value = serde_json::from_str(&pair.server).unwrap();
    assert_eq!(s.upload_bps, Some(f(&sdoc, "/end/sum_received_bidir_reverse/bits_per_second")));
    assert_eq!(s.download_bps, Some(f(&sdoc, "/end/sum_received/bits_per_second")));
}

#[test]
fn import_refuses_what_is_not_one_iperf3_document_and_stores_nothing() {
    let (_dir, path) = temp_db();
    let mut store = Store::open(&path).unwrap();
    for (text, needle) in [
        ("", "empty"),
        ("Connecting to host 127.0.0.1, port 5201", "not JSON"),
        ("[1, 2]", "JSON object"),
        ("{\"a\": 1}", "\"start\""),
        ("{\"start\": {}, \"end\": {}}\n{\"start\": {}, \"end\": {}}", "more than one"),
    ] {
        match store.import_iperf3_json(text, "bad.json") {
            Err(e @ StoreError::Import { .. }) => {
                let msg = e.to_string();
                assert!(msg.contains("bad.json") && msg.contains(needle), "{msg}");
            }
            other => panic!("{text:?}: expected an import error, got {other:?}"),
        }
    }
    assert!(store.list(&Default::default()).unwrap().is_empty());
}
