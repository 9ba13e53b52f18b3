//! UDP (`-u`) against stock iperf3 3.12, 3.18 and 3.22 in both directions (`--gsro` too), and
//! the `-J` key trees of UDP documents compared with 3.12's own (3.18/3.22: `keytree`).
//!
//! Each test moves 1 s of traffic. Loss is asserted only where wireperf receives at a rate this
//! VM's receivers keep up with; a stock iperf3 receiver drops datagrams above ~100 Mbit/s here
//! (its own socket buffer overflows; iperf3 against iperf3 shows the same), so for it only the
//! datagram counts are checked.

use crate::support::harness::*;
use crate::support::peers::{Peer, per_peer};
use serde_json::Value;
use std::time::Duration;

/// wireperf client against a stock server; returns the client's JSON.
fn wireperf_to_iperf3(peer: &Peer, args: &[&str]) -> Value {
    let server = start_server(&peer.bin, &["-1"]);
    let port = server.port.to_string();
    let mut a = vec!["-c", "127.0.0.1", "-p", &port, "-u", "-t", "1", "-J"];
    a.extend_from_slice(args);
    let out = run_client(&wireperf(), &a);
    let (_, so, se) = server.finish(Duration::from_secs(10));
    assert_ok(&out);
    assert!(!so.contains("error"), "iperf3 {} server: {so}\n{se}", peer.version);
    json_of(&out)
}

/// A stock client against a wireperf server; returns (client JSON, server JSON).
fn iperf3_to_wireperf(peer: &Peer, args: &[&str]) -> (Value, Value) {
    let server = start_server(&wireperf(), &["-1", "-J"]);
    let port = server.port.to_string();
    let mut a = vec!["-c", "127.0.0.1", "-p", &port, "-u", "-t", "1", "-J"];
    a.extend_from_slice(args);
    let out = run_client(&peer.bin, &a);
    let (_, so, se) = server.finish(Duration::from_secs(10));
    assert_ok(&out);
    let sj = serde_json::from_str(&so).unwrap_or_else(|e| panic!("wireperf server JSON: {e}\n{so}\n{se}"));
    (json_of(&out), sj)
}

fn num(v: &Value, ptr: &str) -> f64 {
    v.pointer(ptr).and_then(Value::as_f64).unwrap_or_else(|| panic!("no number at {ptr} in {v}"))
}

/// Datagrams the streams of the document's first direction sent, as its `sum_sent` says.
fn sent(v: &Value) -> u64 {
    u(v, "/end/sum_sent/packets")
}

/// Per-direction checks on a client document: something moved, and the receiver's count of
/// datagrams (iperf3's receiver counts up to the highest sequence number it saw, so a loss
/// inside the test does not shorten it) is consistent with the sender's: short by at most
/// 5 + 1% of them.
fn check(v: &Value, max_loss_pct: f64) {
    check_tail(v, max_loss_pct, 0.0);
}

/// [`check`], where a stock receiver is known to miss up to `tail_pct` of the datagrams at
/// the test's end (it stops counting at TEST_END with datagrams still unread).
fn check_tail(v: &Value, max_loss_pct: f64, tail_pct: f64) {
    for (sent_key, recv_key) in [("sum_sent", "sum_received"), ("sum_sent_bidir_reverse", "sum_received_bidir_reverse")]
    {
        let Some(s) = v.pointer(&format!("/end/{sent_key}")) else { continue };
        let r = &v["end"][recv_key];
        let (tx, rx) = (u(s, "/packets"), u(r, "/packets"));
        assert!(tx > 20, "{sent_key}: only {tx} datagrams in {v}");
        let slack = (5 + tx / 100).max((tx as f64 * tail_pct / 100.0) as u64);
        assert!(rx <= tx && rx + slack >= tx, "{recv_key} counted {rx} of {tx}");
        let pct = num(r, "/lost_percent");
        assert!(pct <= max_loss_pct, "{recv_key}: {pct}% lost");
        assert!(u(s, "/bytes") > 0 && u(r, "/bytes") > 0);
    }
}

