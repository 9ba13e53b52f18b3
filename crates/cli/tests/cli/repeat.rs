//! `wireperf suite --repeat/--warmup/--confidence` and its gates (`--expect-min`,
//! `--expect-max-loaded-latency`, `--junit`): the statistics a user reads, the JSON a script
//! reads, the exit codes and a JUnit file that parses.

#![allow(clippy::unwrap_used)]

use crate::support::harness::*;
use crate::support::lab::{LAB_PORT, Lab, LabConfig, Side};
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

/// A steady path (both directions shaped to 100 Mbit/s in the namespace lab, Reno senders)
/// meets a ±10 % target and stops before the cap of 10; the text says it was reached and
/// after how many rounds. Three rounds are the least a confidence needs; a busy CI host can
/// make one round's bidir an outlier (one CI run read 166 Mbit/s against 208 in the others),
/// after which the series needs a few more, so the test asks "early", not "after exactly 3".
/// The rate is low enough that the two cores are nowhere near their limit.
#[test]
fn lab_confidence_on_a_steady_path_stops_early() {
    let lab = Lab::new(LabConfig { rate: Some("100mbit"), rate_b: Some("100mbit"), ..Default::default() });
    let server = lab.start_server(Side::B, &wireperf(), &[]);
    let port = LAB_PORT.to_string();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("s.json");
    let out = lab.run_within(
        std::time::Duration::from_secs(90),
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
            "10",
            "--json-file",
            json.to_str().unwrap(),
        ],
    );
    let _ = server.finish(std::time::Duration::from_secs(1));
    assert_ok(&out);
    let v: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(v["confidence"]["met"], true, "{}\n{text}", v["confidence"]);
    let rounds = v["rounds"].as_array().unwrap().len();
    assert!((3..10).contains(&rounds), "stopped before the cap: {rounds} rounds\n{text}");
    assert_eq!(v["confidence"]["counted_rounds"], rounds, "{text}");
    let said =
        format!("confidence: every direction's 95% interval within ±10% of its mean after {rounds} counted rounds");
    assert!(text.contains(&said), "{said:?} in\n{text}");
    // The interval lies around what the shaper lets through: TCP goodput at MTU 1500 is
    // 100 × 1448 / 1514 = 95.6 Mbit/s, and a 1 s test reads up to ~12 % more: the receiver
    // also counts what the tbf queue (100 ms of it) drains after the sender stopped, and the
    // bucket's 256 KB burst (measured here: 104-108 Mbit/s).
    let up = &v["statistics"][0]["throughput_bps"];
    let (lo, hi) = (up["ci"][0].as_f64().unwrap(), up["ci"][1].as_f64().unwrap());
    assert!(lo <= 95.6e6 * 1.15 && hi >= 95.6e6 * 0.92, "[{lo}, {hi}]");
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

/// What a lab series printed: exit status, stdout, stderr and its JSON document.
struct Compared {
    code: Option<i32>,
    text: String,
    stderr: String,
    json: Value,
}

/// Runs `suite` in the lab against B (1 s phases, Reno, no latency), saved to `db`, with
/// `extra` flags (the repeat flags among them).
fn lab_series(lab: &Lab, db: &str, extra: &[&str]) -> Compared {
    let port = LAB_PORT.to_string();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("s.json");
    let args = [
        &["suite", lab.addr(Side::B), "-p", &port, "-t", "1", "-C", "reno", "--no-latency", "--db", db][..],
        &["--json-file", json.to_str().unwrap()],
        extra,
    ]
    .concat();
    let out = lab.run_within(std::time::Duration::from_secs(90), Side::A, &wireperf(), &args);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let json = std::fs::read(&json).ok().and_then(|b| serde_json::from_slice(&b).ok()).unwrap_or(Value::Null);
    Compared { code: out.status.code(), text, stderr, json }
}

/// The `--compare-to` line of one direction (`  upload faster by …`, `  bidir download: no …`).
fn compare_line<'a>(c: &'a Compared, direction: &str) -> &'a str {
    let block = c
        .text
        .split("% confidence, Welch's t-test:\n")
        .nth(1)
        .unwrap_or_else(|| panic!("no comparison in\n{}", c.text));
    block
        .lines()
        .take_while(|l| l.starts_with("  "))
        .find(|l| {
            l.trim_start().starts_with(&format!("{direction} ")) || l.trim_start().starts_with(&format!("{direction}:"))
        })
        .unwrap_or_else(|| panic!("no {direction} line in\n{}", c.text))
}

