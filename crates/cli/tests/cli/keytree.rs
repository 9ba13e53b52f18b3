//! The `-J` documents have every key iperf3 3.12 prints, with the same types.
//!
//! Each case runs the same test twice: stock iperf3 against stock iperf3 (the reference) and
//! wireperf against stock iperf3, then compares the key trees.

use crate::harness::*;
use std::time::Duration;

fn iperf3_pair(args: &[&str]) -> (serde_json::Value, serde_json::Value) {
    let server = start_server(&iperf3(), &["-1", "-J"]);
    let port = server.port.to_string();
    let mut a = vec!["-c", "127.0.0.1", "-p", &port, "-J"];
    a.extend_from_slice(args);
    let out = run_client(&iperf3(), &a);
    let (_, so, _) = server.finish(Duration::from_secs(10));
    assert_ok(&out);
    (json_of(&out), serde_json::from_str(&so).expect("iperf3 server JSON"))
}

fn wireperf_client(args: &[&str]) -> serde_json::Value {
    let server = start_server(&iperf3(), &["-1"]);
    let port = server.port.to_string();
    let mut a = vec!["-c", "127.0.0.1", "-p", &port, "-J"];
    a.extend_from_slice(args);
    let out = run_client(&wireperf(), &a);
    drop(server);
    assert_ok(&out);
    json_of(&out)
}

fn wireperf_server(args: &[&str]) -> serde_json::Value {
    let server = start_server(&wireperf(), &["-1", "-J"]);
    let port = server.port.to_string();
    let mut a = vec!["-c", "127.0.0.1", "-p", &port];
    a.extend_from_slice(args);
    let out = run_client(&iperf3(), &a);
    assert_ok(&out);
    let (_, so, se) = server.finish(Duration::from_secs(10));
    serde_json::from_str(&so).unwrap_or_else(|e| panic!("wireperf server JSON: {e}\n{so}\n{se}"))
}

fn compare(args: &[&str]) {
    let (ref_client, ref_server) = iperf3_pair(args);
    assert_superset(&ref_client, &wireperf_client(args), &[".server_output"]);
    assert_superset(&ref_server, &wireperf_server(args), &[]);
}

#[test]
fn plain() {
    compare(&["-t", "1"]);
}

#[test]
fn reverse() {
    compare(&["-t", "1", "-R"]);
}

#[test]
fn bidir_two_streams() {
    compare(&["-t", "1", "--bidir", "-P", "2"]);
}
