//! `-Z` (sendfile), `--zerocopy=z` (MSG_ZEROCOPY) and `--skip-rx-copy` (MSG_TRUNC): every mode
//! moves and counts exactly the bytes of `-n`, against wireperf's and stock iperf3's server
//! (3.12, 3.18, 3.22), stock clients' `-Z` (and 3.22's `--skip-rx-copy`) into a wireperf server
//! count every byte, and a refused zero-copy path falls back to `write()` and says so in
//! `wireperf_io`.

use crate::support::harness::{
    TEST_DB, assert_ok, io_of, json_of, one_shot_json, run_client, start_server, u, wireperf,
};
use crate::support::peers::{Peer, per_peer};
use serde_json::Value;
use std::process::{Command, Output};

const N: u64 = 50 * 1024 * 1024;

fn s(v: &Value, key: &str) -> String {
    v[key].as_str().unwrap_or_else(|| panic!("no string {key} in {v}")).to_string()
}

/// Sender and receiver totals of a `-n` run against a wireperf server, which drains every byte.
fn assert_exact(doc: &Value) {
    assert_eq!(u(doc, "/end/sum_sent/bytes"), N, "{}", doc["end"]);
    assert_eq!(u(doc, "/end/sum_received/bytes"), N, "{}", doc["end"]);
}

#[test]
fn sendfile_against_wireperf_server_counts_every_byte() {
    let doc = one_shot_json(&wireperf(), &wireperf(), &["-n", "50M", "-Z"]);
    assert_exact(&doc);
    let io = io_of(&doc);
    assert_eq!((s(io, "requested"), s(io, "used")), ("sendfile".into(), "sendfile".into()), "{io}");
    assert!(io.get("fallback").is_none(), "{io}");
}

fn sendfile_against_stock_iperf3_server_sends_exactly_n(peer: &Peer) {
    let srv = start_server(&peer.bin, &["-1"]);
    let port = srv.port.to_string();
    let out = run_client(&wireperf(), &["-c", "127.0.0.1", "-p", &port, "-n", "50M", "-Z", "-J"]);
    assert_ok(&out);
    let doc = json_of(&out);
    // A stock server stops counting at TEST_END, before the last bytes in flight are read (it
    // does the same with a stock iperf3 client), so only the sender side is exact.
    assert_eq!(u(&doc, "/end/sum_sent/bytes"), N);
    let got = u(&doc, "/end/sum_received/bytes");
    assert!(got > 0 && got <= N, "received {got}");
    assert_eq!(s(io_of(&doc), "used"), "sendfile");
}

#[test]
fn msg_zerocopy_counts_every_byte_and_reports_completions() {
    let srv = start_server(&wireperf(), &["-1"]);
    let port = srv.port.to_string();
    // 200 MiB: enough 1 MiB sends for the sender to judge the completions (64 of them).
    let out = run_client(&wireperf(), &["-c", "127.0.0.1", "-p", &port, "-n", "200M", "--zerocopy=z", "-J"]);
    assert_ok(&out);
    let doc = json_of(&out);
    assert_eq!(u(&doc, "/end/sum_sent/bytes"), 4 * N, "{}", doc["end"]);
    assert_eq!(u(&doc, "/end/sum_received/bytes"), 4 * N, "{}", doc["end"]);
    let io = io_of(&doc);
    assert_eq!(s(io, "requested"), "msg_zerocopy");
    let done = io["zerocopy_completed"].as_u64().unwrap();
    let copied = io["zerocopy_copied"].as_u64().unwrap();
    assert!(done > 0 && copied <= done, "{io}");
    // Loopback delivery always copies, so after the first completions the sender gives up on
    // MSG_ZEROCOPY and says why.
    assert_eq!(s(io, "used"), "write", "{io}");
    assert!(s(io, "fallback").contains("copied"), "{io}");
}

fn run_client_env(args: &[&str], key: &str, val: &str) -> Output {
    Command::new(wireperf()).env("WIREPERF_DB", TEST_DB).env(key, val).args(args).output().expect("spawn client")
}

#[test]
fn refused_sendfile_falls_back_to_write_and_says_so() {
    let srv = start_server(&wireperf(), &["-1"]);
    let port = srv.port.to_string();
    let out = run_client_env(
        &["-c", "127.0.0.1", "-p", &port, "-n", "50M", "-Z", "-J"],
        "WIREPERF_TEST_REFUSE_ZEROCOPY",
        "1",
    );
    assert_ok(&out);
    let doc = json_of(&out);
    assert_exact(&doc);
    let io = io_of(&doc);
    assert_eq!((s(io, "requested"), s(io, "used")), ("sendfile".into(), "write".into()), "{io}");
    assert!(s(io, "fallback").contains("sendfile refused"), "{io}");
}

