//! Output and process options: -V, --timestamps, --logfile, --json-stream, -D/-I, --idle-timeout,
//! --server-bitrate-limit, --cport, -B addr%dev, -C.

use crate::support::harness::*;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn client_vs_wireperf(args: &[&str]) -> (std::process::Output, ServerProc) {
    let server = start_server(&wireperf(), &[]);
    let port = server.port.to_string();
    let mut a = vec!["-c", "127.0.0.1", "-p", &port];
    a.extend_from_slice(args);
    let out = run_client(&wireperf(), &a);
    (out, server)
}

#[test]
fn verbose_prints_cpu_and_congestion() {
    let (out, _s) = client_vs_wireperf(&["-t", "1", "-V"]);
    assert_ok(&out);
    let text = String::from_utf8_lossy(&out.stdout);
    for needle in [
        "Time: ",
        "      Cookie: ",
        "TCP MSS: ",
        "Starting Test: protocol: TCP, 1 streams, 131072 byte blocks",
        "Test Complete. Summary Results:",
        "CPU Utilization: local/sender ",
        "snd_tcp_congestion ",
    ] {
        assert!(text.contains(needle), "missing {needle:?}:\n{text}");
    }
}

#[test]
fn timestamps_prefix_every_line() {
    let (out, _s) = client_vs_wireperf(&["-t", "1", "--timestamps=%Y-%m-%dT%H:%M:%S "]);
    assert_ok(&out);
    let text = String::from_utf8_lossy(&out.stdout);
    let year = wireperf_year();
    let lines: Vec<&str> = text.lines().collect();
    // A one-second test prints the banner, an interval, the summary and "iperf Done.".
    assert!(lines.len() >= 5, "too little output to check: {text:?}");
    assert!(lines.iter().any(|l| l.ends_with("iperf Done.")), "{text}");
    for line in &lines {
        assert!(line.starts_with(&year) && line.as_bytes().get(19) == Some(&b' '), "{line:?}");
    }
}

fn wireperf_year() -> String {
    let out = Command::new("date").arg("+%Y").output().expect("date");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

#[test]
fn logfile_receives_the_output() {
    let dir = tempfile::tempdir().expect("tempdir");
    let log = dir.path().join("client.log");
    let (out, _s) = client_vs_wireperf(&["-t", "1", "--logfile", log.to_str().expect("path")]);
    assert_ok(&out);
    assert!(out.stdout.is_empty(), "stdout: {}", String::from_utf8_lossy(&out.stdout));
    let text = std::fs::read_to_string(&log).expect("log");
    assert!(text.contains("iperf Done.") && text.contains("receiver"), "{text}");
}

#[test]
fn json_stream_is_one_event_per_line() {
    let (out, _s) = client_vs_wireperf(&["-t", "2", "--json-stream"]);
    assert_ok(&out);
    let events: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let kinds: Vec<&str> = events.iter().filter_map(|e| e["event"].as_str()).collect();
    assert_eq!(kinds.first(), Some(&"start"));
    assert_eq!(kinds.last(), Some(&"end"));
    assert!(kinds.iter().filter(|k| **k == "interval").count() >= 2, "{kinds:?}");
    assert!(events.last().is_some_and(|e| e["data"]["sum_sent"]["bytes"].as_u64().unwrap_or(0) > 0));
}

#[test]
fn daemon_writes_and_removes_its_pidfile() {
    let dir = tempfile::tempdir().expect("tempdir");
    let pidfile = dir.path().join("wp.pid");
    let port = free_port().to_string();
    let st = Command::new(wireperf())
        .args(["-s", "-D", "-1", "-p", &port, "-I", pidfile.to_str().expect("path")])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("daemon");
    assert!(st.success(), "the foreground part exits at once");
    let deadline = Instant::now() + Duration::from_secs(5);
    while !pidfile.exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let pid: u32 = std::fs::read_to_string(&pidfile).expect("pidfile").trim().parse().expect("pid");
    assert!(std::path::Path::new(&format!("/proc/{pid}")).exists());
    wait_for_port_without_connecting(port.parse().expect("port"));
    let out = run_client(&iperf3(), &["-c", "127.0.0.1", "-p", &port, "-t", "1"]);
    assert_ok(&out);
    // -1: the daemon exits after the test and removes its pidfile.
    let deadline = Instant::now() + Duration::from_secs(5);
    while pidfile.exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!pidfile.exists(), "pidfile removed at exit");
}

