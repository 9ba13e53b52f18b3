//! `wireperf report`: real runs (wireperf against wireperf, and a stock iperf3 run imported
//! from its `-J` file) drawn from the history database as HTML and SVG files.

use std::path::Path;
use std::process::Output;

use serde_json::Value;

use crate::support::harness::{assert_ok, iperf3, json_of, run_client, start_server, wireperf};

const SERIES_PATH: &str = "<path class=\"series\"";

fn with_db(db: &Path, args: &[&str]) -> Output {
    let mut all: Vec<&str> = args.to_vec();
    all.extend_from_slice(&["--db", db.to_str().unwrap()]);
    run_client(&wireperf(), &all)
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Run ids in the database, oldest first.
fn ids(db: &Path) -> Vec<String> {
    let list = json_of(&with_db(db, &["history", "list", "--json"]));
    list.as_array().unwrap().iter().map(|r| r["id"].as_i64().unwrap().to_string()).collect()
}

/// A 1-second wireperf upload against a fresh wireperf server, saved into `db`.
fn wireperf_upload(db: &Path, streams: &str) {
    let server = start_server(&wireperf(), &["-1"]);
    let port = server.port.to_string();
    let out = with_db(db, &["-c", "127.0.0.1", "-p", &port, "-t", "1", "-P", streams, "-i", "0.25"]);
    assert_ok(&out);
}

fn svg_files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    names
}

#[test]
fn two_real_runs_make_a_report_with_a_comparison_and_svg_charts() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.sqlite");
    wireperf_upload(&db, "2");
    wireperf_upload(&db, "1");
    let ids = ids(&db);
    assert_eq!(ids.len(), 2);
    let html_path = dir.path().join("report.html");
    let svg_dir = dir.path().join("charts");
    let out = with_db(
        &db,
        &["report", &ids[0], &ids[1], "--html", html_path.to_str().unwrap(), "--svg", svg_dir.to_str().unwrap()],
    );
    assert_ok(&out);
    assert!(stderr(&out).contains("wrote"), "{}", stderr(&out));

    let html = std::fs::read_to_string(&html_path).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(html.contains(&format!("<h2>Run {}", ids[0])));
    assert!(html.contains(&format!("<h2>Run {}", ids[1])));
    assert!(html.contains("id=\"comparison\""));
    assert!(!html.contains("https://"));

    let (a, b) = (&ids[0], &ids[1]);
    let want = [
        "compare-upload-throughput.svg".to_string(),
        format!("run-{a}-upload-cwnd.svg"),
        format!("run-{a}-upload-retransmits.svg"),
        format!("run-{a}-upload-throughput.svg"),
        format!("run-{b}-upload-cwnd.svg"),
        format!("run-{b}-upload-retransmits.svg"),
        format!("run-{b}-upload-throughput.svg"),
    ];
    assert_eq!(svg_files(&svg_dir), want);
    let read = |name: &str| std::fs::read_to_string(svg_dir.join(name)).unwrap();
    // Two streams and their sum; one stream is its own sum; one line per run.
    assert_eq!(read(&want[3]).matches(SERIES_PATH).count(), 3);
    assert_eq!(read(&want[6]).matches(SERIES_PATH).count(), 1);
    assert_eq!(read(&want[0]).matches(SERIES_PATH).count(), 2);
    assert_eq!(read(&want[2]).matches("data-kind=\"bar\"").count(), 2);
    // The page holds exactly these charts.
    let total: usize = want.iter().map(|n| read(n).matches(SERIES_PATH).count()).sum();
    assert_eq!(html.matches(SERIES_PATH).count(), total);
    for name in &want {
        assert!(read(name).starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""), "{name}");
    }
}

#[test]
fn an_imported_iperf3_run_is_drawn_too() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.sqlite");
    let server = start_server(&iperf3(), &["-1"]);
    let port = server.port.to_string();
    let out = run_client(&iperf3(), &["-c", "127.0.0.1", "-p", &port, "-t", "1", "-P", "2", "-J"]);
    assert_ok(&out);
    let j: Value = json_of(&out);
    let file = dir.path().join("iperf3.json");
    std::fs::write(&file, &out.stdout).unwrap();
    assert_ok(&with_db(&db, &["history", "import", file.to_str().unwrap()]));
    let id = ids(&db).pop().unwrap();

    let out = with_db(&db, &["report", &id, "--html", "-"]);
    assert_ok(&out);
    let html = String::from_utf8(out.stdout).unwrap();
    assert!(html.contains("iperf 3.12"), "the page names the software that ran");
    assert!(!html.contains("id=\"comparison\""));
    // Throughput (2 streams + sum), retransmits and cwnd (2 streams each).
    assert_eq!(html.matches(SERIES_PATH).count(), 7);
    // The summary shows iperf3's own receiver figure.
    let bps = j["end"]["sum_received"]["bits_per_second"].as_f64().unwrap();
    let shown = wireperf_protocol::outcome::words::rate(bps);
    assert!(html.contains(&shown), "{shown} not in the summary");
}

#[test]
fn report_errors_are_clear() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.sqlite");
    let out = with_db(&db, &["report", "999", "--html", dir.path().join("x.html").to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("no run with id 999"), "{}", stderr(&out));
    assert!(!dir.path().join("x.html").exists());

    let out = with_db(&db, &["report", "1"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("--html"), "{}", stderr(&out));
}
