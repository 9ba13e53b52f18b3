//! `wireperf history` and the saving of client runs, end to end through the binary.

use std::path::Path;
use std::process::Output;

use serde_json::Value;

use crate::support::harness::{assert_ok, iperf3, json_of, run_client, start_server, wireperf};

/// `wireperf history ARGS --db DB`.
fn history(db: &Path, args: &[&str]) -> Output {
    let mut all: Vec<&str> = vec!["history"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--db", db.to_str().unwrap()]);
    run_client(&wireperf(), &all)
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Runs a 1-second client against a fresh wireperf server, saving into `db`; returns its -J.
fn client_run(db: &Path, extra: &[&str]) -> Value {
    let server = start_server(&wireperf(), &["-1"]);
    let port = server.port.to_string();
    let mut args = vec!["-c", "127.0.0.1", "-p", &port, "-t", "1", "-J", "--db", db.to_str().unwrap()];
    args.extend_from_slice(extra);
    let out = run_client(&wireperf(), &args);
    assert_ok(&out);
    assert!(out.stderr.is_empty(), "saving must not print: {}", String::from_utf8_lossy(&out.stderr));
    json_of(&out)
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(1.0)
}

#[test]
fn a_client_run_is_saved_and_listed_with_its_numbers() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.sqlite");
    let j = client_run(&db, &[]);
    let list = json_of(&history(&db, &["list", "--json"]));
    let runs = list.as_array().unwrap();
    assert_eq!(runs.len(), 1, "{list}");
    let run = &runs[0];
    assert_eq!(run["kind"], "client");
    assert_eq!(run["phases"], serde_json::json!(["upload"]));
    assert_eq!(run["remote_host"], "127.0.0.1");
    let want = j["end"]["sum_received"]["bits_per_second"].as_f64().unwrap();
    assert!(close(run["received_bps"].as_f64().unwrap(), want), "{run} vs {want}");

    let id = run["id"].as_i64().unwrap().to_string();
    let show = json_of(&history(&db, &["show", &id, "--json"]));
    let cmd = show["command_line"].as_str().unwrap();
    assert!(cmd.starts_with("wireperf -c 127.0.0.1 -p ") && cmd.contains("--db"), "{cmd}");
    let phase = &show["phase_details"][0];
    assert_eq!(phase["report"]["end"]["sum_sent"]["bytes"], j["end"]["sum_sent"]["bytes"]);
    assert_eq!(
        phase["intervals"].as_array().unwrap().iter().filter(|r| r["stream"].is_null()).count(),
        j["intervals"].as_array().unwrap().len()
    );
    // Text list: one header line and one run line with its id.
    let text = stdout(&history(&db, &[]));
    assert!(text.lines().nth(1).unwrap().trim_start().starts_with(&id), "{text}");
}

#[test]
fn no_save_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.sqlite");
    let server = start_server(&wireperf(), &["-1"]);
    let port = server.port.to_string();
    let out = run_client(
        &wireperf(),
        &["-c", "127.0.0.1", "-p", &port, "-t", "1", "--no-save", "--db", db.to_str().unwrap()],
    );
    assert_ok(&out);
    assert!(!db.exists(), "--no-save must not even create the database");
}

#[test]
fn a_save_failure_warns_but_keeps_the_result_and_status() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("not-a-db.sqlite");
    std::fs::write(&db, b"this is not SQLite").unwrap();
    let server = start_server(&wireperf(), &["-1"]);
    let port = server.port.to_string();
    let out = run_client(&wireperf(), &["-c", "127.0.0.1", "-p", &port, "-t", "1", "-J", "--db", db.to_str().unwrap()]);
    assert_ok(&out);
    json_of(&out);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("wireperf: warning - run not saved to history:") && err.contains("untouched"), "{err}");
    assert_eq!(std::fs::read(&db).unwrap(), b"this is not SQLite");
    let list = history(&db, &["list"]);
    assert_eq!(list.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&list.stderr).contains("history error - "), "{list:?}");
}