fn udp_to_iperf3(peer: &Peer) {
    let v = wireperf_to_iperf3(peer, &["-b", "10M"]);
    check(&v, 0.0);
    assert_eq!(v["start"]["test_start"]["protocol"], "UDP");
    assert_eq!(u(&v, "/start/target_bitrate"), 10_000_000);
}

fn udp_reverse_from_iperf3(peer: &Peer) {
    let v = wireperf_to_iperf3(peer, &["-b", "10M", "-R"]);
    check(&v, 0.0);
    assert_eq!(v["end"]["streams"][0]["wireperf_udp_receiver"]["wireperf_receiver_socket_drops"], 0);
}

fn udp_bidir_with_iperf3(peer: &Peer) {
    let v = wireperf_to_iperf3(peer, &["-b", "10M", "--bidir"]);
    check(&v, 0.0);
    assert!(v["end"].get("sum_bidir_reverse").is_some());
}

fn udp_two_streams_to_iperf3(peer: &Peer) {
    let v = wireperf_to_iperf3(peer, &["-b", "10M", "-P", "2"]);
    check(&v, 0.0);
    assert_eq!(v["end"]["streams"].as_array().map(Vec::len), Some(2));
}

fn udp_200m_to_iperf3(peer: &Peer) {
    let v = wireperf_to_iperf3(peer, &["-b", "200M", "-l", "1448"]);
    // iperf3's receiver, not the path, is what drops here; see the module doc.
    check(&v, 10.0);
    let rate = num(&v, "/end/sum_sent/bits_per_second");
    assert!((rate - 200e6).abs() < 0.02 * 200e6, "sent at {rate} bit/s");
}

fn udp_64bit_counters_both_ways(peer: &Peer) {
    let v = wireperf_to_iperf3(peer, &["-b", "10M", "--udp-counters-64bit"]);
    check(&v, 0.0);
    let v = wireperf_to_iperf3(peer, &["-b", "10M", "--udp-counters-64bit", "-R"]);
    check(&v, 0.0);
    let (c, s) = iperf3_to_wireperf(peer, &["-b", "10M", "--udp-counters-64bit"]);
    check(&c, 0.0);
    assert_eq!(u(&s, "/end/sum_received/lost_packets"), 0);
    assert_eq!(u(&s, "/end/sum_received/packets"), sent(&c));
}

fn iperf3_udp_to_wireperf_server(peer: &Peer) {
    let (c, s) = iperf3_to_wireperf(peer, &["-b", "10M"]);
    check(&c, 0.0);
    // The wireperf server knows the sender's count from the results exchange.
    assert_eq!(u(&s, "/end/sum_received/packets"), sent(&c));
    assert_eq!(u(&s, "/end/sum/wireperf_receiver_socket_drops"), 0);
}

fn iperf3_udp_reverse_bidir_parallel_to_wireperf_server(peer: &Peer) {
    for args in [&["-b", "10M", "-R"][..], &["-b", "10M", "--bidir"], &["-b", "10M", "-P", "2"]] {
        let (c, s) = iperf3_to_wireperf(peer, args);
        check(&c, 0.0);
        assert_eq!(s["start"]["test_start"]["protocol"], "UDP", "{args:?}");
    }
}

fn iperf3_udp_200m_to_wireperf_server(peer: &Peer) {
    let (c, s) = iperf3_to_wireperf(peer, &["-b", "200M", "-l", "1448"]);
    check(&c, 10.0);
    // Whatever the wireperf server lost, it can say where: path + socket = total.
    let lost = u(&s, "/end/sum/lost_packets");
    let drops = u(&s, "/end/sum/wireperf_receiver_socket_drops");
    assert!(drops <= lost, "{drops} socket drops > {lost} lost");
}

