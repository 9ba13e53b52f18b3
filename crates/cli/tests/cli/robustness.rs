//! A wireperf server survives bad clients and serves the next test normally.

use crate::support::harness::*;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A normal iperf3 test against the server must pass after every abuse.
fn normal_test_passes(port: u16) {
    let p = port.to_string();
    let out = run_client(&iperf3(), &["-c", "127.0.0.1", "-p", &p, "-t", "1", "-J"]);
    assert_ok(&out);
    let v = json_of(&out);
    assert!(u(&v, "/end/sum_received/bytes") > 0);
}

fn connect(port: u16) -> TcpStream {
    let s = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(5))).expect("timeout");
    s
}

#[test]
fn garbage_then_normal_test() {
    let server = start_server(&wireperf(), &[]);
    let mut s = connect(server.port);
    let garbage: Vec<u8> = (0..4096u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
    let _ = s.write_all(&garbage);
    let mut buf = [0u8; 64];
    let _ = s.read(&mut buf);
    drop(s);
    normal_test_passes(server.port);
    assert!(server.stderr_text().contains("wireperf:"), "the bad client is logged");
}

#[test]
fn truncated_cookie_then_normal_test() {
    let server = start_server(&wireperf(), &[]);
    let mut s = connect(server.port);
    s.write_all(b"abcdefghij").expect("write");
    drop(s);
    normal_test_passes(server.port);
    // A half cookie and then silence does not block others either.
    let mut silent = connect(server.port);
    silent.write_all(b"abcdefghij").expect("write");
    normal_test_passes(server.port);
    drop(silent);
}

#[test]
fn huge_length_prefix_is_refused() {
    let server = start_server(&wireperf(), &[]);
    let mut s = connect(server.port);
    s.write_all(&[b'a'; 36]).expect("cookie");
    s.write_all(&[0]).expect("nul");
    let mut state = [0u8; 1];
    s.read_exact(&mut state).expect("PARAM_EXCHANGE");
    assert_eq!(state[0], 9);
    s.write_all(&0x8000_0000u32.to_be_bytes()).expect("length");
    // The server answers SERVER_ERROR (0xfe) and closes, without waiting for 2 GiB.
    let start = Instant::now();
    let mut rest = Vec::new();
    let _ = s.read_to_end(&mut rest);
    // At once rather than after waiting for a body that never comes (the read timeout): 3 s
    // tells those apart under any load.
    assert!(start.elapsed() < Duration::from_secs(3));
    assert_eq!(rest.first(), Some(&0xfe), "{rest:?}");
    let code = i32::from_be_bytes([rest[1], rest[2], rest[3], rest[4]]);
    assert_eq!(code, 114, "IERECVPARAMS");
    normal_test_passes(server.port);
}

#[test]
fn client_killed_mid_test_then_normal_test() {
    let server = start_server(&wireperf(), &[]);
    let p = server.port.to_string();
    let mut child = Command::new(iperf3())
        .args(["-c", "127.0.0.1", "-p", &p, "-t", "10"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("iperf3");
    // Mid-test: the server has admitted the test (its `accepted` record) and the streams have
    // run for a while; the 10 s test leaves any load ample room on the late side.
    wait_for_log(&server, "wireperf: accepted", "the test to start");
    std::thread::sleep(Duration::from_millis(500));
    child.kill().expect("kill");
    let _ = child.wait();
    // The server must notice the vanished client by itself (a `failed` record) before the
    // next test, or that test would meet the busy answer; then it serves normally.
    wait_for_log(&server, "wireperf: failed", "the server to end the killed client's test");
    normal_test_passes(server.port);
    assert!(server.stderr_text().contains("wireperf: error"), "{}", server.stderr_text());
}

/// Waits (up to 10 s, far past the milliseconds either event takes) for `needle` in the
/// server's log.
fn wait_for_log(server: &ServerProc, needle: &str, what: &str) {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !server.stderr_text().contains(needle) {
        assert!(std::time::Instant::now() < deadline, "waited 10 s for {what}:\n{}", server.stderr_text());
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn second_client_gets_busy_answer() {
    let server = start_server(&wireperf(), &[]);
    let p = server.port.to_string();
    let mut first = Command::new(iperf3())
        .args(["-c", "127.0.0.1", "-p", &p, "-t", "3"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("iperf3");
    wait_for_log(&server, "wireperf: accepted", "the first test to start");
    let second = run_client(&iperf3(), &["-c", "127.0.0.1", "-p", &p, "-t", "1"]);
    assert!(!second.status.success());
    let err = String::from_utf8_lossy(&second.stderr);
    assert!(err.contains("the server is busy running a test"), "{err}");
    assert!(first.wait().expect("first").success());
    // The first client exits as soon as it has its results, while the server may still be
    // closing that test: await its record, or the next client meets "busy" too.
    wait_for_log(&server, "wireperf: finished", "the first test to end");
    normal_test_passes(server.port);
}

#[test]
fn data_connection_with_unknown_cookie_is_refused() {
    let server = start_server(&wireperf(), &[]);
    let p = server.port.to_string();
    let mut first = Command::new(iperf3())
        .args(["-c", "127.0.0.1", "-p", &p, "-t", "2"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("iperf3");
    wait_for_log(&server, "wireperf: accepted", "the first test to start");
    let mut s = connect(server.port);
    s.write_all(&[b'z'; 37]).expect("cookie");
    let mut b = [0u8; 1];
    assert_eq!(s.read(&mut b).ok(), Some(1));
    assert_eq!(b[0], 0xff);
    assert!(first.wait().expect("first").success(), "the running test is unaffected");
}
