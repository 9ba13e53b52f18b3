//! The newer stock iperf3 peers (Debian trixie's 3.18 and sid's 3.22, unpacked by
//! `scripts/stock-iperf3`) run here and talk to wireperf both ways. The full interop matrix
//! against them lives with the modern-iperf3 work; this proves the peers themselves are real
//! and the plumbing (own loader and libraries) works.

use crate::support::harness::{one_shot_json, stock_iperf3, wireperf};
use crate::support::peers::Peer;
use std::process::Command;

/// Each peer reports the version its directory is named for.
#[test]
fn stock_peers_are_the_versions_they_claim() {
    for v in ["3.18", "3.22"] {
        let out = Command::new(stock_iperf3(v)).arg("--version").output().expect("run stock iperf3");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "iperf3 {v} --version failed: {text}");
        assert!(text.starts_with(&format!("iperf {v}")), "expected iperf {v}, got: {text}");
    }
}

/// A one-second TCP test in each direction between wireperf and each stock peer: the receiver
/// counted bytes, and the counts agree as far as each sender's counting allows.
#[test]
fn wireperf_and_stock_peers_run_tcp_both_ways() {
    for v in ["3.18", "3.22"] {
        let peer = Peer::new(v);
        for (server, client, who) in
            [(&peer.bin, &wireperf(), "wireperf client"), (&wireperf(), &peer.bin, "stock client")]
        {
            let doc = one_shot_json(server, client, &["-t", "1"]);
            let received = doc.pointer("/end/sum_received/bytes").and_then(|b| b.as_u64()).unwrap_or(0);
            let sent = doc.pointer("/end/sum_sent/bytes").and_then(|b| b.as_u64()).unwrap_or(0);
            assert!(received > 0 && sent > 0, "{who} vs iperf3 {v}: nothing counted: {}", doc["end"]);
            if who == "wireperf client" {
                // A wireperf sender's count is what the kernel took, so nothing more can arrive.
                assert!(received <= sent, "{who} vs iperf3 {v}: received {received} > sent {sent}");
            } else {
                // A 3.16+ sender can leave its last write uncounted (seen: 3.18 reported
                // 2218393600 sent, wireperf received 2218455797): see Peer.
                peer.assert_receiver_count(received, sent, 1, 128 * 1024, who);
            }
        }
    }
}
