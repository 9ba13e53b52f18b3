//! The far host's doctor: a wireperf server tells a client that asks (the suite, `--why`) its
//! doctor's findings and link facts, and with `--no-share-host` nothing. The server here reads
//! its host from the committed RTL8156B-on-`cdc_ncm` fixture (`--host-root`): a Pi with a
//! USB dongle bound to the generic driver, standing behind a veth in the namespace lab.

#![allow(clippy::unwrap_used)]

use crate::harness::*;
use crate::lab::{LAB_PORT, Lab, LabConfig, Side};
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
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("suite.json");
    let port = LAB_PORT.to_string();
    let srv = lab.start_server(Side::B, &wireperf(), server_args);
    let a = ["suite", lab.addr(Side::B), "-p", &port, "-t", "2", "--no-latency", "--no-save"];
    let out = lab.run(Side::A, &wireperf(), &[&a[..], &["--json-file", json.to_str().unwrap()]].concat());
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
    let (doc, text) = suite(&lab, &host_root);
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
