//! `wireperf suite --repeat/--warmup/--confidence` and its gates (`--expect-min`,
//! `--expect-max-loaded-latency`, `--junit`): the statistics a user reads, the JSON a script
//! reads, the exit codes and a JUnit file that parses.

#![allow(clippy::unwrap_used)]

use crate::harness::*;
use crate::lab::{LAB_PORT, Lab, LabConfig, Side};
use serde_json::Value;

/// A series of three rounds on loopback, the first a warm-up; the download gate cannot be met
/// (100 Tbit/s), the upload gate always is: exit 1, the reason on stderr, the JUnit file with
/// one passing and one failing case.
#[test]
fn a_series_with_a_missed_gate_exits_1_and_writes_junit() {
    let server = start_server(&wireperf(), &[]);
    let port = server.port.to_string();
    let dir = tempfile::tempdir().unwrap();
    let (junit, json) = (dir.path().join("gates.xml"), dir.path().join("series.json"));
    let out = run_client(
        &wireperf(),
        &[
            "suite",
            "127.0.0.1",
            "-p",
            &port,
            "-t",
            "1",
            "--no-latency",
            "--no-save",
            "--repeat",
            "3",
            "--warmup",
            "1",
            "--expect-min",
            "up=1K,down=100T",
            "--junit",
            junit.to_str().unwrap(),
            "--json-file",
            json.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("wireperf suite: gate expect-min download: download ")
            && err.contains("below the expected 100 Tbit/s"),
        "{err}"
    );
    let text = String::from_utf8_lossy(&out.stdout);
    for needle in [
        "round  1: upload ",
        "(warm-up, not counted)\n",
        "round  3: ",
        "statistics over 2 rounds (1 warm-up round left out), 95% confidence interval of the mean:\n",
        "the last round in full:\n",
        "  [met] expect-min upload: upload ",
        "  [MISSED] expect-min download: download ",
    ] {
        assert!(text.contains(needle), "missing {needle:?} in\n{text}");
    }
    let up = text.lines().find(|l| l.starts_with("  upload    upload ")).unwrap_or_else(|| panic!("{text}"));
    assert!(up.contains(" - ") && up.contains("] ±"), "median, mean, stdev, min-max and the interval: {up}");
    // The JSON: every round, the warm-up count, statistics over the counted two.
    let v: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(v["rounds"].as_array().unwrap().len(), 3);
    assert_eq!(v["warmup"], 1);
    let st = v["statistics"].as_array().unwrap();
    assert_eq!(st.len(), 4, "upload, download, bidir up and down: {st:?}");
    let up = &st[0]["throughput_bps"];
    assert_eq!(up["n"], 2);
    let counted: Vec<f64> =
        v["rounds"].as_array().unwrap()[1..].iter().map(|r| r["phases"][0]["upload_bps"].as_f64().unwrap()).collect();
    assert!((up["mean"].as_f64().unwrap() - (counted[0] + counted[1]) / 2.0).abs() < 1.0, "{up} vs {counted:?}");
    let gates: Vec<(&str, &str)> = v["gates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| (g["name"].as_str().unwrap(), g["status"].as_str().unwrap()))
        .collect();
    assert_eq!(gates, [("expect-min upload", "met"), ("expect-min download", "missed")]);
    // The JUnit file parses with Python's xml module: two cases, one failure.
    let py = "import sys, xml.etree.ElementTree as E\nt = E.parse(sys.argv[1])\n\
              print(';'.join(c.get('name') + '=' + ('fail' if c.find('failure') is not None else 'pass') for c in t.iter('testcase')))";
    let parsed = std::process::Command::new("python3").args(["-c", py, junit.to_str().unwrap()]).output().unwrap();
    assert!(parsed.status.success(), "{}", String::from_utf8_lossy(&parsed.stderr));
    assert_eq!(String::from_utf8_lossy(&parsed.stdout).trim(), "expect-min upload=pass;expect-min download=fail");
}

/// One suite with gates that hold: exit 0; a gate whose figure is missing: exit 2.
#[test]
fn gates_met_exit_0_and_a_failed_phase_exits_2() {
    let server = start_server(&wireperf(), &[]);
    let port = server.port.to_string();
    let ok = run_client(
        &wireperf(),
        &[
            "suite",
            "127.0.0.1",
            "-p",
            &port,
            "-t",
            "1",
            "--no-save",
            "--expect-min",
            "1K",
            "--expect-max-loaded-latency",
            "1000",
        ],
    );
    assert_eq!(ok.status.code(), Some(0), "{}", String::from_utf8_lossy(&ok.stderr));
    let text = String::from_utf8_lossy(&ok.stdout);
    assert!(text.contains("  [met] expect-max-loaded-latency bidir: bidir loaded latency "), "{text}");
    drop(server);
    // Nothing listens on this port any more: no phase runs, the gates cannot be judged.
    let dead = run_client(
        &wireperf(),
        &["suite", "127.0.0.1", "-p", &port, "-t", "1", "--no-save", "--no-latency", "--expect-min", "1K"],
    );
    assert_eq!(dead.status.code(), Some(2), "{}", String::from_utf8_lossy(&dead.stderr));
    // Refused while reading the flags, with exit status 1 as every flag error of wireperf
    // (before anything ran; stderr names the flag).
    for (args, needle) in [
        (&["--warmup", "1"][..], "--warmup 1 leaves no round"),
        (&["--repeat", "0"][..], "1 to 100"),
        (&["--confidence", "95"][..], "LEVEL,WIDTH"),
        (&["--expect-min", "sideways=1G"][..], "up=RATE"),
        (&["--no-latency", "--expect-max-loaded-latency", "5"][..], "--no-latency"),
    ] {
        let out = run_client(&wireperf(), &[&["suite", "127.0.0.1", "-p", &port, "--no-save"][..], args].concat());
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}

/// `--confidence`: on loopback a 99.9 % interval within ±0.0005 % is out of reach, so the
/// series runs to its cap and says so.
#[test]
fn confidence_out_of_reach_runs_to_the_cap_and_says_so() {
    let server = start_server(&wireperf(), &[]);
    let port = server.port.to_string();
    let out = run_client(
        &wireperf(),
        &[
            "suite",
            "127.0.0.1",
            "-p",
            &port,
            "-t",
            "1",
            "--no-save",
            "--no-latency",
            "--json",
            "--confidence",
            "99.9,0.001",
            "--repeat",
            "3",
        ],
    );
    assert_ok(&out);
    let v = json_of(&out);
    assert_eq!(v["rounds"].as_array().unwrap().len(), 3, "the cap");
    assert_eq!(v["confidence"]["met"], false);
    assert_eq!(v["confidence"]["counted_rounds"], 3);
}

/// A steady path (both directions shaped to 200 Mbit/s in the namespace lab, Reno senders)
/// meets a ±10 % target after the three rounds a confidence needs at least, and stops there
/// although the cap is 6; the text says it was reached.
#[test]
fn lab_confidence_on_a_steady_path_stops_early() {
    let lab = Lab::new(LabConfig { rate: Some("200mbit"), rate_b: Some("200mbit"), ..Default::default() });
    let server = lab.start_server(Side::B, &wireperf(), &[]);
    let port = LAB_PORT.to_string();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("s.json");
    let out = lab.run(
        Side::A,
        &wireperf(),
        &[
            "suite",
            lab.addr(Side::B),
            "-p",
            &port,
            "-t",
            "1",
            "-C",
            "reno",
            "--no-latency",
            "--no-save",
            "--confidence",
            "95,20",
            "--repeat",
            "6",
            "--json-file",
            json.to_str().unwrap(),
        ],
    );
    let _ = server.finish(std::time::Duration::from_secs(1));
    assert_ok(&out);
    let v: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(v["confidence"]["met"], true, "{}\n{text}", v["confidence"]);
    assert_eq!(v["rounds"].as_array().unwrap().len(), 3, "{text}");
    assert!(
        text.contains("confidence: every direction's 95% interval within ±10% of its mean after 3 counted rounds"),
        "{text}"
    );
    // The interval holds what the shaper lets through (TCP goodput at MTU 1500: 191 Mbit/s).
    let up = &v["statistics"][0]["throughput_bps"];
    let (lo, hi) = (up["ci"][0].as_f64().unwrap(), up["ci"][1].as_f64().unwrap());
    assert!(lo <= 200e6 && hi >= 150e6, "[{lo}, {hi}]");
}

/// Two saved series of two rounds each, then `history compare` with the rounds as its sides:
/// a "Beyond noise?" block with one sentence per direction, each a Welch verdict (two runs a
/// side give an interval and a p-value), not the single-run advice.
#[test]
fn history_compare_of_two_saved_series_judges_each_direction() {
    let server = start_server(&wireperf(), &[]);
    let port = server.port.to_string();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.sqlite");
    let db = db.to_str().unwrap();
    let series = || {
        let out = run_client(
            &wireperf(),
            &["suite", "127.0.0.1", "-p", &port, "-t", "1", "--no-latency", "--db", db, "--json", "--repeat", "2"],
        );
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        let ids: Vec<String> = v["saved_runs"].as_array().unwrap().iter().map(|i| i.to_string()).collect();
        assert_eq!(ids.len(), 2, "{v}");
        ids.join(",")
    };
    let (a, b) = (series(), series());
    let out = run_client(&wireperf(), &["history", "--db", db, "compare", &a, &b]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    let block = text.split("Beyond noise? (goodput, 95 % confidence, Welch's t-test)\n").nth(1).expect(&text);
    let lines: Vec<&str> = block.lines().take_while(|l| l.starts_with("  ")).collect();
    for dir in ["upload", "download", "bidir upload", "bidir download"] {
        let line = lines
            .iter()
            .find(|l| l.trim_start().starts_with(&format!("{dir} ")) || l.trim_start().starts_with(&format!("{dir}:")));
        let line = line.unwrap_or_else(|| panic!("no {dir} line in {text}"));
        assert!(
            line.contains(" faster by ")
                || line.contains(" slower by ")
                || line.contains(": no significant change (p = "),
            "{line}"
        );
        assert!(line.contains("p "), "{line}");
    }
    let json = run_client(&wireperf(), &["history", "--db", db, "--json", "compare", &a, &b]);
    let v: Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(v["significance"]["directions"].as_array().unwrap().len(), 4, "{v}");
    assert_eq!(v["significance"]["directions"][0]["a"]["n"], 2, "{v}");
}
