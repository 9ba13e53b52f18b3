//! A stock iperf3 client (3.12, 3.18, 3.22) against a wireperf server.

use crate::support::harness::*;
use crate::support::peers::{Peer, per_peer};
use std::time::Duration;

/// iperf3's default TCP block (`-l`).
const BLK: u64 = 128 * 1024;

/// Runs `iperf3 -c … -J <args>` against `wireperf -s -1`; returns the client's JSON and the
/// server's stdout.
fn iperf3_against_wireperf(peer: &Peer, args: &[&str], v6: bool, server_args: &[&str]) -> (serde_json::Value, String) {
    let mut sargs = vec!["-1"];
    sargs.extend_from_slice(server_args);
    let server = start_server(&wireperf(), &sargs);
    let port = server.port.to_string();
    let host = if v6 { "::1" } else { "127.0.0.1" };
    let mut a = vec!["-c", host, "-p", &port, "-J"];
    a.extend_from_slice(args);
    let out = run_client(&peer.bin, &a);
    let (code, so, se) = server.finish(Duration::from_secs(10));
    assert_ok(&out);
    assert_eq!(code, Some(0), "wireperf server failed (iperf3 {} client):\nstdout:\n{so}\nstderr:\n{se}", peer.version);
    (json_of(&out), so)
}

fn sent(v: &serde_json::Value) -> u64 {
    u(v, "/end/sum_sent/bytes")
}

fn received(v: &serde_json::Value) -> u64 {
    u(v, "/end/sum_received/bytes")
}

per_peer!(
    plain_upload_counts_every_byte_that_arrived,
    reverse,
    bidir,
    four_parallel_streams,
    bytes_limit_is_exact_at_the_receiver,
    bytes_limit_reverse,
    block_count_limit,
    omit,
    half_second_intervals,
    get_server_output_text,
    get_server_output_json,
    ipv6_loopback,
);

fn plain_upload_counts_every_byte_that_arrived(peer: &Peer) {
    let (v, server_out) = iperf3_against_wireperf(peer, &["-t", "1"], false, &[]);
    assert!(sent(&v) > 0);
    peer.assert_receiver_count(received(&v), sent(&v), 1, BLK, "-t 1");
    assert!(server_out.contains("Accepted connection from 127.0.0.1"), "{server_out}");
    assert!(server_out.contains("receiver"), "{server_out}");
}

fn reverse(peer: &Peer) {
    let (v, _) = iperf3_against_wireperf(peer, &["-t", "1", "-R"], false, &[]);
    // A stock receiver stops counting at TEST_END; only the sender side is exact.
    assert!(sent(&v) > 0 && received(&v) > 0 && received(&v) <= sent(&v), "{}", v["end"]);
}

fn bidir(peer: &Peer) {
    let (v, _) = iperf3_against_wireperf(peer, &["-t", "1", "--bidir"], false, &[]);
    peer.assert_receiver_count(received(&v), sent(&v), 1, BLK, "--bidir");
    assert!(u(&v, "/end/sum_sent_bidir_reverse/bytes") > 0);
}

fn four_parallel_streams(peer: &Peer) {
    let (v, _) = iperf3_against_wireperf(peer, &["-t", "1", "-P", "4"], false, &[]);
    assert_eq!(v["end"]["streams"].as_array().map(Vec::len), Some(4));
    peer.assert_receiver_count(received(&v), sent(&v), 4, BLK, "-P 4");
}

fn bytes_limit_is_exact_at_the_receiver(peer: &Peer) {
    // Stock receivers fall short here; wireperf drains until it has every byte.
    let (v, _) = iperf3_against_wireperf(peer, &["-n", "50M"], false, &[]);
    assert!(sent(&v) >= 50 * 1024 * 1024);
    peer.assert_receiver_count(received(&v), sent(&v), 1, BLK, "-n 50M");
}

fn bytes_limit_reverse(peer: &Peer) {
    let (v, _) = iperf3_against_wireperf(peer, &["-n", "10M", "-R"], false, &[]);
    // The wireperf server stops writing at the budget, as a stock server does: the stock client
    // reads exactly 10 MiB, and that is what the server reports as sent.
    assert_eq!(received(&v), 10 * 1024 * 1024, "received for -n 10M -R");
    assert_eq!(sent(&v), 10 * 1024 * 1024, "sent for -n 10M -R");
}

fn block_count_limit(peer: &Peer) {
    let (v, _) = iperf3_against_wireperf(peer, &["-k", "50"], false, &[]);
    // 3.12 stops at exactly 50 blocks; 3.16+'s sender threads may be one block past the
    // budget (each checks it before a write) before they are cancelled.
    let want = 50 * BLK;
    let slack = peer.sender_undercount_limit(1, BLK);
    assert!(sent(&v) >= want - slack && sent(&v) <= want + slack, "sent {} for -k 50", sent(&v));
    peer.assert_receiver_count(received(&v), sent(&v), 1, BLK, "-k 50");
}

fn omit(peer: &Peer) {
    let (v, _) = iperf3_against_wireperf(peer, &["-t", "1", "-O", "1"], false, &[]);
    assert!(sent(&v) > 0 && received(&v) > 0);
}

fn half_second_intervals(peer: &Peer) {
    let (v, server_out) = iperf3_against_wireperf(peer, &["-t", "2", "-i", "0.5"], false, &["-i", "0.5"]);
    assert!(sent(&v) > 0);
    assert!(server_out.matches("sec").count() >= 4, "{server_out}");
}

fn get_server_output_text(peer: &Peer) {
    let (v, _) = iperf3_against_wireperf(peer, &["-t", "1", "--get-server-output"], false, &[]);
    let text = v["server_output_text"].as_str().expect("server_output_text");
    assert!(text.contains("receiver"), "{text}");
}

fn get_server_output_json(peer: &Peer) {
    let (v, _) = iperf3_against_wireperf(peer, &["-t", "1", "--get-server-output"], false, &["-J"]);
    let j = &v["server_output_json"];
    assert!(j["end"]["sum_received"]["bytes"].as_u64().is_some_and(|b| b > 0), "{j}");
}

fn ipv6_loopback(peer: &Peer) {
    let (v, _) = iperf3_against_wireperf(peer, &["-t", "1", "-6"], true, &[]);
    assert!(sent(&v) > 0);
    peer.assert_receiver_count(received(&v), sent(&v), 1, BLK, "-6");
}
