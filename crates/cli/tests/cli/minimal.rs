//! The small build (`cargo build --no-default-features`): what it leaves out says so clearly,
//! and the iperf3 client/server and the doctor work. Compiled only into a build without the
//! suite or the exporter (scripts/test runs it).

use crate::support::harness::{one_shot_json, run_client, wireperf};
use std::process::Command;

#[test]
fn left_out_subcommands_name_their_feature() {
    for (sub, feature) in [("suite", "suite"), ("selftest", "suite"), ("history", "history"), ("exporter", "exporter")]
    {
        let out = Command::new(wireperf()).args([sub, "--help"]).output().expect("run wireperf");
        let err = String::from_utf8_lossy(&out.stderr);
        let built = match feature {
            "suite" => cfg!(feature = "suite"),
            "history" => cfg!(feature = "history"),
            _ => cfg!(feature = "exporter"),
        };
        if built {
            assert!(out.status.success(), "{sub} --help: {err}");
        } else {
            assert_eq!(out.status.code(), Some(1), "{sub}: {err}");
            assert!(err.contains(&format!("cargo feature `{feature}`")), "{sub}: {err}");
        }
    }
}

#[cfg(not(feature = "exporter"))]
#[test]
fn server_metrics_without_the_exporter_is_refused_at_start() {
    let out = Command::new(wireperf()).args(["-s", "-p", "1", "--metrics", "127.0.0.1:0", "-1"]).output().expect("run");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("cargo feature `exporter`"), "{err}");
}

#[test]
fn the_small_build_still_tests_tcp_both_ways_and_runs_the_doctor() {
    let w = wireperf();
    let doc = one_shot_json(&w, &w, &["-t", "1", "--no-save"]);
    let received = doc.pointer("/end/sum_received/bytes").and_then(|b| b.as_u64()).unwrap_or(0);
    assert!(received > 0, "{}", doc["end"]);
    let out = run_client(&w, &["doctor", "lo", "--json", "--no-kernel-log"]);
    // 0–2 is the worst finding's level; 3 would be an error.
    assert!(matches!(out.status.code(), Some(0..=2)), "{out:?}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("doctor json");
    assert_eq!(v["interfaces"][0]["name"], "lo");
}
