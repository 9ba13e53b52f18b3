//! `-A N[,M]`: the client pins its test to CPU N and asks the server (`server_affinity` in the
//! parameters) to pin its side to CPU M, as iperf3 does. Seen from outside while each test
//! runs: every thread's `Cpus_allowed_list` in /proc/PID/task/*/status, sampled every 20 ms.
//! The machine needs CPUs 0 and 1 (the tests pin to 0 and 1, distinct from "0-1").

use crate::support::harness::{start_server, stock_iperf3, wireperf};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Thread name → every `Cpus_allowed_list` it showed.
type Seen = BTreeMap<String, BTreeSet<String>>;

fn require_two_cpus() {
    let online = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap_or_default();
    assert!(online.trim().starts_with("0-"), "the affinity tests need CPUs 0 and 1 online, have {online:?}");
}

fn sample(pid: u32, seen: &mut Seen) {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else { return };
    for t in tasks.flatten() {
        let dir = t.path();
        let name = std::fs::read_to_string(dir.join("comm")).unwrap_or_default().trim().to_string();
        let status = std::fs::read_to_string(dir.join("status")).unwrap_or_default();
        if let Some(cpus) = status.lines().find_map(|l| l.strip_prefix("Cpus_allowed_list:")) {
            seen.entry(name).or_default().insert(cpus.trim().to_string());
        }
    }
}

/// Runs `client -c 127.0.0.1 -p PORT args` to a server process `server_pid`, sampling both
/// processes' threads while the client runs (bounded: 20 s). Returns (client's exit success,
/// its stderr, what the server's threads showed, what the client's showed).
fn run_sampled(client: &Path, port: u16, server_pid: u32, args: &[&str]) -> (bool, String, Seen, Seen) {
    let port = port.to_string();
    let mut cmd = Command::new(client);
    cmd.args(["-c", "127.0.0.1", "-p", &port]).args(args).stdout(Stdio::null()).stderr(Stdio::piped());
    if client == wireperf() {
        cmd.arg("--no-save");
    }
    let mut child: Child = cmd.spawn().expect("client");
    let stderr = crate::support::harness::collect(child.stderr.take());
    let (mut server, mut mine) = (Seen::new(), Seen::new());
    let deadline = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Ok(Some(st)) = child.try_wait() {
            break st;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            break child.wait().expect("client status");
        }
        sample(server_pid, &mut server);
        sample(child.id(), &mut mine);
        std::thread::sleep(Duration::from_millis(20));
    };
    std::thread::sleep(Duration::from_millis(50));
    let err = String::from_utf8_lossy(&stderr.lock().unwrap()).into_owned();
    (status.success(), err, server, mine)
}

/// The masks threads whose name starts with `prefix` showed.
fn masks(seen: &Seen, prefix: &str) -> BTreeSet<String> {
    seen.iter().filter(|(n, _)| n.starts_with(prefix)).flat_map(|(_, m)| m.iter().cloned()).collect()
}

/// The masks of the thread named exactly `name` (a process's main thread); stock iperf3's
/// threads are all named after the loader that runs it, so "" takes every thread.
fn main_thread(seen: &Seen, name: &str) -> BTreeSet<String> {
    if name.is_empty() { masks(seen, "") } else { seen.get(name).cloned().unwrap_or_default() }
}

fn one(mask: &str) -> BTreeSet<String> {
    BTreeSet::from([mask.to_string()])
}

#[test]
fn server_affinity_pins_the_servers_test_and_the_client_pins_its_own() {
    require_two_cpus();
    let srv = start_server(&wireperf(), &[]);
    let pid = srv.child.id();
    for client in [wireperf(), stock_iperf3("3.22")] {
        let (ok, err, server, mine) = run_sampled(&client, srv.port, pid, &["-A", "0,1", "-t", "1", "-P", "2"]);
        assert!(ok, "{client:?}: {err}");
        println!("{client:?} -A 0,1: server threads {server:?}; client threads {mine:?}");
        // The server's stream threads ran on CPU 1 only; its test and control threads (which
        // exist before the parameters name the CPU) were moved there; its main thread was left
        // alone.
        assert_eq!(masks(&server, "wireperf-rx"), one("1"), "{client:?}: {server:?}");
        for t in ["wireperf-test", "wireperf-ctrl"] {
            assert!(masks(&server, t).contains("1"), "{client:?}: {t} not pinned: {server:?}");
        }
        assert_eq!(main_thread(&server, "wireperf"), one("0-1"), "the server's main thread was pinned: {server:?}");
        // The client's streams ran on CPU 0; its main thread pinned itself (on both CPUs only
        // in the first samples, before it starts the test).
        if client == wireperf() {
            assert_eq!(masks(&mine, "wireperf-tx"), one("0"), "the client's threads: {mine:?}");
            assert!(main_thread(&mine, "wireperf").contains("0"), "the client's main thread: {mine:?}");
        } else {
            assert!(main_thread(&mine, "").contains("0"), "3.22's threads: {mine:?}");
        }
    }
    // After the tests the server is unpinned: a test without -A runs on both CPUs.
    let (ok, err, server, _) = run_sampled(&wireperf(), srv.port, pid, &["-t", "1"]);
    assert!(ok, "{err}");
    println!("no -A afterwards: server threads {server:?}");
    assert_eq!(masks(&server, "wireperf-rx"), one("0-1"), "{server:?}");
}

/// wireperf sends `server_affinity` as 3.22 does: a stock 3.22 server pins itself to it.
#[test]
fn a_stock_3_22_server_takes_wireperfs_server_affinity() {
    require_two_cpus();
    let srv = start_server(&stock_iperf3("3.22"), &["-1"]);
    let (ok, err, server, _) = run_sampled(&wireperf(), srv.port, srv.child.id(), &["-A", "0,1", "-t", "1"]);
    assert!(ok, "{err}");
    println!("wireperf -A 0,1 to 3.22: its threads {server:?}");
    assert!(main_thread(&server, "").contains("1"), "3.22's threads: {server:?}");
}

/// A CPU the server does not have: the server refuses the test with 3.22's error, which the
/// client prints, and the server carries on.
#[test]
fn a_server_cpu_that_does_not_exist_is_refused_as_3_22() {
    for server in [wireperf(), stock_iperf3("3.22")] {
        let srv = start_server(&server, &["-1"]);
        let (ok, err, _, _) = run_sampled(&wireperf(), srv.port, srv.child.id(), &["-A", "0,1000", "-t", "1"]);
        assert!(!ok, "{server:?} ran a test pinned to CPU 1000");
        println!("{server:?} -A 0,1000: {}", err.trim());
        assert!(err.contains("unable to set CPU affinity: Invalid argument"), "{server:?}: {err}");
    }
}