/// The lab comparisons let GSO packets cross the veth whole (`whole_gso`): with one packet a
/// segment the 300-400 Mbit/s each way cost enough CPU that a CI host busy with other tests
/// starved the download (measured: 261 against 287 Mbit/s with two CPU hogs); whole, the same
/// hogs leave every direction at the shaper's rate.
///
/// Series flags of the lab comparisons: a series extends (up to 5 rounds) until each
/// direction's 95 % interval is within ±5 % of its mean, so one round that a busy CI host
/// disturbs widens the series instead of deciding the comparison.
const STEADY: [&str; 4] = ["--confidence", "95,10", "--repeat", "5"];

/// The same shaped path twice (both directions through a 300 Mbit/s tbf on each host's egress,
/// Reno senders): `--compare-to LABEL` at 99.9 % finds no direction changed, the regression
/// gate passes (exit 0), and each series' mean is the shaper's goodput (within the few percent
/// a 1 s test adds: what the tbf queue drains after the sender stopped, the bucket's burst).
#[test]
fn lab_the_same_path_twice_is_no_significant_change() {
    let lab =
        Lab::new(LabConfig { rate: Some("300mbit"), rate_b: Some("300mbit"), whole_gso: true, ..Default::default() });
    let server = lab.start_server(Side::B, &wireperf(), &[]);
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.sqlite");
    let db = db.to_str().unwrap();
    let first = lab_series(&lab, db, &[&STEADY[..], &["--label", "at-300"]].concat());
    assert_eq!(first.code, Some(0), "{}\n{}", first.text, first.stderr);
    let gate = ["--compare-to", "at-300", "--significance", "99.9", "--fail-on-regression", "5"];
    let same = lab_series(&lab, db, &[&STEADY[..], &gate].concat());
    let _ = server.finish(std::time::Duration::from_secs(1));
    assert_eq!(same.code, Some(0), "{}\n{}", same.text, same.stderr);
    assert!(same.text.contains("99.9 % confidence, Welch's t-test:"), "{}", same.text);
    for d in ["upload", "download", "bidir upload", "bidir download"] {
        let line = compare_line(&same, d);
        assert!(line.contains(": no significant change ("), "the same path: {line}\n{}", same.text);
        assert!(
            same.text.contains(&format!("  [met] fail-on-regression {d}: {d}: no significant change (")),
            "{}",
            same.text
        );
    }
    // TCP goodput through a 300 Mbit/s tbf at MTU 1500: 300 × 1448 / 1514 = 287 Mbit/s; a 1 s
    // test reads up to ~12 % more.
    for c in [&first, &same] {
        for i in [0, 1] {
            let mean = c.json["statistics"][i]["throughput_bps"]["mean"].as_f64().unwrap();
            assert!((0.92..1.15).contains(&(mean / 287e6)), "mean {mean} vs 287 Mbit/s\n{}", c.text);
        }
    }
    assert_eq!(same.json["comparison"]["baseline"], first.json["saved_series"], "{}", same.json["comparison"]);
}

