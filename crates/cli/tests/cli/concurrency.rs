//! Several stock iperf3 clients at once: concurrent tests with their own results, a queue that
//! serves them one after another, and the busy answer beyond the queue and per-client limits.

use crate::support::harness::*;
use serde_json::Value;
use std::process::Child;
use std::time::{Duration, Instant};

fn finish(c: Child) -> std::process::Output {
    c.wait_with_output().expect("iperf3 output")
}

/// Waits for all clients, returning each one's output and when it exited (seconds after the
/// call): concurrent tests end together, queued ones a test length apart.
fn finish_all(mut clients: Vec<Child>) -> Vec<(std::process::Output, f64)> {
    let t0 = Instant::now();
    let mut ended = vec![None; clients.len()];
    while ended.iter().any(Option::is_none) && t0.elapsed() < Duration::from_secs(60) {
        for (i, c) in clients.iter_mut().enumerate() {
            if ended[i].is_none() && matches!(c.try_wait(), Ok(Some(_))) {
                ended[i] = Some(t0.elapsed().as_secs_f64());
            }
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    clients.into_iter().zip(ended).map(|(c, t)| (finish(c), t.unwrap_or(f64::MAX))).collect()
}

#[test]
fn four_clients_at_once_with_max_tests_4() {
    let server = start_server(&wireperf(), &["--max-tests", "4"]);
    let clients: Vec<Child> =
        (0..4).map(|_| spawn_iperf3(server.port, &["-t", "2", "-J", "--get-server-output"])).collect();
    let outs = finish_all(clients);
    let mut cookies = Vec::new();
    let mut ends = Vec::new();
    for (out, ended) in &outs {
        assert_ok(out);
        let v = json_of(out);
        assert!(u(&v, "/end/sum_received/bytes") > 0);
        let cookie = v.pointer("/start/cookie").and_then(Value::as_str).unwrap().to_string();
        // The server's own report sent back to this client is about this client's stream
        // (its data connection's port): results were not mixed between concurrent tests.
        let port = u(&v, "/start/connected/0/local_port");
        let theirs = v.pointer("/server_output_text").and_then(Value::as_str).unwrap_or_default();
        assert!(theirs.contains(&format!("port {port}")), "server output of another test:\n{theirs}");
        assert_eq!(theirs.matches("connected to").count(), 1, "{theirs}");
        cookies.push(cookie);
        ends.push(*ended);
    }
    cookies.sort();
    cookies.dedup();
    assert_eq!(cookies.len(), 4);
    let spread = ends.iter().cloned().fold(f64::MIN, f64::max) - ends.iter().cloned().fold(f64::MAX, f64::min);
    assert!(spread < 1.5, "the four 2 s tests ran at the same time (ends spread {spread} s)");
    let text = server.stdout_text();
    for n in 1..=4 {
        assert!(text.contains(&format!("[test {n}]")), "prefixed lines of test {n}:\n{text}");
    }
}

#[test]
fn a_queue_serves_clients_one_after_another() {
    let server = start_server(&wireperf(), &["--max-tests", "1", "--queue", "30"]);
    let clients: Vec<Child> = (0..4)
        .map(|_| {
            let c = spawn_iperf3(server.port, &["-t", "1", "-J"]);
            std::thread::sleep(Duration::from_millis(50));
            c
        })
        .collect();
    for (out, _) in finish_all(clients) {
        assert_ok(&out);
        assert!(u(&json_of(&out), "/end/sum_received/bytes") > 0);
    }
    // One after another, read from the server's own log rather than from when the client
    // processes happened to exit (a loaded machine delays an exit by any amount): the serve
    // loop writes every record, in the order it admits and ends tests, so with one slot each
    // `accepted` must follow the previous test's `finished`.
    let log = server.await_stderr(Duration::from_secs(10), |l| l.matches("wireperf: finished").count() >= 4);
    let mut running = 0;
    for line in log.lines() {
        if line.starts_with("wireperf: accepted") {
            running += 1;
            assert_eq!(running, 1, "a test was admitted while another ran:\n{log}");
        } else if line.starts_with("wireperf: finished") || line.starts_with("wireperf: failed") {
            running -= 1;
        }
    }
    assert!(log.matches("wireperf: queued").count() >= 2, "{log}");
    assert_eq!(log.matches("wireperf: accepted").count(), 4, "{log}");
    assert_eq!(log.matches("wireperf: finished").count(), 4, "{log}");
}

#[test]
fn beyond_the_queue_and_per_client_limits_get_the_busy_answer() {
    // One slot, one queue place held for at most 2 s.
    let server = start_server(&wireperf(), &["--max-tests", "1", "--queue", "2", "--queue-max", "1"]);
    let first = spawn_iperf3(server.port, &["-t", "4"]);
    server.await_stderr(Duration::from_secs(10), |l| l.contains("wireperf: accepted"));
    let queued = spawn_iperf3(server.port, &["-t", "1"]);
    server.await_stderr(Duration::from_secs(10), |l| l.contains("wireperf: queued"));
    let third = run_client(&iperf3(), &["-c", "127.0.0.1", "-p", &server.port.to_string(), "-t", "1"]);
    assert!(String::from_utf8_lossy(&third.stderr).contains("the server is busy running a test"));
    // The queued client waited 2 s without a slot: busy too.
    let q = finish(queued);
    assert!(String::from_utf8_lossy(&q.stderr).contains("the server is busy running a test"), "{q:?}");
    assert!(finish(first).status.success());
    let log = server.stderr_text();
    assert!(log.contains("the queue is full") && log.contains("no slot became free within --queue 2s"), "{log}");

    // Two slots, but one per client address: a second test from 127.0.0.1 is refused.
    let server = start_server(&wireperf(), &["--max-tests", "2", "--max-tests-per-client", "1"]);
    let first = spawn_iperf3(server.port, &["-t", "3"]);
    server.await_stderr(Duration::from_secs(10), |l| l.contains("wireperf: accepted"));
    let second = run_client(&iperf3(), &["-c", "127.0.0.1", "-p", &server.port.to_string(), "-t", "1"]);
    assert!(String::from_utf8_lossy(&second.stderr).contains("the server is busy running a test"));
    assert!(finish(first).status.success());
    assert!(server.stderr_text().contains("--max-tests-per-client 1"));
}