#[test]
fn idle_timeout_ends_a_one_off_server() {
    let port = free_port().to_string();
    let start = Instant::now();
    let out = Command::new(wireperf()).args(["-s", "-1", "-p", &port, "--idle-timeout", "1"]).output().expect("server");
    assert!(out.status.success());
    let took = start.elapsed();
    // Not before the second of idleness (100 ms for the clock's rounding), and long before
    // "never": without the timeout a -1 server with no client would not exit at all.
    assert!(took >= Duration::from_millis(900) && took < Duration::from_secs(5), "{took:?}");
}

#[test]
fn bitrate_limit_refuses_a_test_asking_for_more() {
    let server = start_server(&wireperf(), &["--server-bitrate-limit", "1M"]);
    let port = server.port.to_string();
    let out = run_client(&iperf3(), &["-c", "127.0.0.1", "-p", &port, "-t", "1", "-b", "10M"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("total required bandwidth is larger than server limit"), "{err}");
    // The server goes on.
    let out = run_client(&iperf3(), &["-c", "127.0.0.1", "-p", &port, "-t", "1", "-b", "500K"]);
    assert_ok(&out);
}

/// `--json-stream-full-output` (3.21+): the events, then the whole `-J` document; alone (without
/// `--json-stream`) it changes nothing, as in 3.22.
#[test]
fn json_stream_full_output_adds_the_whole_document() {
    let (out, _s) = client_vs_wireperf(&["-t", "1", "--json-stream", "--json-stream-full-output"]);
    assert_ok(&out);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let (events, doc) = text.split_once("\n{\n").unwrap_or_else(|| panic!("no document after the events:\n{text}"));
    let kinds: Vec<String> = events
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap_or_else(|e| panic!("{e}: {l}"))["event"].to_string()
        })
        .collect();
    assert_eq!(kinds.first().map(String::as_str), Some("\"start\""), "{kinds:?}");
    assert_eq!(kinds.last().map(String::as_str), Some("\"end\""), "{kinds:?}");
    let doc: serde_json::Value = serde_json::from_str(&format!("{{\n{doc}")).expect("the full document");
    assert!(doc["end"]["sum_sent"]["bytes"].as_u64().unwrap_or(0) > 0 && doc["intervals"].as_array().is_some());
    let (out, _s) = client_vs_wireperf(&["-t", "1", "--json-stream-full-output"]);
    assert_ok(&out);
    assert!(String::from_utf8_lossy(&out.stdout).contains("iperf Done."), "text output expected");
}

#[test]
fn cport_bind_device_and_congestion() {
    let cport = free_port();
    let c = cport.to_string();
    let (out, _s) = client_vs_wireperf(&["-t", "1", "-J", "--cport", &c, "-B", "127.0.0.1%lo", "-C", "cubic"]);
    assert_ok(&out);
    let v = json_of(&out);
    assert_eq!(v["start"]["connected"][0]["local_port"], cport);
    assert_eq!(v["end"]["sender_tcp_congestion"], "cubic");
}

#[test]
fn paced_tcp_reaches_its_target_rate() {
    let (out, _s) = client_vs_wireperf(&["-t", "2", "-b", "50M", "-J"]);
    assert_ok(&out);
    let v = json_of(&out);
    let bps = v["end"]["sum_sent"]["bits_per_second"].as_f64().unwrap_or(0.0);
    // Pacing is by average since the stream started: within 5 % of the target over 2 s.
    assert!((bps - 50e6).abs() / 50e6 < 0.05, "{bps}");
}

#[test]
fn bitrate_limit_ends_a_test_measured_above_it() {
    // No -b: the request passes, the measured rate (loopback, GB/s) does not.
    let server = start_server(&wireperf(), &["--server-bitrate-limit", "100M/1"]);
    let port = server.port.to_string();
    let started = Instant::now();
    let out = run_client(&iperf3(), &["-c", "127.0.0.1", "-p", &port, "-t", "5"]);
    assert!(!out.status.success());
    // The limit is checked per second of the 5 s test: ending within 4 s means the server ended
    // it on the measurement (after about 1 s), not the client at -t 5.
    assert!(started.elapsed() < Duration::from_secs(4), "ended early, not at -t");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("total required bandwidth is larger than server limit"), "{err}");
}