/// The shapers raised from 300 to 400 Mbit/s between two series: upload and download "faster
/// by" about a third (`--compare-to last`); back to 300: "slower by" about a quarter and the
/// regression gate misses (exit 1, the reason on stderr, failing JUnit cases for upload and
/// download). The history lists each series once; `show` has its rounds and statistics.
#[test]
fn lab_a_faster_then_slower_path_is_told_with_sign_and_size() {
    let lab =
        Lab::new(LabConfig { rate: Some("300mbit"), rate_b: Some("300mbit"), whole_gso: true, ..Default::default() });
    let server = lab.start_server(Side::B, &wireperf(), &[]);
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.sqlite");
    let db = db.to_str().unwrap();
    let junit = dir.path().join("gates.xml");
    let junit_arg = junit.to_str().unwrap();

    let before = lab_series(&lab, db, &STEADY);
    assert_eq!(before.code, Some(0), "{}\n{}", before.text, before.stderr);
    lab.set_rate(Side::A, "400mbit");
    lab.set_rate(Side::B, "400mbit");
    let faster = lab_series(&lab, db, &[&STEADY[..], &["--compare-to", "last"]].concat());
    assert_eq!(faster.code, Some(0), "{}\n{}", faster.text, faster.stderr);
    let size = |c: &Compared, d: &str, word: &str| -> f64 {
        let line = compare_line(c, d);
        assert!(line.contains(" %, ") && line.contains("] (p "), "{line}");
        line.split(&format!(" {word} by "))
            .nth(1)
            .and_then(|r| r.split(" %").next())
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("not {word}: {line}\n{}", c.text))
    };
    for d in ["upload", "download"] {
        let pct = size(&faster, d, "faster");
        assert!((20.0..45.0).contains(&pct), "400 against 300 Mbit/s is +33 %: {pct}\n{}", faster.text);
    }

    lab.set_rate(Side::A, "300mbit");
    lab.set_rate(Side::B, "300mbit");
    let slower = lab_series(
        &lab,
        db,
        &[&STEADY[..], &["--compare-to", "last", "--fail-on-regression", "5", "--junit", junit_arg]].concat(),
    );
    let _ = server.finish(std::time::Duration::from_secs(1));
    assert_eq!(slower.code, Some(1), "{}\n{}", slower.text, slower.stderr);
    for d in ["upload", "download"] {
        let pct = size(&slower, d, "slower");
        assert!((15.0..35.0).contains(&pct), "300 against 400 Mbit/s is -25 %: {pct}\n{}", slower.text);
    }
    assert!(
        slower.stderr.contains("wireperf suite: gate fail-on-regression upload: upload slower by ")
            && slower.stderr.contains("more than the 5 % allowed"),
        "{}",
        slower.stderr
    );
    let py = "import sys, xml.etree.ElementTree as E\nt = E.parse(sys.argv[1])\n\
              print(';'.join(c.get('name') + '=' + ('fail' if c.find('failure') is not None else 'pass') for c in t.iter('testcase')))";
    let parsed = std::process::Command::new("python3").args(["-c", py, junit_arg]).output().unwrap();
    let cases = String::from_utf8_lossy(&parsed.stdout);
    assert!(
        cases.contains("fail-on-regression upload=fail") && cases.contains("fail-on-regression download=fail"),
        "{cases}\n{}",
        slower.text
    );

    let list = run_client(&wireperf(), &["history", "--db", db, "list"]);
    let listed = String::from_utf8_lossy(&list.stdout);
    assert_eq!(listed.matches("series of ").count(), 3, "{listed}");
    assert!(listed.contains("means: upload "), "{listed}");
    let head = faster.json["saved_series"].to_string();
    let show = run_client(&wireperf(), &["history", "--db", db, "show", &head]);
    let shown = String::from_utf8_lossy(&show.stdout);
    assert!(shown.contains(" rounds (runs ") && shown.contains("Statistics over the counted rounds"), "{shown}");
}

/// A noisy path (the shaper's rate changes every few hundred ms, bounded to the series' time):
/// a ±2.5 % target is out of reach, the series runs to its cap of 4 and says so.
#[test]
fn lab_confidence_on_a_noisy_path_hits_the_cap_and_says_so() {
    let lab = Lab::new(LabConfig { rate: Some("120mbit"), rate_b: Some("120mbit"), ..Default::default() });
    let server = lab.start_server(Side::B, &wireperf(), &[]);
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flipper = {
        let (stop, ns) = (stop.clone(), [lab.ns(Side::A).to_string(), lab.ns(Side::B).to_string()]);
        let dev = [lab.dev(Side::A).to_string(), lab.dev(Side::B).to_string()];
        std::thread::spawn(move || {
            // Rates and holding times that share no period with a round, so no phase sees
            // the same mix twice; at most 400 changes (about 2 minutes).
            let rates = ["60mbit", "240mbit", "120mbit", "40mbit", "200mbit"];
            let holds = [310, 570, 230, 730, 410, 170];
            for i in 0..400 {
                if stop.load(std::sync::atomic::Ordering::Relaxed) {
                    break;
                }
                for side in 0..2 {
                    let _ = std::process::Command::new("tc")
                        .args(["-n", &ns[side], "qdisc", "replace", "dev", &dev[side], "root", "tbf", "rate"])
                        .args([rates[(i + side * 2) % rates.len()], "burst", "256kb", "latency", "100ms"])
                        .output();
                }
                std::thread::sleep(std::time::Duration::from_millis(holds[i % holds.len()]));
            }
        })
    };
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.sqlite");
    let out = lab_series(&lab, db.to_str().unwrap(), &["--confidence", "95,5", "--repeat", "4"]);
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let _ = flipper.join();
    let _ = server.finish(std::time::Duration::from_secs(1));
    assert_eq!(out.code, Some(0), "{}\n{}", out.text, out.stderr);
    assert_eq!(out.json["confidence"]["met"], false, "{}", out.text);
    assert_eq!(out.json["confidence"]["counted_rounds"], 4, "{}", out.text);
    assert_eq!(out.json["rounds"].as_array().map(Vec::len), Some(4));
    assert!(
        out.text.contains("confidence: NOT reached: not every 95% interval within ±2.5% of its mean after 4 counted rounds, the cap; the widest: "),
        "{}",
        out.text
    );
}
