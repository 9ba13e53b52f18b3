//! The path told apart from the hosts: `wireperf suite` in a home-style lab (client A, a
//! router namespace, server B; see `support/lab.rs`), where the router's port toward B is shaped and
//! its queue fills as a home router's does. Each test names the congestion control its
//! senders use (a loss-based sender fills any queue until it overflows; BBR keeps a shorter
//! one), checks the lab against the router's own counters (`tc -s`), and asserts both the
//! JSON verdict and the lines a user reads.

#![allow(clippy::unwrap_used)]

use crate::support::harness::*;
use crate::support::lab::{LAB_PORT, Lab, LabConfig, MiddleShaper, Side};
use serde_json::Value;
use std::path::Path;
use std::time::Duration;

/// The router: 200 Mbit/s toward the server, a queue of 500 kB (20 ms when full).
const ROUTER: MiddleShaper = MiddleShaper { rate: "200mbit", rate_bps: 200e6, limit: 500_000 };

/// Runs `wireperf suite B -t 3 args` from A against `server` in B; returns the JSON document
/// (written by `--json-file` in the same run) and the text the user reads.
fn suite(lab: &Lab, server: &Path, server_args: &[&str], args: &[&str]) -> (Value, String) {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("suite.json");
    let port = LAB_PORT.to_string();
    let srv = lab.start_server(Side::B, server, server_args);
    let mut a = vec!["suite", lab.addr(Side::B), "-p", &port, "-t", "3", "--no-save"];
    a.extend_from_slice(&["--json-file", json.to_str().unwrap()]);
    a.extend_from_slice(args);
    let out = lab.run(Side::A, &wireperf(), &a);
    let _ = srv.finish(Duration::from_secs(1));
    assert_ok(&out);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let doc: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    eprintln!("{text}");
    (doc, text)
}

/// The bottleneck verdict of `phase` for `direction` (`client→server` or `server→client`).
fn bottleneck<'a>(doc: &'a Value, phase: &str, direction: &str) -> &'a Value {
    doc["phases"]
        .as_array()
        .and_then(|a| a.iter().find(|p| p["phase"] == phase))
        .and_then(|p| p["bottleneck"].as_array())
        .and_then(|b| b.iter().find(|v| v["direction"] == direction))
        .unwrap_or_else(|| panic!("no {phase} {direction} verdict in {}", doc["phases"]))
}

/// The router's tbf counters toward B: (bytes sent, packets dropped).
fn router_counts(lab: &Lab) -> (u64, u64) {
    let out = lab.exec_router(&["tc", "-s", "-j", "qdisc", "show"]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let tbf = v.as_array().and_then(|a| a.iter().find(|q| q["kind"] == "tbf")).unwrap_or_else(|| panic!("{v}"));
    (tbf["bytes"].as_u64().unwrap(), tbf["drops"].as_u64().unwrap())
}

/// The upload through the shaped router is `path-bottleneck` on the path: the rate at the
/// shaper's, flat, the queue's delay seen by the probes, no host named, and the fix sends the
/// user to the box between the hosts.
fn router_queue(server: &Path, server_args: &[&str], congestion: &str, seen: bool) {
    let lab = Lab::new(LabConfig { middle_shaper: Some(ROUTER), ..Default::default() });
    let (doc, text) = suite(&lab, server, server_args, &["-C", congestion]);
    let (sent, _) = router_counts(&lab);
    let up = bottleneck(&doc, "upload", "client→server");
    assert_eq!((up["limit"].as_str(), up["side"].as_str()), (Some("path-bottleneck"), Some("path")), "{up}");
    assert_eq!(up["far_side_seen"], seen, "{up}");
    let ev: Vec<&str> = up["evidence"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    let ev = ev.join("\n");
    assert!(ev.contains("the rate held flat at"), "{ev}");
    assert!(ev.contains("a queue filled between the hosts"), "{ev}");
    assert!(up["also"].as_array().unwrap().iter().all(|a| a["limit"] != "path-loss"), "the loss is the queue's: {up}");
    let fix = up["fix"][0].as_str().unwrap();
    assert!(fix.starts_with("the path between the hosts carries about") && fix.contains("router"), "{fix}");
    // The rate is the router's: at most its shaper's, and every byte of it crossed the tbf.
    let phase = &doc["phases"][0];
    assert_eq!(phase["phase"], "upload");
    let bps = phase["upload_bps"].as_f64().unwrap();
    assert!(bps > 0.3 * ROUTER.rate_bps && bps <= 1.02 * ROUTER.rate_bps, "{bps}");
    let moved = (bps * 3.0 / 8.0) as u64;
    assert!(sent >= moved * 9 / 10, "the router's tbf sent {sent} bytes, the upload moved about {moved}");
    // The queue the probes saw is the router's: loaded round trips well above idle.
    let l = &phase["latency"];
    assert!(l["loaded_ms"]["p50"].as_f64().unwrap() > l["idle_ms"]["p50"].as_f64().unwrap() + 0.5, "{l}");
    // What the user reads: the verdict line, its evidence and fix, the latency line, and no
    // doctor finding of the client pinned on a limit that is the path's.
    assert!(text.contains("  upload client→server: path-bottleneck (path)\n"), "{text}");
    assert!(text.contains("      fix: the path between the hosts carries about "), "{text}");
    let lat = text.lines().find(|l| l.starts_with("  upload    idle p50 ")).unwrap_or_else(|| panic!("{text}"));
    assert!(lat.contains("; loaded p50 ") && lat.contains("; grade "), "{lat}");
    let verdict = text.lines().find(|l| l.contains("] upload: upload measured")).unwrap_or_else(|| panic!("{text}"));
    assert!(!verdict.contains("see doctor finding"), "{verdict}");
    assert!(!text.contains("look at the receiving side of the upload"), "the remark blames a host: {text}");
}

#[test]
fn lab_router_queue_with_reno_is_the_path_wireperf_server() {
    router_queue(&wireperf(), &[], "reno", true);
}

#[test]
fn lab_router_queue_with_reno_is_the_path_stock_server() {
    router_queue(&iperf3(), &[], "reno", false);
}

#[test]
fn lab_router_queue_with_bbr_is_the_path_wireperf_server() {
    let available = std::fs::read_to_string("/proc/sys/net/ipv4/tcp_available_congestion_control").unwrap();
    let loadable = Path::new("/lib/modules").exists();
    assert!(
        available.split_whitespace().any(|c| c == "bbr") || loadable,
        "this kernel offers no BBR ({available}); the test needs tcp_bbr"
    );
    router_queue(&wireperf(), &[], "bbr", true);
}

/// Random loss with no queue anywhere (2% of the data segments dropped at B's input, no
/// shaper): `path-loss`, not the path's capacity, and the nft counter saw the drops.
#[test]
fn lab_random_drops_without_a_queue_are_path_loss() {
    let lab = Lab::new(LabConfig::default());
    lab.drop_tcp(Side::B, LAB_PORT, 2);
    let (doc, text) = suite(&lab, &wireperf(), &[], &["-C", "reno"]);
    assert!(lab.nft_dropped(Side::B) > 0, "the drop rule dropped nothing");
    let up = bottleneck(&doc, "upload", "client→server");
    assert_eq!((up["limit"].as_str(), up["side"].as_str()), (Some("path-loss"), Some("path")), "{up}");
    assert!(up["retransmits"]["real"].as_u64().unwrap() > 0, "{up}");
    assert!(text.contains("  upload client→server: path-loss (path)\n"), "{text}");
}
