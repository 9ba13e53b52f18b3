//! A closed stdout ends wireperf quietly: `wireperf --version | grep -q …`, `wireperf -c … |
//! head -3` and a log viewer closed under a running server must not meet a panic, a backtrace or
//! a "Broken pipe" line, and what the program had started (a test, a server) ends cleanly.
//!
//! Two kinds of reader: one closed before wireperf starts (the first write fails), and one that
//! reads a single line and closes (like `head -1`; later writes fail, whatever is buffered in
//! the pipe before). Each case asserts the exit status and that stderr is free of the marks of a
//! crash, and the cases that start a test assert that the peer then serves the next one.

use crate::support::harness::*;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// What a crash on a closed pipe leaves on stderr.
fn assert_quiet(what: &str, status: ExitStatus, stderr: &str) {
    for mark in ["panicked", "Broken pipe", "RUST_BACKTRACE", "stack backtrace"] {
        assert!(!stderr.contains(mark), "{what}: stderr has {mark:?}:\n{stderr}");
    }
    assert_eq!(status.code(), Some(0), "{what}: exit status {status}; stderr:\n{stderr}");
}

/// A status of 0, to stand for a status the case explains.
fn ok_status() -> ExitStatus {
    use std::os::unix::process::ExitStatusExt;
    ExitStatus::from_raw(0)
}

