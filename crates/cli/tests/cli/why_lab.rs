//! `--why` in the namespace lab (see `lab.rs`): each test builds one bottleneck that is the
//! true limit, runs a 2 s client in namespace A against a server in B, and checks the
//! verdict's id and side. Each runs against a wireperf server (both hosts watched) and a stock
//! iperf3 server (only the client's host; the verdict must say the far side was not seen).

#![allow(clippy::unwrap_used)]

use crate::harness::*;
use crate::lab::{LAB_PORT, Lab, LabConfig, Side};
use serde_json::Value;
use std::path::PathBuf;
use std::time::Duration;

/// Which server runs in namespace B.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Peer {
    Wireperf,
    Stock,
}

impl Peer {
    fn bin(self) -> PathBuf {
        match self {
            Peer::Wireperf => wireperf(),
            Peer::Stock => iperf3(),
        }
    }
}

/// Runs `wireperf -c B --why -J args` from A against a one-shot server in B and returns the
/// first verdict (and the whole document for further checks).
fn verdict(lab: &Lab, peer: Peer, args: &[&str]) -> (Value, Value) {
    let server = lab.start_server(Side::B, &peer.bin(), &["-1"]);
    let port = LAB_PORT.to_string();
    let mut a = vec!["-c", lab.addr(Side::B), "-p", &port, "-t", "2", "--why", "-J", "--no-save"];
    a.extend_from_slice(args);
    let out = lab.run(Side::A, &wireperf(), &a);
    let _ = server.finish(Duration::from_secs(10));
    assert_ok(&out);
    let doc = json_of(&out);
    let v = doc.pointer("/wireperf/bottleneck/0").cloned().unwrap_or_else(|| panic!("no verdict in {doc}"));
    eprintln!("{peer:?} {args:?}: {}", serde_json::to_string_pretty(&v).unwrap());
    assert_eq!(v["far_side_seen"], peer == Peer::Wireperf, "far side seen: {v}");
    if peer == Peer::Stock {
        let nc = v["not_checked"].to_string();
        assert!(nc.contains("not seen"), "a stock server's side must be reported unseen: {v}");
    }
    (v, doc)
}

fn ids_of(v: &Value) -> Vec<String> {
    let mut ids = vec![v["limit"].as_str().unwrap_or("").to_string()];
    ids.extend(v["also"].as_array().into_iter().flatten().map(|a| a["limit"].as_str().unwrap_or("").to_string()));
    ids
}

fn assert_limit(v: &Value, id: &str, side: &str) {
    assert_eq!((v["limit"].as_str(), v["side"].as_str()), (Some(id), Some(side)), "verdict: {v}");
    assert!(!v["evidence"].as_array().unwrap().is_empty(), "a verdict cites evidence: {v}");
}

fn shaper(peer: Peer) {
    let lab = Lab::new(LabConfig { rate: Some("100mbit"), ..Default::default() });
    let (v, _) = verdict(&lab, peer, &[]);
    assert_limit(&v, "shaper", "client");
    assert!(v["evidence"][0].as_str().unwrap().contains("tbf"), "{v}");
}

#[test]
fn lab_why_tbf_shaper_is_shaper_wireperf_server() {
    shaper(Peer::Wireperf);
}

#[test]
fn lab_why_tbf_shaper_is_shaper_stock_server() {
    shaper(Peer::Stock);
}

fn small_rmem(peer: Peer) {
    let lab = Lab::new(LabConfig::default());
    lab.sysctl(Side::B, "net.ipv4.tcp_rmem", "4096 8192 8192");
    let (v, _) = verdict(&lab, peer, &[]);
    assert_limit(&v, "receiver-window", "server");
    assert!(v["fix"].to_string().contains("tcp_rmem"), "{v}");
}

#[test]
fn lab_why_small_tcp_rmem_is_receiver_window_wireperf_server() {
    small_rmem(Peer::Wireperf);
}