fn skip_rx_copy_on_the_client_counts_what_the_server_sent(peer: &Peer) {
    for server in [wireperf(), peer.bin.clone()] {
        let stock = server == peer.bin;
        let srv = start_server(&server, &["-1"]);
        let port = srv.port.to_string();
        let out = run_client(&wireperf(), &["-c", "127.0.0.1", "-p", &port, "-n", "20M", "-R", "--skip-rx-copy", "-J"]);
        assert_ok(&out);
        let doc = json_of(&out);
        let sent = u(&doc, "/end/sum_sent/bytes");
        // A 3.16+ sender's threads may report up to a block per stream less than they wrote
        // (3.22 once reported 20840448 of the 20971520 the client received).
        let slack = if stock { peer.sender_undercount_limit(1, 128 * 1024) } else { 0 };
        assert!(sent + slack >= 20 * 1024 * 1024, "{}", doc["end"]);
        let received = u(&doc, "/end/sum_received/bytes");
        if stock {
            peer.assert_receiver_count(received, sent, 1, 128 * 1024, "--skip-rx-copy -R");
        } else {
            assert_eq!(received, sent, "{}", doc["end"]);
        }
        let io = io_of(&doc);
        assert_eq!((s(io, "direction"), s(io, "used")), ("receive".into(), "msg_trunc".into()), "{io}");
    }
}

#[test]
fn server_honours_skip_rx_copy_and_zerocopy_from_the_parameters() {
    // Forward: the server receives with MSG_TRUNC.
    let srv = start_server(&wireperf(), &["-1", "-J"]);
    let port = srv.port.to_string();
    let out = run_client(&wireperf(), &["-c", "127.0.0.1", "-p", &port, "-n", "50M", "--skip-rx-copy", "-J"]);
    assert_ok(&out);
    assert_exact(&json_of(&out));
    let (_, stdout, _) = srv.finish(std::time::Duration::from_secs(10));
    let sdoc: Value = serde_json::from_str(&stdout).expect("server JSON");
    assert_eq!(s(io_of(&sdoc), "used"), "msg_trunc");
    assert_eq!(u(&sdoc, "/end/sum_received/bytes"), N);

    // Reverse with -Z: the server sends with sendfile, and reports its stream's CPU.
    let srv = start_server(&wireperf(), &["-1", "-J"]);
    let port = srv.port.to_string();
    let out = run_client(&wireperf(), &["-c", "127.0.0.1", "-p", &port, "-n", "50M", "-R", "-Z", "-J"]);
    assert_ok(&out);
    let doc = json_of(&out);
    assert_eq!(u(&doc, "/end/sum_received/bytes"), u(&doc, "/end/sum_sent/bytes"));
    let (_, stdout, _) = srv.finish(std::time::Duration::from_secs(10));
    let sdoc: Value = serde_json::from_str(&stdout).expect("server JSON");
    assert_eq!(s(io_of(&sdoc), "used"), "sendfile");
    assert!(sdoc.pointer("/end/streams/0/wireperf_cpu/bytes_per_cpu_second").is_some());
}

/// A stock client's `-Z` (sendfile) into a wireperf server, and 3.22's `--skip-rx-copy -R`
/// (the stock client receives with MSG_TRUNC): the receiver counts what the sender sent.
fn stock_client_zerocopy_into_wireperf_server(peer: &Peer) {
    let mut runs = vec![vec!["-n", "50M", "-Z"]];
    if peer.version == "3.22" {
        runs.push(vec!["-n", "50M", "-R", "--skip-rx-copy"]);
    }
    for args in runs {
        let srv = start_server(&wireperf(), &["-1", "-J"]);
        let port = srv.port.to_string();
        let mut a = vec!["-c", "127.0.0.1", "-p", &port, "-J"];
        a.extend_from_slice(&args);
        let out = run_client(&peer.bin, &a);
        assert_ok(&out);
        let doc = json_of(&out);
        let (_, stdout, _) = srv.finish(std::time::Duration::from_secs(10));
        let sdoc: Value = serde_json::from_str(&stdout).expect("server JSON");
        let sent = u(&doc, "/end/sum_sent/bytes");
        assert!(sent >= N, "{args:?}: {}", doc["end"]);
        if args.contains(&"-R") {
            // The stock receiver stops counting at TEST_END (see above); it never counts more.
            let got = u(&doc, "/end/sum_received/bytes");
            assert!(got > 0 && got <= u(&sdoc, "/end/sum_sent/bytes"), "{args:?}: {}", doc["end"]);
        } else {
            peer.assert_receiver_count(u(&sdoc, "/end/sum_received/bytes"), sent, 1, 128 * 1024, "-Z");
        }
    }
}

per_peer!(
    sendfile_against_stock_iperf3_server_sends_exactly_n,
    skip_rx_copy_on_the_client_counts_what_the_server_sent,
    stock_client_zerocopy_into_wireperf_server,
);

#[test]
fn unknown_zerocopy_method_is_refused() {
    let out = run_client(&wireperf(), &["-c", "127.0.0.1", "-p", "9", "--zerocopy=q"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("zerocopy method"), "{:?}", out);
}