/// Waits for `child` for at most `limit`, killing it after; the status and how long it took.
fn wait_within(child: &mut Child, limit: Duration) -> (ExitStatus, Duration) {
    let start = Instant::now();
    loop {
        if let Some(st) = child.try_wait().expect("try_wait") {
            return (st, start.elapsed());
        }
        if start.elapsed() >= limit {
            let _ = child.kill();
            return (child.wait().expect("wait"), start.elapsed());
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn command(args: &[&str]) -> Command {
    let mut c = Command::new(wireperf());
    c.env("WIREPERF_DB", TEST_DB).args(args).stderr(Stdio::piped());
    c
}

/// Runs `wireperf ARGS` with a stdout whose reader is already gone; returns status, stderr
/// and wall time.
fn run_closed(args: &[&str], limit: Duration) -> (ExitStatus, String, Duration) {
    let (reader, writer) = std::io::pipe().expect("pipe");
    drop(reader);
    let mut child = command(args).stdout(writer).spawn().expect("spawn wireperf");
    let err = collect(child.stderr.take());
    let (status, took) = wait_within(&mut child, limit);
    await_eof(&[&err]);
    let err = String::from_utf8_lossy(&err.lock().unwrap()).into_owned();
    (status, err, took)
}

/// Runs `wireperf ARGS` into a reader that takes one line and closes, as `head -1` does;
/// returns status, stderr, the line read and wall time.
fn run_head1(args: &[&str], limit: Duration) -> (ExitStatus, String, String, Duration) {
    let mut child = command(args).stdout(Stdio::piped()).spawn().expect("spawn wireperf");
    let err = collect(child.stderr.take());
    let mut line = String::new();
    {
        let mut out = BufReader::new(child.stdout.take().unwrap());
        let _ = out.read_line(&mut line);
    } // the reader closes here
    let (status, took) = wait_within(&mut child, limit);
    await_eof(&[&err]);
    let err = String::from_utf8_lossy(&err.lock().unwrap()).into_owned();
    (status, err, line, took)
}

/// A history database with one saved client run, for the history and report commands.
fn db_with_one_run(dir: &Path) -> String {
    let db = dir.join("h.sqlite").to_str().unwrap().to_owned();
    let server = start_server(&wireperf(), &["-1"]);
    let port = server.port.to_string();
    let out = run_client(&wireperf(), &["-c", "127.0.0.1", "-p", &port, "-t", "1", "--db", &db]);
    assert_ok(&out);
    db
}

/// Every command that only prints: version, help, completions, man, history, report, doctor.
/// Large outputs (help, completions, history export, the HTML report) outgrow what a pipe
/// holds, so the head-1 reader makes them meet the closed pipe mid-output, not only at the end.
#[test]
fn printing_commands_end_quietly() {
    let dir = tempfile::tempdir().unwrap();
    let db = db_with_one_run(dir.path());
    let man_dir = dir.path().join("man");
    let man_dir = man_dir.to_str().unwrap();
    let cases: Vec<Vec<&str>> = vec![
        vec!["--version"],
        vec!["-v"],
        vec!["--help"],
        vec!["-h"],
        vec!["history", "--help"],
        vec!["completions", "bash"],
        vec!["completions", "zsh"],
        vec!["completions", "fish"],
        vec!["man", "--out", man_dir],
        vec!["history", "list", "--db", &db],
        vec!["history", "list", "--json", "--db", &db],
        vec!["history", "show", "1", "--db", &db],
        vec!["history", "show", "1", "--json", "--db", &db],
        vec!["history", "export", "--db", &db],
        vec!["report", "1", "--html", "-", "--db", &db],
        vec!["doctor"],
        vec!["doctor", "--json"],
        vec!["--iperf2", "-v"],
    ];
    for args in &cases {
        let what = args.join(" ");
        let (status, err, _) = run_closed(args, Duration::from_secs(20));
        assert_quiet(&format!("{what} (closed stdout)"), status, &err);
        let (status, err, line, _) = run_head1(args, Duration::from_secs(20));
        // The doctor's status says what it found (1 and 2: a warn or crit finding); when its
        // whole report fits in the pipe it never meets the closed end and keeps that status.
        let status = if args[0] == "doctor" && matches!(status.code(), Some(1 | 2)) { ok_status() } else { status };
        assert_quiet(&format!("{what} (head -1)"), status, &err);
        // `man` and `--iperf2 -v` (iperf 2 prints its version on stderr) may print nothing.
        if !matches!(args[0], "man" | "--iperf2") {
            assert!(!line.is_empty(), "{what}: the head-1 reader got no line");
        }
    }
    assert!(Path::new(man_dir).join("wireperf.1").exists(), "man still wrote its pages");
}

/// A client whose output reader goes away ends its test at once, as on Ctrl-C (the server is
/// told, and serves the next client), and exits 0 without an "interrupt" line. Against a
/// wireperf server and stock iperf3 3.12, the head-1 reader and a closed stdout.
#[test]
fn a_client_ends_its_test_when_its_reader_goes_away() {
    for server_bin in [wireperf(), iperf3()] {
        let server = start_server(&server_bin, &[]);
        let port = server.port.to_string();
        let args = ["-c", "127.0.0.1", "-p", &port, "-t", "10", "-i", "0.5"];
        // A 10-second test: ending within 8 s (the bound leaves room for a loaded machine; a
        // client that ignored the closed pipe would take the full 10) proves it stopped early.
        let (status, err, took) = run_closed(&args, Duration::from_secs(20));
        assert_quiet("client, closed stdout", status, &err);
        assert!(!err.contains("interrupt"), "{err}");
        assert!(took < Duration::from_secs(8), "a closed stdout must end the test, took {took:?}");

        let (status, err, line, took) = run_head1(&args, Duration::from_secs(20));
        assert_quiet("client, head -1", status, &err);
        assert!(line.starts_with("Connecting to host 127.0.0.1"), "{line}");
        assert!(took < Duration::from_secs(8), "a closed stdout must end the test, took {took:?}");

        // The server took both ended tests as tests, and serves the next one normally.
        let out = run_client(&wireperf(), &["-c", "127.0.0.1", "-p", &port, "-t", "1", "-J"]);
        assert_ok(&out);
        assert!(u(&json_of(&out), "/end/sum_received/bytes") > 0);
    }
}

/// A server whose log reader goes away (a `wireperf -s | head` closed) stops as on Ctrl-C:
/// quietly, with status 0, telling the client it was ended, and the client reports that as an
/// error of the server, not a hang.
#[test]
fn a_server_ends_cleanly_when_its_log_reader_goes_away() {
    let port = free_port();
    let p = port.to_string();
    let mut server = command(&["-s", "-p", &p]).stdout(Stdio::piped()).spawn().expect("spawn server");
    let err = collect(server.stderr.take());
    let mut out = BufReader::new(server.stdout.take().unwrap());
    // Read the whole banner (rule, "Server listening on PORT", rule) so that the first line
    // the server writes into the closed pipe is the one about the client's test, not the banner.
    let mut banner = String::new();
    for _ in 0..3 {
        out.read_line(&mut banner).unwrap();
    }
    assert!(banner.contains(&format!("Server listening on {port}")), "{banner}");
    wait_for_port_without_connecting(port);
    drop(out); // the log's reader goes away; the server learns it at its next line
    let client = run_client(&wireperf(), &["-c", "127.0.0.1", "-p", &p, "-t", "5", "-J"]);
    let (status, took) = wait_within(&mut server, Duration::from_secs(15));
    await_eof(&[&err]);
    let err = String::from_utf8_lossy(&err.lock().unwrap()).into_owned();
    assert_quiet("server, head -1", status, &err);
    assert!(took < Duration::from_secs(10), "the server must stop at the closed log, took {took:?}");
    // The server accepted the client (its "Accepted connection" line is the write that found
    // the pipe closed), so the client connected and then got iperf3's clean error for a peer
    // that went away; it did not hang and was not refused.
    let doc = json_of(&client);
    let e = doc.get("error").and_then(|e| e.as_str()).unwrap_or_else(|| panic!("no error in {doc}"));
    assert!(!e.contains("unable to connect"), "the server left before accepting: {e}");
    assert!(e.contains("Broken pipe") || e.contains("Connection reset") || e.contains("server"), "{e}");
}

/// Interval lines reach a pipe as they happen (iperf3 flushes each one), not all at the end:
/// the first interval's line is readable while the client still runs (a 4-second test, so the
/// reader has 3 s of slack before the client could have ended).
#[test]
fn interval_lines_arrive_while_the_test_runs() {
    let server = start_server(&wireperf(), &["-1"]);
    let port = server.port.to_string();
    let mut child = command(&["-c", "127.0.0.1", "-p", &port, "-t", "4", "-i", "1"])
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn client");
    let err = collect(child.stderr.take());
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut seen = String::new();
    let mut seen_first_interval = false;
    while out.read_line(&mut seen).unwrap_or(0) > 0 {
        // The first interval ends near 1 s (0.00-1.01 on a loaded machine).
        if seen.lines().last().is_some_and(|l| l.contains(" 0.00-1.") && l.contains(" sec ")) {
            seen_first_interval = true;
            break;
        }
    }
    let err = || String::from_utf8_lossy(&err.lock().unwrap()).into_owned();
    assert!(seen_first_interval, "no first interval line (0.00-1.xx) in:\n{seen}\nstderr:\n{}", err());
    assert!(child.try_wait().unwrap().is_none(), "the first interval line arrived only after the client ended");
    let mut rest = String::new();
    out.read_to_string(&mut rest).unwrap();
    let (status, _) = wait_within(&mut child, Duration::from_secs(20));
    assert!(status.success(), "{status}");
    assert!(rest.contains("receiver"), "{rest}");
}
