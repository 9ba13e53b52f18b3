//! `-m/--mptcp`: real Multipath TCP data connections, seen in the kernel's own MPTCP counters
//! (`MPTcpExt*` in each lab namespace's /proc/net/netstat), against wireperf's server and stock
//! 3.12 (no MPTCP: the kernel falls back to TCP in the handshake) and 3.22 servers; a stock
//! 3.22 `-m` client into a wireperf server; plain clients on wireperf's MPTCP listener; and a
//! kernel that refuses MPTCP (`net.mptcp.enabled=0`), where wireperf fails as 3.22 does.
//!
//! Client in namespace A, server in B; the counters are per namespace, so each side's figures
//! are its own: B's `MPCapableSYNRX` counts MPTCP handshakes a server accepted, A's
//! `MPCapableFallbackSYNACK` the ones that fell back to TCP.

use crate::support::harness::{assert_ok, iperf3, json_of, stock_iperf3, u, wireperf};
use crate::support::lab::{LAB_PORT, Lab, LabConfig, Side};
use std::collections::HashMap;
use std::path::Path;
use std::process::Output;
use std::time::Duration;

/// The namespace's MPTCP counters (the `MPTcpExt:` rows of /proc/net/netstat), by name
/// (`MPCapableSYNRX`, ...).
fn mptcp_counters(lab: &Lab, side: Side) -> HashMap<String, u64> {
    let out = lab.exec(side, &["cat", "/proc/net/netstat"]);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let rows: Vec<&str> = text.lines().filter(|l| l.starts_with("MPTcpExt:")).collect();
    assert_eq!(rows.len(), 2, "this kernel has no MPTCP counters (CONFIG_MPTCP); the MPTCP tests need them:\n{text}");
    let names = rows[0].split_whitespace().skip(1);
    let values = rows[1].split_whitespace().skip(1).map(|v| v.parse::<u64>().unwrap_or(0));
    names.zip(values).map(|(n, v)| (n.to_string(), v)).collect()
}

/// How much each counter grew.
fn delta(before: &HashMap<String, u64>, after: &HashMap<String, u64>, key: &str) -> u64 {
    after.get(key).copied().unwrap_or(0) - before.get(key).copied().unwrap_or(0)
}

fn lab() -> Lab {
    let lab = Lab::new(LabConfig::default());
    for side in [Side::A, Side::B] {
        let on = lab.exec(side, &["sysctl", "-n", "net.mptcp.enabled"]);
        assert_eq!(
            String::from_utf8_lossy(&on.stdout).trim(),
            "1",
            "MPTCP must be enabled in a new namespace (net.mptcp.enabled) for these tests"
        );
    }
    lab
}

/// Runs one test from A to a server in B; returns the client's output and how the counters of
/// A (client) and B (server) moved: (server's MPTCP handshakes, client's fallbacks to TCP).
fn run(lab: &Lab, server: &Path, server_args: &[&str], client: &Path, args: &[&str]) -> (Output, u64, u64) {
    let (a0, b0) = (mptcp_counters(lab, Side::A), mptcp_counters(lab, Side::B));
    let mut s = vec!["-1"];
    s.extend_from_slice(server_args);
    let srv = lab.start_server(Side::B, server, &s);
    let port = LAB_PORT.to_string();
    let mut a = vec!["-c", lab.addr(Side::B), "-p", &port, "-t", "1", "-J"];
    a.extend_from_slice(args);
    if client == wireperf() {
        a.push("--no-save");
    }
    let out = lab.run(Side::A, client, &a);
    let _ = srv.finish(Duration::from_secs(10));
    let (a1, b1) = (mptcp_counters(lab, Side::A), mptcp_counters(lab, Side::B));
    (out, delta(&b0, &b1, "MPCapableSYNRX"), delta(&a0, &a1, "MPCapableFallbackSYNACK"))
}

fn moved(out: &Output) -> u64 {
    assert_ok(out);
    u(&json_of(out), "/end/sum_received/bytes")
}

#[test]
fn mptcp_data_connections_to_wireperf_3_12_and_3_22_servers() {
    let lab = lab();
    // wireperf's server: every data connection is MPTCP (the control connection stays TCP).
    for dir in [&["-m", "-P", "2"][..], &["-m", "-P", "2", "-R"]] {
        let (out, accepted, fallbacks) = run(&lab, &wireperf(), &[], &wireperf(), dir);
        assert!(moved(&out) > 0);
        assert_eq!((accepted, fallbacks), (2, 0), "{dir:?}");
    }
    // 3.22 turns its listener into an MPTCP one when the parameters say "mptcp".
    let (out, accepted, fallbacks) = run(&lab, &stock_iperf3("3.22"), &[], &wireperf(), &["-m"]);
    assert!(moved(&out) > 0);
    assert_eq!((accepted, fallbacks), (1, 0), "to 3.22");
    // 3.12 knows no MPTCP: the handshake falls back to TCP and the test runs.
    let (out, accepted, fallbacks) = run(&lab, &iperf3(), &[], &wireperf(), &["-m"]);
    assert!(moved(&out) > 0);
    assert_eq!((accepted, fallbacks), (0, 1), "to 3.12");
}

#[test]
fn stock_3_22_mptcp_client_into_wireperf_server_and_plain_clients_stay_tcp() {
    let lab = lab();
    let stock = stock_iperf3("3.22");
    for dir in [&["-m"][..], &["-m", "-R"]] {
        let (out, accepted, fallbacks) = run(&lab, &wireperf(), &[], &stock, dir);
        assert!(moved(&out) > 0);
        assert_eq!((accepted, fallbacks), (1, 0), "3.22 {dir:?}");
    }
    // Without -m nothing is MPTCP, though wireperf's listener is (`-s -m` is accepted too).
    for (client, server_args) in [(wireperf(), &[][..]), (iperf3(), &["-m"]), (stock.clone(), &[])] {
        let (out, accepted, fallbacks) = run(&lab, &wireperf(), server_args, &client, &[]);
        assert!(moved(&out) > 0);
        assert_eq!((accepted, fallbacks), (0, 0), "{client:?} {server_args:?}");
    }
}

#[test]
fn kernel_without_mptcp_fails_the_client_as_3_22_and_the_server_falls_back() {
    let lab = lab();
    // The client's kernel refuses IPPROTO_MPTCP sockets: no silent TCP, the error 3.22 gives.
    lab.sysctl(Side::A, "net.mptcp.enabled", "0");
    for client in [wireperf(), stock_iperf3("3.22")] {
        let (out, _, _) = run(&lab, &iperf3(), &[], &client, &["-m"]);
        assert!(!out.status.success(), "{client:?} ran without MPTCP");
        let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert!(text.contains("unable to connect stream") && text.contains("Protocol not available"), "{text}");
    }
    // The server's kernel refuses MPTCP: wireperf listens with plain TCP, and an MPTCP client
    // falls back to TCP in the handshake.
    lab.sysctl(Side::A, "net.mptcp.enabled", "1");
    lab.sysctl(Side::B, "net.mptcp.enabled", "0");
    let (out, accepted, fallbacks) = run(&lab, &wireperf(), &[], &wireperf(), &["-m"]);
    assert!(moved(&out) > 0);
    assert_eq!((accepted, fallbacks), (0, 1));
}
