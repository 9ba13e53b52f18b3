//! `wireperf -c HOST --repeat N [--warmup K] [--confidence LEVEL,WIDTH]`: a series of client
//! tests on loopback, its text and -J document, its flag errors, and how it stops.

#![allow(clippy::unwrap_used)]

use crate::support::harness::*;
use serde_json::Value;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// `-c 127.0.0.1 -p PORT -t 1 --no-save` and `extra`.
fn client_args<'a>(port: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    [&["-c", "127.0.0.1", "-p", port, "-t", "1", "--no-save"][..], extra].concat()
}

/// Each test printed as a single one is, a line before each, the warm-up marked, then the
/// statistics over the counted two with median, mean, stdev, min-max and the interval.
#[test]
fn client_repeat_text_counts_tests_marks_the_warm_up_and_prints_statistics() {
    let server = start_server(&wireperf(), &[]);
    let port = server.port.to_string();
    let out = run_client(&wireperf(), &client_args(&port, &["--repeat", "3", "--warmup", "1"]));
    assert_ok(&out);
    let text = String::from_utf8_lossy(&out.stdout);
    for needle in [
        "test 1 of 3 (warm-up, not counted)\nConnecting to host 127.0.0.1, port ",
        "\n\ntest 2 of 3\nConnecting to host",
        "\n\ntest 3 of 3\nConnecting to host",
        "\nstatistics over 2 tests (1 warm-up test left out), 95% confidence interval of the mean:\n",
        "  direction         median           mean          stdev                       min - max  confidence interval\n",
    ] {
        assert!(text.contains(needle), "missing {needle:?} in\n{text}");
    }
    assert_eq!(text.matches("iperf Done.\n").count(), 3, "{text}");
    assert_eq!(text.matches("(warm-up, not counted)").count(), 1, "{text}");
    let row = text.lines().find(|l| l.starts_with("  upload ")).unwrap_or_else(|| panic!("no upload row in\n{text}"));
    assert_eq!(row.matches("bit/s").count(), 7, "median, mean, stdev, min, max, interval ends: {row}");
    assert!(row.contains(" - ") && row.contains("] ±") && row.ends_with('%'), "{row}");
    assert!(text.contains("            retransmits median "), "{text}");
    assert!(!text.contains("download"), "an upload test has one direction: {text}");
    assert!(!text.contains("saved as"), "--no-save: {text}");
}

/// -J: one document with every run's own iperf3 document, the warm-up count and statistics
/// over the counted runs; the throughput figure is each run's `end.sum_received`. Each run is
/// saved as the run it is, then the three grouped as one history series.
#[test]
fn client_repeat_json_has_every_run_and_statistics_of_the_counted() {
    let server = start_server(&wireperf(), &[]);
    let port = server.port.to_string();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.sqlite");
    let args = ["-c", "127.0.0.1", "-p", &port, "-t", "1", "-J", "--repeat", "3", "--warmup", "1"];
    let out = run_client(&wireperf(), &[&args[..], &["--db", db.to_str().unwrap()]].concat());
    assert_ok(&out);
    let v = json_of(&out);
    let runs = v["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 3);
    let received: Vec<f64> =
        runs.iter().map(|r| r.pointer("/end/sum_received/bits_per_second").unwrap().as_f64().unwrap()).collect();
    assert!(runs.iter().all(|r| r["start"]["test_start"]["duration"] == 1), "each run is a whole -J document");
    assert_eq!(v["warmup"], 1);
    let st = v["statistics"].as_array().unwrap();
    assert_eq!(st.len(), 1, "{st:?}");
    assert_eq!((st[0]["phase"].as_str(), st[0]["direction"].as_str()), (Some("upload"), Some("upload")));
    let t = &st[0]["throughput_bps"];
    assert_eq!(t["n"], 2);
    let want = (received[1] + received[2]) / 2.0;
    assert!((t["mean"].as_f64().unwrap() - want).abs() < 1.0, "{t} vs {received:?}");
    assert_eq!(t["ci"].as_array().map(Vec::len), Some(2));
    assert_eq!(st[0]["retransmits"]["n"], 2);
    assert_eq!((v["confidence"].clone(), v["interrupted"].clone()), (Value::Null, Value::Bool(false)));
    let saved: Vec<i64> = v["saved_runs"].as_array().unwrap().iter().map(|i| i.as_i64().unwrap()).collect();
    assert_eq!(saved.len(), 3, "{v}");
    // The history keeps them as one series: one line with the mean, the tests as its rounds.
    let head = v["saved_series"].as_i64().unwrap_or_else(|| panic!("no saved_series in {v}"));
    let list = run_client(&wireperf(), &["history", "--db", db.to_str().unwrap(), "list"]);
    assert_ok(&list);
    let listed = String::from_utf8_lossy(&list.stdout);
    assert_eq!(listed.lines().count(), 2, "a header and the series: {listed}");
    assert!(listed.contains("series of 3") && listed.contains("means: upload "), "{listed}");
    let show = run_client(&wireperf(), &["history", "--db", db.to_str().unwrap(), "show", &head.to_string()]);
    let shown = String::from_utf8_lossy(&show.stdout);
    let rounds = format!("3 rounds (runs {}-{}, the first a warm-up left out)", saved[0], saved[2]);
    assert!(shown.contains(&rounds), "{shown}");
    let row = shown.lines().find(|l| l.starts_with("  upload ")).unwrap_or_else(|| panic!("{shown}"));
    assert_eq!(row.split_whitespace().nth(1), Some("2"), "two counted tests: {row}");
}

/// Without --repeat the -J output is iperf3's document, as before.
#[test]
fn client_repeat_absent_leaves_the_json_document_alone() {
    let server = start_server(&wireperf(), &[]);
    let port = server.port.to_string();
    let v = json_of(&run_client(&wireperf(), &client_args(&port, &["-J"])));
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys, ["start", "intervals", "end"]);
}

