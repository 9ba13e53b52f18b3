//! A wireperf client against a stock iperf3 server (3.12, 3.18, 3.22).

use crate::support::harness::*;
use crate::support::peers::{Peer, per_peer};
use std::time::Duration;

/// iperf3's default TCP block (`-l`).
const BLK: u64 = 128 * 1024;

/// Runs `wireperf -c 127.0.0.1 -J <args>` against `iperf3 -s -1`; returns the client's JSON.
fn against_iperf3(peer: &Peer, args: &[&str], v6: bool) -> serde_json::Value {
    let server = start_server(&peer.bin, &["-1"]);
    let port = server.port.to_string();
    let host = if v6 { "::1" } else { "127.0.0.1" };
    let mut a = vec!["-c", host, "-p", &port, "-J"];
    a.extend_from_slice(args);
    let out = run_client(&wireperf(), &a);
    let (code, so, se) = server.finish(Duration::from_secs(10));
    assert_ok(&out);
    assert_eq!(code, Some(0), "iperf3 {} server failed:\n{so}\n{se}", peer.version);
    json_of(&out)
}

fn sent(v: &serde_json::Value) -> u64 {
    u(v, "/end/sum_sent/bytes")
}

fn received(v: &serde_json::Value) -> u64 {
    u(v, "/end/sum_received/bytes")
}

per_peer!(
    plain_upload,
    reverse_counts_every_byte_the_server_sent,
    bidir_both_directions_move_data,
    four_parallel_streams,
    bytes_limit_sends_exactly_n,
    bytes_limit_reverse_receives_what_was_sent,
    block_count_limit,
    omit_marks_intervals_and_excludes_them,
    half_second_intervals,
    get_server_output_from_a_text_server,
    ipv6_loopback,
    shared_workers_keep_every_streams_count,
);

fn plain_upload(peer: &Peer) {
    let v = against_iperf3(peer, &["-t", "1"], false);
    assert!(sent(&v) > 0);
    // The stock server stops counting at TEST_END, so it may report a little less.
    assert!(received(&v) <= sent(&v) && received(&v) > sent(&v) / 2, "{v}");
    assert_eq!(v["start"]["test_start"]["protocol"], "TCP");
    assert!(v["intervals"].as_array().is_some_and(|a| !a.is_empty()));
}

fn reverse_counts_every_byte_the_server_sent(peer: &Peer) {
    let v = against_iperf3(peer, &["-t", "1", "-R"], false);
    assert!(sent(&v) > 0);
    peer.assert_receiver_count(received(&v), sent(&v), 1, BLK, "-R");
}

fn bidir_both_directions_move_data(peer: &Peer) {
    let v = against_iperf3(peer, &["-t", "1", "--bidir"], false);
    assert!(sent(&v) > 0);
    let rev_sent = u(&v, "/end/sum_sent_bidir_reverse/bytes");
    let rev_recv = u(&v, "/end/sum_received_bidir_reverse/bytes");
    assert!(rev_sent > 0);
    peer.assert_receiver_count(rev_recv, rev_sent, 1, BLK, "--bidir, the direction wireperf receives");
    assert_eq!(v["end"]["streams"].as_array().map(Vec::len), Some(2));
}

fn four_parallel_streams(peer: &Peer) {
    let v = against_iperf3(peer, &["-t", "1", "-P", "4"], false);
    let streams = v["end"]["streams"].as_array().expect("streams");
    assert_eq!(streams.len(), 4);
    let total: u64 = streams.iter().map(|s| s["sender"]["bytes"].as_u64().unwrap_or(0)).sum();
    assert_eq!(total, sent(&v));
    assert!(streams.iter().all(|s| s["sender"]["bytes"].as_u64().unwrap_or(0) > 0));
}