/// `--gsro` (3.21+): a wireperf client asks for GSO/GRO at both ends; a peer that predates the
/// keys ignores them. A 3.22 client's `--gsro` to a wireperf server, both directions: the
/// server reads the keys (its document says `gso`/`gro` 1) and counts every datagram.
fn udp_gsro_both_ways(peer: &Peer) {
    // A 3.22 receiver with GRO on misses datagrams at the end of the test against its own
    // sender too (measured 3.22 -> 3.22 --gsro -b 50M: 4 of 193 lost; beside a full suite a
    // 3.22 client receiving from wireperf missed 36 of 199), so only the counts'
    // consistency is asserted where it receives.
    let stock_gro_loss = if peer.version == "3.22" { 25.0 } else { 0.0 };
    for dir in [&[][..], &["-R"]] {
        let mut a = vec!["-b", "50M", "--gsro"];
        a.extend_from_slice(dir);
        let v = wireperf_to_iperf3(peer, &a);
        let stock_gro = if dir.is_empty() { stock_gro_loss } else { 0.0 };
        check_tail(&v, stock_gro, stock_gro);
        assert_eq!(v["start"]["test_start"]["gso"], 1, "{dir:?}");
        assert_eq!(v["start"]["test_start"]["gro"], 1, "{dir:?}");
    }
    if peer.version != "3.22" {
        return;
    }
    for dir in [&[][..], &["-R"]] {
        let mut a = vec!["-b", "50M", "--gsro"];
        a.extend_from_slice(dir);
        let (c, s) = iperf3_to_wireperf(peer, &a);
        let stock_gro = if dir.is_empty() { 0.0 } else { stock_gro_loss };
        check_tail(&c, stock_gro, stock_gro);
        assert_eq!(s["start"]["test_start"]["gso"], 1, "{dir:?}: {s}");
        assert_eq!(s["start"]["test_start"]["gro"], 1, "{dir:?}");
        assert_eq!(c["start"]["test_start"]["gso"], 1, "{dir:?}");
        if dir.is_empty() {
            assert_eq!(u(&s, "/end/sum_received/packets"), sent(&c), "the wireperf server counts every datagram");
        }
    }
}

per_peer!(
    udp_to_iperf3,
    udp_reverse_from_iperf3,
    udp_bidir_with_iperf3,
    udp_two_streams_to_iperf3,
    udp_200m_to_iperf3,
    udp_64bit_counters_both_ways,
    iperf3_udp_to_wireperf_server,
    iperf3_udp_reverse_bidir_parallel_to_wireperf_server,
    iperf3_udp_200m_to_wireperf_server,
    udp_gsro_both_ways,
);

// ---- key trees -------------------------------------------------------------------------

fn iperf3_pair(args: &[&str]) -> (Value, Value) {
    let server = start_server(&iperf3(), &["-1", "-J"]);
    let port = server.port.to_string();
    let mut a = vec!["-c", "127.0.0.1", "-p", &port, "-J", "-u", "-t", "1", "-b", "5M"];
    a.extend_from_slice(args);
    let out = run_client(&iperf3(), &a);
    let (_, so, _) = server.finish(Duration::from_secs(10));
    assert_ok(&out);
    (json_of(&out), serde_json::from_str(&so).expect("iperf3 server JSON"))
}

fn compare(args: &[&str]) {
    let (ref_client, ref_server) = iperf3_pair(args);
    let mut a = vec!["-b", "5M"];
    a.extend_from_slice(args);
    let stock = Peer::new("3.12");
    assert_superset(&ref_client, &wireperf_to_iperf3(&stock, &a), &[".server_output"]);
    let (_, ours) = iperf3_to_wireperf(&stock, &a);
    assert_superset(&ref_server, &ours, &[]);
}

#[test]
fn udp_key_tree_plain() {
    compare(&[]);
}

#[test]
fn udp_key_tree_reverse() {
    compare(&["-R"]);
}

#[test]
fn udp_key_tree_bidir() {
    compare(&["--bidir"]);
}

#[test]
fn udp_key_tree_two_streams() {
    compare(&["-P", "2"]);
}