#[test]
fn compare_prints_both_runs_side_by_side() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.sqlite");
    client_run(&db, &[]);
    client_run(&db, &["-R"]);
    client_run(&db, &[]);
    let runs = json_of(&history(&db, &["list", "--json"]));
    let (a, b) = (&runs[0], &runs[2]);
    let out = history(&db, &["compare", &a["id"].to_string(), &b["id"].to_string()]);
    assert_ok(&out);
    let text = stdout(&out);
    let ra = a["received_bps"].as_f64().unwrap();
    let rb = b["received_bps"].as_f64().unwrap();
    let change = format!("{:+.1}%", (rb - ra) / ra * 100.0);
    let line = text.lines().find(|l| l.contains("goodput (receiver)")).unwrap_or_else(|| panic!("{text}"));
    assert!(line.starts_with("upload") && line.trim_end().ends_with(&change), "{line}\n{text}");
    assert!(text.contains("A: run 1 (client,") && text.contains("B: run 3 (client,"), "{text}");
    assert!(text.contains("Link changes\n  no doctor snapshot with either run"), "{text}");

    // Upload vs download: phases that do not match are named.
    let mixed = stdout(&history(&db, &["compare", "1", "2"]));
    assert!(mixed.contains("(upload only in A; download only in B)"), "{mixed}");
    let j = json_of(&history(&db, &["compare", "1", "3", "--json"]));
    assert_eq!(j["phases"][0]["metrics"][0]["metric"], "received_bps");
}

#[test]
fn import_stores_a_real_iperf3_file() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.sqlite");
    let server = start_server(&iperf3(), &["-1"]);
    let out = run_client(&iperf3(), &["-c", "127.0.0.1", "-p", &server.port.to_string(), "-t", "1", "-J"]);
    assert_ok(&out);
    let file = dir.path().join("iperf3.json");
    std::fs::write(&file, &out.stdout).unwrap();
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, "iperf3: error - unable to connect").unwrap();

    let imp = history(&db, &["import", file.to_str().unwrap(), bad.to_str().unwrap(), "--label", "stock"]);
    assert_eq!(imp.status.code(), Some(1), "one bad file fails the command");
    assert_eq!(stdout(&imp), format!("imported {} as run 1\n", file.display()));
    assert!(String::from_utf8_lossy(&imp.stderr).contains("bad.json: not JSON"), "{imp:?}");

    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let show = json_of(&history(&db, &["show", "1", "--json"]));
    assert_eq!(show["kind"], "import");
    assert_eq!(show["label"], "stock");
    assert_eq!(show["phase_details"][0]["report"], doc, "the document comes back exactly");
    assert_eq!(show["received_bps"], doc["end"]["sum_received"]["bits_per_second"]);
    let export = dir.path().join("export.json");
    assert_ok(&history(&db, &["export", "-o", export.to_str().unwrap()]));
    let e: Value = serde_json::from_slice(&std::fs::read(&export).unwrap()).unwrap();
    assert_eq!(e["runs"][0]["phase_details"][0]["report"], doc);

    assert_ok(&history(&db, &["delete", "1"]));
    assert_eq!(json_of(&history(&db, &["list", "--json"])), serde_json::json!([]));
    assert_eq!(history(&db, &["show", "1"]).status.code(), Some(1));
}

/// Two `--latency` runs: history keeps each run's latency figures and `compare` lists them.
#[test]
fn latency_figures_are_stored_and_compared() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.sqlite");
    let a = client_run(&db, &["--latency", "--latency-interval", "50"]);
    let b = client_run(&db, &["--latency", "--latency-interval", "50"]);
    for j in [&a, &b] {
        assert!(j["wireperf_latency"]["loaded_ms"]["p50"].is_f64(), "{j}");
    }
    let list = json_of(&history(&db, &["list", "--json"]));
    let mut ids: Vec<i64> = list.as_array().unwrap().iter().map(|r| r["id"].as_i64().unwrap()).collect();
    ids.sort_unstable();
    assert_eq!(ids.len(), 2);
    let (first, second) = (&ids[0].to_string(), &ids[1].to_string());
    let cmp = json_of(&history(&db, &["compare", first, second, "--json"]));
    let metrics = cmp["phases"][0]["metrics"].as_array().unwrap();
    let get = |k: &str| metrics.iter().find(|m| m["metric"] == k).unwrap_or_else(|| panic!("no {k} in {cmp}")).clone();
    let p50 = get("latency_loaded_p50_ms");
    assert_eq!(p50["a"].as_f64(), a["wireperf_latency"]["loaded_ms"]["p50"].as_f64(), "{p50}");
    assert_eq!(p50["b"].as_f64(), b["wireperf_latency"]["loaded_ms"]["p50"].as_f64(), "{p50}");
    assert_eq!(get("latency_rpm")["b"].as_f64(), b["wireperf_latency"]["rpm"].as_f64());
    let text = stdout(&history(&db, &["compare", first, second]));
    assert!(text.contains("RTT loaded p50") && text.contains("responsiveness (RPM)"), "{text}");
}