/// More TCP streams than workers share epoll workers (two per direction here, forced so the
/// test does not depend on the CPU count): each stream's figures must stay its own. `-n`
/// spends whole blocks across all streams; with `-R` each stream wireperf received is what the
/// stock server sent on that stream; and every stream carries its share of a worker's CPU.
fn shared_workers_keep_every_streams_count(peer: &Peer) {
    for reverse in [false, true] {
        let server = start_server(&peer.bin, &["-1"]);
        let port = server.port.to_string();
        let mut args = vec!["-c", "127.0.0.1", "-p", &port, "-J", "-P", "6", "-n", "3M"];
        if reverse {
            args.push("-R");
        }
        let out = run_client_env(&wireperf(), &args, &[("WIREPERF_STREAM_WORKERS", "2")]);
        let (code, so, se) = server.finish(Duration::from_secs(10));
        assert_ok(&out);
        assert_eq!(code, Some(0), "iperf3 {} server failed:\n{so}\n{se}", peer.version);
        let v = json_of(&out);
        let what = if reverse { "-P 6 -n 3M -R" } else { "-P 6 -n 3M" };
        if reverse {
            // A stock sender may pass -n by what its threads had in flight.
            assert!(sent(&v) >= 3 * 1024 * 1024, "{what}: the stock sender spends -n");
        } else {
            assert_eq!(sent(&v), 3 * 1024 * 1024, "{what}: wireperf spends exactly -n");
        }
        let streams = v["end"]["streams"].as_array().expect("streams");
        assert_eq!(streams.len(), 6, "{what}");
        let mut sum = 0;
        for (i, s) in streams.iter().enumerate() {
            let (tx, rx) = (u(s, "/sender/bytes"), u(s, "/receiver/bytes"));
            if reverse {
                peer.assert_receiver_count(rx, tx, 1, BLK, &format!("{what}, stream {i}"));
            } else {
                assert_eq!(tx % BLK, 0, "{what}: stream {i} sent whole blocks ({tx})");
            }
            assert_eq!(
                s.pointer("/wireperf_cpu/shared_by").and_then(|n| n.as_u64()),
                Some(3),
                "{what}: stream {i}: {s}"
            );
            sum += tx;
        }
        assert_eq!(sum, sent(&v), "{what}: the streams add up to the sum");
    }
}

fn bytes_limit_sends_exactly_n(peer: &Peer) {
    let v = against_iperf3(peer, &["-n", "20M"], false);
    assert_eq!(sent(&v), 20 * 1024 * 1024);
    assert_eq!(v["start"]["test_start"]["bytes"], 20 * 1024 * 1024);
}

fn bytes_limit_reverse_receives_what_was_sent(peer: &Peer) {
    let v = against_iperf3(peer, &["-n", "10M", "-R"], false);
    assert!(received(&v) >= 10 * 1024 * 1024);
    peer.assert_receiver_count(received(&v), sent(&v), 1, BLK, "-n 10M -R");
}

fn block_count_limit(peer: &Peer) {
    let v = against_iperf3(peer, &["-k", "100", "-l", "64K"], false);
    assert_eq!(sent(&v), 100 * 64 * 1024);
}

fn omit_marks_intervals_and_excludes_them(peer: &Peer) {
    let v = against_iperf3(peer, &["-t", "1", "-O", "1"], false);
    let iv = v["intervals"].as_array().expect("intervals");
    assert!(iv.iter().any(|i| i["sum"]["omitted"] == true), "an omitted interval");
    assert!(iv.iter().any(|i| i["sum"]["omitted"] == false), "a counted interval");
    let counted: u64 =
        iv.iter().filter(|i| i["sum"]["omitted"] == false).map(|i| i["sum"]["bytes"].as_u64().unwrap_or(0)).sum();
    assert_eq!(counted, sent(&v), "the summary counts only the intervals after omit");
}

fn half_second_intervals(peer: &Peer) {
    let v = against_iperf3(peer, &["-t", "2", "-i", "0.5"], false);
    let n = v["intervals"].as_array().map_or(0, Vec::len);
    assert!((4..=5).contains(&n), "{n} intervals for -t 2 -i 0.5");
    // What the client controls, not how promptly a loaded machine wakes it: the intervals tile
    // the test from 0 with no gap or overlap, the k-th ends no earlier than k half-seconds
    // (a timer is never early; 1 ms for the printed rounding), and the last one ends at the
    // test's end, no earlier than 2 s. A client that ignored `-i 0.5` (1 s intervals) or
    // mis-scaled it fails the count above; one that cut intervals short fails here.
    let spans: Vec<(f64, f64)> = v["intervals"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|i| (i["sum"]["start"].as_f64().unwrap_or(f64::NAN), i["sum"]["end"].as_f64().unwrap_or(f64::NAN)))
        .collect();
    let mut previous_end = 0.0;
    for (k, &(start, end)) in spans.iter().enumerate() {
        assert!(
            (start - previous_end).abs() < 1e-3,
            "interval {k} starts at {start}, not at {previous_end}: {spans:?}"
        );
        if k + 1 < spans.len() {
            assert!(end >= 0.5 * (k + 1) as f64 - 1e-3, "interval {k} ended early at {end}: {spans:?}");
        }
        previous_end = end;
    }
    assert!(previous_end >= 2.0 - 1e-3, "the intervals end at {previous_end} s for -t 2: {spans:?}");
}

fn get_server_output_from_a_text_server(peer: &Peer) {
    let v = against_iperf3(peer, &["-t", "1", "--get-server-output"], false);
    let text = v["server_output_text"].as_str().expect("server_output_text");
    assert!(text.contains("receiver"), "{text}");
}

fn ipv6_loopback(peer: &Peer) {
    let v = against_iperf3(peer, &["-t", "1", "-6"], true);
    assert!(sent(&v) > 0);
    assert_eq!(v["start"]["connected"][0]["remote_host"], "::1");
}