/// -R: the one direction is the download.
#[test]
fn client_repeat_reverse_labels_the_direction_download() {
    let server = start_server(&wireperf(), &[]);
    let port = server.port.to_string();
    let out = run_client(&wireperf(), &client_args(&port, &["-R", "--repeat", "2"]));
    assert_ok(&out);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("statistics over 2 tests, 95% confidence interval of the mean:\n"), "{text}");
    assert!(text.lines().any(|l| l.starts_with("  download ") && l.contains("] ±")), "{text}");
    assert!(!text.lines().any(|l| l.starts_with("  upload ")), "{text}");
}

/// Flag errors: exit 1 before anything runs, stderr naming the flag.
#[test]
fn client_repeat_flag_errors_exit_1_naming_the_flag() {
    let port = free_port().to_string();
    let c = ["-c", "127.0.0.1", "-p", &port];
    for (args, needles) in [
        (&[&c[..], &["--repeat", "0"]].concat(), &["--repeat", "1 to 100"][..]),
        (&[&c[..], &["--warmup", "2", "--repeat", "2"]].concat(), &["--warmup 2 leaves no test of 2 to count"]),
        (&[&c[..], &["--confidence", "95"]].concat(), &["--confidence", "LEVEL,WIDTH"]),
        (&[&c[..], &["--repeat", "2", "--json-stream"]].concat(), &["--repeat cannot be combined with --json-stream"]),
        (&vec!["-s", "--repeat", "3"], &["--repeat is a client option"]),
    ] {
        let out = run_client(&wireperf(), args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(needles.iter().all(|n| err.contains(n)), "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?}: nothing ran");
    }
}

/// A 99.9 % interval within ±0.0005 % is out of reach on loopback: the series runs to its
/// cap and says so, in the text and in the JSON.
#[test]
fn client_repeat_confidence_out_of_reach_runs_to_the_cap_and_says_so() {
    let server = start_server(&wireperf(), &[]);
    let port = server.port.to_string();
    let out = run_client(&wireperf(), &client_args(&port, &["--confidence", "99.9,0.001", "--repeat", "3"]));
    assert_ok(&out);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("test 3 of at most 3\n"), "{text}");
    assert!(
        text.contains(
            "confidence: NOT reached: not every 99.9% interval within ±0.0005% of its mean after 3 counted tests, \
             the cap; the widest: upload ±"
        ),
        "{text}"
    );
    assert!(text.contains("statistics over 3 tests, 99.9% confidence interval of the mean:\n"), "{text}");
    let json = run_client(&wireperf(), &client_args(&port, &["-J", "--confidence", "99.9,0.001", "--repeat", "3"]));
    assert_ok(&json);
    let v = json_of(&json);
    assert_eq!(v["runs"].as_array().unwrap().len(), 3, "the cap");
    assert_eq!((v["confidence"]["met"].clone(), v["confidence"]["counted_rounds"].clone()), (false.into(), 3.into()));
    assert_eq!(v["confidence"]["widest"][0], "upload");
}

/// A test that fails ends the series with its error and status: a one-off server takes the
/// first test only, the second finds nobody listening.
#[test]
fn client_repeat_a_failed_test_stops_the_series_with_its_status() {
    let server = start_server(&wireperf(), &["-1"]);
    let port = server.port.to_string();
    let out = run_client(&wireperf(), &client_args(&port, &["--repeat", "3"]));
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("wireperf: error - "), "the usual error: {err}");
    assert!(text.contains("test 2 of 3\n") && !text.contains("test 3 of 3"), "{text}");
    assert!(
        text.contains("no statistics: 1 counted test completed before the series stopped, fewer than 2\n"),
        "{text}"
    );
    assert!(text.contains("stopped: test 2 of 3 failed; no further test was run\n"), "{text}");
}

/// Ctrl-C during test 2 ends that test as it ends a single one (its summary, the interrupt
/// line, status 1) and starts no further test.
#[test]
fn client_repeat_ctrl_c_ends_the_current_test_and_the_series() {
    let server = start_server(&wireperf(), &[]);
    let port = server.port.to_string();
    let mut child = Command::new(wireperf())
        .env("WIREPERF_DB", TEST_DB)
        .args(["-c", "127.0.0.1", "-p", &port, "-t", "3", "--no-save", "--repeat", "3"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (stdout, stderr) = (collect(child.stdout.take()), collect(child.stderr.take()));
    let text = || String::from_utf8_lossy(&stdout.lock().unwrap()).into_owned();
    let deadline = Instant::now() + Duration::from_secs(20);
    // An interval line of test 2: its test runs.
    while !text().split("test 2 of 3\n").nth(1).is_some_and(|t| t.contains(" sec ")) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let pid = child.id().to_string();
    assert!(Command::new("kill").args(["-INT", &pid]).status().unwrap().success());
    let status = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        assert!(Instant::now() < deadline, "no exit after Ctrl-C:\n{}", text());
        std::thread::sleep(Duration::from_millis(20));
    };
    await_eof(&[&stdout, &stderr]);
    let (out, err) = (text(), String::from_utf8_lossy(&stderr.lock().unwrap()).into_owned());
    assert_eq!(status.code(), Some(1), "{out}\n{err}");
    assert!(err.contains("wireperf: interrupt - the client has terminated"), "{err}");
    assert!(!out.contains("test 3 of 3"), "{out}");
    assert!(out.contains("interrupted after 2 tests; no further test was run\n"), "{out}");
}
