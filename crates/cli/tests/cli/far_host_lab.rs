//! The far host's doctor: a wireperf server tells a client that asks (the suite, `--why`) its
//! doctor's findings and link facts, and with `--no-share-host` nothing. The server here reads
//! its host from the committed RTL8156B-on-`cdc_ncm` fixture (`--host-root`): a Pi with a
//! USB dongle bound to the generic driver, standing behind a veth in the namespace lab.

#![allow(clippy::unwrap_used)]

use crate::support::harness::*;
use crate::support::lab::{LAB_PORT, Lab, LabConfig, Side};
use serde_json::Value;
use std::path::PathBuf;
use std::time::Duration;

/// What a client says of a server that shares nothing (the suite's note and the verdicts'
/// not-checked line).
const DECLINED: &str = "the server shares nothing of its host (it runs with --no-share-host)";

fn pi_fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../doctor/tests/fixtures/rtl8156b-cdc-ncm")
}

/// `wireperf suite B -t 2 --no-latency` from A against a wireperf server in B started with
/// `server_args`: the JSON document (same run, `--json-file`) and the text.
fn suite(lab: &Lab, server_args: &[&str]) -> (Value, String) {
    suite_saved(lab, server_args, None)
}

/// As [`suite`], saving the run to the history file `db` (else `--no-save`).
fn suite_saved(lab: &Lab, server_args: &[&str], db: Option<&str>) -> (Value, String) {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("suite.json");
    let port = LAB_PORT.to_string();
    let srv = lab.start_server(Side::B, &wireperf(), server_args);
    let mut a = vec!["suite", lab.addr(Side::B), "-p", &port, "-t", "2", "--no-latency"];
    match db {
        Some(db) => a.extend_from_slice(&["--db", db]),
        None => a.push("--no-save"),
    }
    a.extend_from_slice(&["--json-file", json.to_str().unwrap()]);
    let out = lab.run(Side::A, &wireperf(), &a);
    let _ = srv.finish(Duration::from_secs(1));
    assert_ok(&out);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    eprintln!("{text}");
    (serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap(), text)
}