#[test]
fn lab_why_small_tcp_rmem_is_receiver_window_stock_server() {
    small_rmem(Peer::Stock);
}

fn tcp_loss(peer: Peer) {
    let lab = Lab::new(LabConfig::default());
    lab.drop_tcp(Side::B, LAB_PORT, 2);
    let (v, _) = verdict(&lab, peer, &[]);
    let dropped = lab.nft_dropped(Side::B);
    assert!(dropped > 0, "the drop rule dropped nothing");
    assert_limit(&v, "path-loss", "path");
    let real = v["retransmits"]["real"].as_u64().unwrap();
    assert!(real > 0 && real <= v["retransmits"]["total"].as_u64().unwrap(), "{v}");
}

#[test]
fn lab_why_nft_tcp_drops_are_path_loss_wireperf_server() {
    tcp_loss(Peer::Wireperf);
}

#[test]
fn lab_why_nft_tcp_drops_are_path_loss_stock_server() {
    tcp_loss(Peer::Stock);
}

#[test]
fn lab_why_udp_beyond_the_servers_socket_is_receiver_socket() {
    let lab = Lab::new(LabConfig::default());
    let (v, _) = verdict(&lab, Peer::Wireperf, &["-u", "-b", "2G", "-l", "1400", "-w", "16K"]);
    assert_limit(&v, "receiver-socket", "server");
    assert!(!ids_of(&v).contains(&"path-loss".to_string()), "no datagram was lost on the path: {v}");
}

#[test]
fn lab_why_udp_beyond_the_clients_socket_is_receiver_socket_stock_server() {
    // A stock server sends no socket drops: receive on the client (-R), where they are seen.
    let lab = Lab::new(LabConfig::default());
    let (v, _) = verdict(&lab, Peer::Stock, &["-u", "-b", "2G", "-l", "1400", "-w", "16K", "-R"]);
    assert_limit(&v, "receiver-socket", "client");
}

fn clean(peer: Peer) {
    let lab = Lab::new(LabConfig::default());
    let (v, _) = verdict(&lab, peer, &[]);
    assert!(!ids_of(&v).contains(&"path-loss".to_string()), "no drop on the path, yet path-loss: {v}");
    let r = &v["retransmits"];
    assert!(r["real"].as_u64().unwrap() + r["spurious"].as_u64().unwrap() == r["total"].as_u64().unwrap(), "{v}");
}

#[test]
fn lab_why_no_drop_is_not_path_loss_wireperf_server() {
    clean(Peer::Wireperf);
}

#[test]
fn lab_why_no_drop_is_not_path_loss_stock_server() {
    clean(Peer::Stock);
}

#[test]
fn lab_why_text_follows_the_summary_and_plain_output_is_unchanged() {
    let lab = Lab::new(LabConfig { rate: Some("100mbit"), ..Default::default() });
    let port = LAB_PORT.to_string();
    let mut outs = Vec::new();
    for why in [true, false] {
        let server = lab.start_server(Side::B, &iperf3(), &["-1"]);
        let mut a = vec!["-c", lab.addr(Side::B), "-p", &port, "-t", "1", "--no-save"];
        if why {
            a.push("--why");
        }
        let out = lab.run(Side::A, &wireperf(), &a);
        let _ = server.finish(Duration::from_secs(10));
        assert_ok(&out);
        outs.push(String::from_utf8_lossy(&out.stdout).into_owned());
    }
    let (with, without) = (&outs[0], &outs[1]);
    let done = with.find("iperf Done.").unwrap_or_else(|| panic!("{with}"));
    let block = &with[done..];
    assert!(block.contains("Bottleneck client→server: shaper (client)"), "{with}");
    assert!(block.contains("not seen: the server's host was not seen"), "{with}");
    assert!(!without.contains("Bottleneck"), "without --why the output is iperf3's: {without}");
    assert!(without.trim_end().ends_with("iperf Done."), "{without}");
}
