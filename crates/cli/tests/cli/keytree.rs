//! The `-J` documents have every key stock iperf3 prints (3.12, 3.18 and 3.22), with the same
//! types, and wireperf's own additions only under a `wireperf` prefix.
//!
//! Each case runs the same test twice: stock iperf3 against stock iperf3 of one version (the
//! reference) and wireperf against that stock iperf3, then compares the key trees, client
//! document and server document.

use crate::support::harness::*;
use crate::support::peers::{Peer, per_peer};
use std::time::Duration;

fn iperf3_pair(peer: &Peer, args: &[&str]) -> (serde_json::Value, serde_json::Value) {
    let server = start_server(&peer.bin, &["-1", "-J"]);
    let port = server.port.to_string();
    let mut a = vec!["-c", "127.0.0.1", "-p", &port, "-J"];
    a.extend_from_slice(args);
    let out = run_client(&peer.bin, &a);
    let (_, so, _) = server.finish(Duration::from_secs(10));
    assert_ok(&out);
    (json_of(&out), serde_json::from_str(&so).expect("iperf3 server JSON"))
}

fn wireperf_client(peer: &Peer, args: &[&str]) -> serde_json::Value {
    let server = start_server(&peer.bin, &["-1"]);
    let port = server.port.to_string();
    let mut a = vec!["-c", "127.0.0.1", "-p", &port, "-J"];
    a.extend_from_slice(args);
    let out = run_client(&wireperf(), &a);
    drop(server);
    assert_ok(&out);
    json_of(&out)
}

fn wireperf_server(peer: &Peer, args: &[&str]) -> serde_json::Value {
    let server = start_server(&wireperf(), &["-1", "-J"]);
    let port = server.port.to_string();
    let mut a = vec!["-c", "127.0.0.1", "-p", &port];
    a.extend_from_slice(args);
    let out = run_client(&peer.bin, &a);
    assert_ok(&out);
    let (_, so, se) = server.finish(Duration::from_secs(10));
    serde_json::from_str(&so).unwrap_or_else(|e| panic!("wireperf server JSON: {e}\n{so}\n{se}"))
}

/// Every key name wireperf prints is one iperf3 prints (in either document of the same test)
/// or carries wireperf's prefix, so a consumer never mistakes an addition for iperf3's.
fn assert_own_keys_prefixed(refs: [&serde_json::Value; 2], ours: &serde_json::Value, what: &str) {
    let name = |p: &str| p.rsplit('.').next().unwrap_or("").trim_end_matches("[]").to_string();
    let known: std::collections::BTreeSet<String> =
        refs.iter().flat_map(|r| key_tree(r).into_keys().map(|p| name(&p)).collect::<Vec<_>>()).collect();
    let foreign: Vec<String> = key_tree(ours)
        .into_keys()
        .filter(|p| !p.is_empty() && !known.contains(&name(p)))
        .filter(|p| !p.split('.').any(|seg| seg.starts_with("wireperf")))
        .collect();
    assert!(
        foreign.is_empty(),
        "{what}: keys that are neither iperf3's nor wireperf_-prefixed:\n{}",
        foreign.join("\n")
    );
}

fn compare(peer: &Peer, args: &[&str]) {
    // The three tests run at once, each with its own server and port: what is compared is the
    // documents' keys and types, which do not depend on the rate a test reached, and three
    // 1-second tests side by side take one second instead of three.
    let ((ref_client, ref_server), client, server) = std::thread::scope(|s| {
        let reference = s.spawn(|| iperf3_pair(peer, args));
        let client = s.spawn(|| wireperf_client(peer, args));
        let server = wireperf_server(peer, args);
        (reference.join().unwrap(), client.join().unwrap(), server)
    });
    assert_superset(&ref_client, &client, &[".server_output"]);
    assert_superset(&ref_server, &server, &[]);
    if peer.version == "3.22" {
        assert_own_keys_prefixed([&ref_client, &ref_server], &client, "client document");
        assert_own_keys_prefixed([&ref_client, &ref_server], &server, "server document");
    }
}

per_peer!(plain, reverse, bidir_two_streams, udp, udp_reverse);

fn plain(peer: &Peer) {
    compare(peer, &["-t", "1"]);
}

fn reverse(peer: &Peer) {
    compare(peer, &["-t", "1", "-R"]);
}

fn bidir_two_streams(peer: &Peer) {
    compare(peer, &["-t", "1", "--bidir", "-P", "2"]);
}

fn udp(peer: &Peer) {
    compare(peer, &["-t", "1", "-u", "-b", "10M"]);
}

fn udp_reverse(peer: &Peer) {
    compare(peer, &["-t", "1", "-u", "-b", "10M", "-R"]);
}