/// `wireperf -c B -t 1 --why` from A (text, then `-J`) against a wireperf server in B.
fn why(lab: &Lab, server_args: &[&str], json: bool) -> String {
    let port = LAB_PORT.to_string();
    let srv = lab.start_server(Side::B, &wireperf(), &[&["-1"], server_args].concat());
    let mut a = vec!["-c", lab.addr(Side::B), "-p", &port, "-t", "1", "--why", "--no-save"];
    if json {
        a.push("-J");
    }
    let out = lab.run(Side::A, &wireperf(), &a);
    let _ = srv.finish(Duration::from_secs(5));
    assert_ok(&out);
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn lab_a_dongle_on_cdc_ncm_behind_the_server_is_named_on_the_server() {
    let lab = Lab::new(LabConfig::default());
    let root = pi_fixture();
    let host_root = ["--host-root", root.to_str().unwrap()];
    let dbdir = tempfile::tempdir().unwrap();
    let db = dbdir.path().join("history.db");
    let db = db.to_str().unwrap();
    let (doc, text) = suite_saved(&lab, &host_root, Some(db));
    let h = &doc["server_host"];
    assert_eq!(h["iface"], "enx00e04c680001", "{h}");
    assert_eq!(h["from_fixture"], true);
    assert_eq!((h["link"]["driver"].as_str(), h["link"]["duplex"].as_str()), (Some("cdc_ncm"), Some("half")), "{h}");
    assert_eq!(h["link"]["speed_mbps"], 2500);
    let findings = h["findings"].as_array().unwrap();
    let ids: Vec<&str> = findings.iter().filter_map(|f| f["id"].as_str()).collect();
    for id in ["generic-usb-driver", "half-duplex", "rps-off", "mtu-locked"] {
        assert!(ids.contains(&id), "{id} not among {ids:?}");
    }
    let generic = findings.iter().find(|f| f["id"] == "generic-usb-driver").unwrap();
    assert_eq!(generic["severity"], "crit");
    let fix = generic["fix"][0].as_str().unwrap();
    assert!(!fix.is_empty(), "{generic}");
    assert!(doc.get("server_host_note").is_none(), "{doc}");
    // Both ends compared: the server's half duplex, named with both hosts' values and its
    // own doctor's fix (the client's veth has no line rate to compare).
    let ends = doc["both_ends"].as_array().unwrap();
    let half = ends.iter().find(|f| f["id"] == "half-duplex-end").unwrap_or_else(|| panic!("{ends:?}"));
    assert_eq!(half["server"], "enx00e04c680001 half duplex (cdc_ncm)", "{half}");
    assert!(half["client"].as_str().unwrap().ends_with("full duplex (veth)"), "{half}");
    assert!(ends.iter().all(|f| f["id"] != "line-rates-differ"), "a veth's speed is nominal: {ends:?}");
    assert!(text.contains("\nboth ends:\n  crit half-duplex-end: One end runs half duplex (client "), "{text}");
    assert!(text.contains("       fix on the server: "), "{text}");
    // Kept: the history lists the server's findings and the two ends' beside this host's,
    // and the HTML report names their host.
    let show = run_client(&wireperf(), &["history", "show", "1", "--db", db]);
    assert_ok(&show);
    let show = String::from_utf8_lossy(&show.stdout);
    for f in ["generic-usb-driver (server enx00e04c680001)", "half-duplex-end (both ends)"] {
        assert!(show.contains(f), "{f} not in: {show}");
    }
    let html = run_client(&wireperf(), &["report", "1", "--html", "-", "--db", db]);
    assert_ok(&html);
    let html = String::from_utf8_lossy(&html.stdout);
    assert!(html.contains("on the server&#39;s enx00e04c680001"), "the report names the server's findings");
    // What the user reads: the server's interface with its driver and duplex, the finding and
    // its fix, to be run on the server.
    assert!(text.contains("\nserver's host: enx00e04c680001 (cdc_ncm, 2500 Mbit/s half duplex"), "{text}");
    assert!(text.contains("  crit generic-usb-driver: "), "{text}");
    assert!(text.contains(&format!("       fix on the server: {fix}\n")), "{text}");
    // `--why` carries the same, in text and under `wireperf.server_host` in -J.
    let t = why(&lab, &host_root, false);
    assert!(t.contains("Server's doctor on enx00e04c680001 (cdc_ncm, 2500 Mbit/s half duplex): "), "{t}");
    assert!(t.contains(&format!("    fix on the server: {fix}\n")), "{t}");
    let j: Value = serde_json::from_str(&why(&lab, &host_root, true)).unwrap();
    let ids: Vec<&str> = j["wireperf"]["server_host"]["findings"]
        .as_array()
        .unwrap_or_else(|| panic!("{}", j["wireperf"]))
        .iter()
        .filter_map(|f| f["id"].as_str())
        .collect();
    assert!(ids.contains(&"generic-usb-driver"), "{ids:?}");
}

#[test]
fn lab_no_share_host_sends_nothing_and_the_client_says_so() {
    let lab = Lab::new(LabConfig::default());
    let (doc, text) = suite(&lab, &["--no-share-host"]);
    assert!(doc["server_host"].is_null(), "{}", doc["server_host"]);
    assert_eq!(doc["server_host_note"], DECLINED);
    for p in doc["phases"].as_array().unwrap() {
        for v in p["bottleneck"].as_array().unwrap() {
            assert_eq!(v["far_side_seen"], false, "{v}");
            let notes: Vec<&str> = v["not_checked"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
            assert!(notes.contains(&DECLINED), "{notes:?}");
        }
    }
    assert_eq!(text.matches(DECLINED).count(), 1, "one line says it: {text}");
    assert!(text.contains(&format!("\nserver's host: {DECLINED}\n")), "{text}");
    let j: Value = serde_json::from_str(&why(&lab, &["--no-share-host"], true)).unwrap();
    let w = &j["wireperf"];
    assert!(w.get("server_host").is_none(), "{w}");
    assert!(w["watch_cost"]["server"].is_null(), "no samples either: {w}");
    assert_eq!(w["bottleneck"][0]["not_checked"][0], DECLINED, "{w}");
}

#[test]
fn no_share_host_and_host_root_together_are_refused() {
    let out = run_client(&wireperf(), &["-s", "--no-share-host", "--host-root", "/tmp"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--no-share-host") && err.contains("--host-root"), "{err}");
}

/// Two hosts configured apart: jumbo frames on the client, 1500 on the server. Each host's
/// doctor finds its own MTU fine; only the two side by side show the mismatch.
#[test]
fn lab_mtu_9000_against_1500_is_named_with_both_values() {
    let lab = Lab::new(LabConfig { mtu: Some(9000), mtu_b: Some(1500), ..Default::default() });
    let (doc, text) = suite(&lab, &[]);
    let (a, b) = (lab.dev(Side::A), lab.dev(Side::B));
    let ends = doc["both_ends"].as_array().unwrap();
    let m = ends.iter().find(|f| f["id"] == "mtu-mismatch").unwrap_or_else(|| panic!("{ends:?}"));
    assert_eq!(m["client"], format!("{a} MTU 9000"), "{m}");
    assert_eq!(m["server"], format!("{b} MTU 1500"), "{m}");
    assert_eq!(m["severity"], "warn");
    assert_eq!(
        m["fix"][0].as_str().unwrap().split("   #").next(),
        Some(format!("on the client: sudo ip link set {a} mtu 1500").as_str())
    );
    assert!(
        text.contains(&format!(
            "  warn mtu-mismatch: The ends' MTUs differ (client {a} MTU 9000, server {b} MTU 1500)"
        )),
        "{text}"
    );
    assert!(text.contains(&format!("       client: {a} MTU 9000; server: {b} MTU 1500\n")), "{text}");
    // The test itself ran: TCP settled on the smaller segment.
    assert!(doc["phases"][0]["upload_bps"].as_f64().unwrap() > 0.0);
}

/// A shaper on the server's own egress holds the download, and the verdict says it is on the
/// server, with the fix to run there; the tbf's own counter confirms the bytes crossed it.
#[test]
fn lab_a_shaper_on_the_server_limits_the_download_on_the_server() {
    let lab = Lab::new(LabConfig { rate_b: Some("300mbit"), ..Default::default() });
    let (doc, text) = suite(&lab, &[]);
    let b = lab.dev(Side::B);
    let down = doc["phases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["phase"] == "download")
        .and_then(|p| p["bottleneck"].as_array())
        .and_then(|v| v.iter().find(|v| v["direction"] == "server→client"))
        .unwrap_or_else(|| panic!("{}", doc["phases"]))
        .clone();
    assert_eq!((down["limit"].as_str(), down["side"].as_str()), (Some("shaper"), Some("server")), "{down}");
    let ev = down["evidence"][0].as_str().unwrap();
    assert!(ev.starts_with(&format!("tbf on {b} (server) shapes what the server sends")), "{ev}");
    let fix = down["fix"][0].as_str().unwrap();
    assert_eq!(fix, format!("on the server: see it: tc qdisc show dev {b}"));
    assert!(text.contains("  download server→client: shaper (server)\n"), "{text}");
    assert!(text.contains(&format!("      fix: {fix}\n")), "{text}");
    // The upload is not shaped: its verdict is not the server's shaper.
    assert!(text.contains("  upload client→server: ") && !text.contains("  upload client→server: shaper"), "{text}");
    // Independent count: the download's bytes went through the server's tbf.
    let q: Value =
        serde_json::from_slice(&lab.exec(Side::B, &["tc", "-s", "-j", "qdisc", "show", "dev", b]).stdout).unwrap();
    let sent = q.as_array().and_then(|a| a.iter().find(|q| q["kind"] == "tbf")).map(|t| t["bytes"].as_u64().unwrap());
    let bps = doc["phases"][1]["download_bps"].as_f64().unwrap();
    assert_eq!(doc["phases"][1]["phase"], "download");
    assert!(bps <= 300e6 * 1.02, "{bps}");
    let moved = (bps * 2.0 / 8.0) as u64;
    assert!(sent.unwrap() >= moved * 9 / 10, "the tbf sent {sent:?} bytes, the download moved about {moved}");
}
