//! `wireperf suite --fix` in the namespace lab: a real wireperf server in B (with or without
//! `--allow-fix`), the client in A, the limits made by real per-namespace sysctls and sysfs
//! values, which each test reads before and after.
//!
//! The tests whose verdict is a proof (`lab_fix_proof_*`) run alone (.config/nextest.toml).
//! Every series is `-t 1 --repeat 3 --no-latency` and every loop `--fix-only` its one cause, so
//! a test runs a baseline and one proof (about 20 s). The limits are made far stronger than
//! the noise of a busy two-core machine: a 4 kB receive buffer holds an upload to about 1
//! Gbit/s where the path moves 20-30, and a 100 Mbit/s router holds every direction whatever
//! the client's transmit queue is.

use crate::support::harness::*;
use crate::support::lab::{LAB_PORT, Lab, LabConfig, MiddleShaper, Side};
use serde_json::Value;
use std::time::{Duration, Instant};

/// The smallest receive or send buffer the kernel takes: a window far below the path's flight.
const TINY: &str = "4096 4096 4096";
/// What the doctor's remedy writes back (the kernel's defaults).
const RMEM_FIXED: &str = "4096\t131072\t6291456";
/// A series: short phases, three rounds (Welch needs two; three tell a 10× change at once).
const SERIES: &[&str] = &["-t", "1", "--repeat", "3", "--no-latency", "--no-save"];

/// The lab of these tests: GSO packets cross the veth whole, as between two containers or
/// hosts with offloads, so TCP runs at tens of Gbit/s and a buffer limit stands out by 10×.
/// (The default lab cuts every packet to one segment for UDP's counts, which holds TCP near
/// 1 Gbit/s on these cores, where a busy neighbour's noise is as large as a fix.)
fn fix_lab() -> LabConfig {
    LabConfig { whole_gso: true, ..Default::default() }
}

/// [`fix_lab`] with the download shaped to 2 Gbit/s on the server's egress. Unshaped, a
/// veth download on two cores is bimodal (28 or 12 Gbit/s, as the receive softirq lands on the
/// reader's core or not), and three rounds of it read as a significant regression of a step
/// that cannot touch it (a server's receive buffer); shaped, it holds still, and the upload
/// the steps target is left free.
fn steady_download() -> LabConfig {
    LabConfig { rate_b: Some("2gbit"), ..fix_lab() }
}

fn read(lab: &Lab, side: Side, path: &str) -> String {
    String::from_utf8_lossy(&lab.exec(side, &["cat", path]).stdout).trim().to_string()
}

fn rmem(lab: &Lab, side: Side) -> String {
    read(lab, side, "/proc/sys/net/ipv4/tcp_rmem")
}

/// Runs `wireperf suite B --fix… args` in A; the text on stdout and the JSON written beside it.
fn fix(lab: &Lab, args: &[&str]) -> (String, Value, std::process::Output) {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("fix.json");
    let port = LAB_PORT.to_string();
    let mut a = vec!["suite", lab.addr(Side::B), "-p", &port, "--json-file", json.to_str().unwrap()];
    a.extend_from_slice(SERIES);
    a.extend_from_slice(args);
    let out = lab.run_within(Duration::from_secs(150), Side::A, &wireperf(), &a);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let doc = std::fs::read_to_string(&json).ok().and_then(|t| serde_json::from_str(&t).ok()).unwrap_or_else(|| {
        panic!("no JSON written\nstdout:\n{text}\nstderr:\n{}", String::from_utf8_lossy(&out.stderr))
    });
    (text, doc, out)
}

/// The step record of `cause` in the outcome.
fn step<'a>(doc: &'a Value, cause: &str) -> &'a Value {
    doc["steps"]
        .as_array()
        .and_then(|s| s.iter().find(|s| s["step"]["cause"] == cause))
        .unwrap_or_else(|| panic!("no {cause} step in {}", doc["steps"]))
}

fn status(step: &Value) -> &str {
    step["status"]["status"].as_str().unwrap_or_default()
}

#[test]
fn lab_fix_proof_a_servers_tiny_receive_buffer_is_applied_there_kept_and_holds() {
    let lab = Lab::new(steady_download());
    lab.sysctl(Side::B, "net.ipv4.tcp_rmem", TINY);
    let dir = tempfile::tempdir().unwrap();
    let journal = dir.path().join("server-journal.json");
    let server = lab.start_server(Side::B, &wireperf(), &["--allow-fix", "--fix-journal", journal.to_str().unwrap()]);
    let (text, doc, out) = fix(&lab, &["--fix", "--yes", "--fix-only", "receiver-window"]);
    assert!(out.status.success(), "{text}\n{}", String::from_utf8_lossy(&out.stderr));
    let s = step(&doc, "receiver-window");
    assert_eq!((s["step"]["host"].as_str(), status(s)), (Some("server"), "kept"), "{s}");
    assert_eq!(doc["far"]["state"], "open", "{}", doc["far"]);
    let up = &s["proof"]["figures"][0];
    assert_eq!(up["figure"], "upload");
    assert!(up["significant"] == true && up["change_pct"].as_f64().unwrap() > 100.0, "{up}");
    // The server's own sysctl holds the doctor's value, and its journal records the old one.
    assert_eq!(rmem(&lab, Side::B), RMEM_FIXED);
    let j = std::fs::read_to_string(&journal).unwrap();
    assert!(j.contains("\"old\": \"4096\\t4096\\t4096\"") && j.contains("receiver-window"), "{j}");
    for line in [
        "server receiver-window  (apply)",
        "change: net.ipv4.tcp_rmem 4096 4096 4096 → 4096 131072 6291456",
        "step 1: server receiver-window",
        "applied: /proc/sys/net/ipv4/tcp_rmem: 4096 4096 4096 → 4096 131072 6291456",
        "\n  kept\n",
        "baseline → final",
        "steps: 1 kept, 0 undone",
        "on the server: net.ipv4.tcp_rmem = 4096 131072 6291456",
    ] {
        assert!(text.contains(line), "no {line:?} in:\n{text}");
    }
    let (_, log) = server.finish(Duration::from_millis(300));
    assert!(log.contains("step 1 (receiver-window) applied") && log.contains("step 1 (receiver-window) kept"), "{log}");
    assert!(log.contains("fix channel from 10.77.0.1") || log.contains("fix channel from ::ffff:10.77.0.1"), "{log}");
}

#[test]
fn lab_fix_proof_a_clients_tiny_receive_buffer_is_applied_here_and_kept() {
    // Both directions shaped to 2 Gbit/s: the download this step targets is held to about 0.2
    // by a 4 kB window, and the upload it must not slow holds still.
    let lab = Lab::new(LabConfig { rate: Some("2gbit"), ..steady_download() });
    lab.sysctl(Side::A, "net.ipv4.tcp_rmem", TINY);
    let _server = lab.start_server(Side::B, &wireperf(), &[]);
    let dir = tempfile::tempdir().unwrap();
    let journal = dir.path().join("client-journal.json");
    let j = journal.to_str().unwrap();
    let (text, doc, out) = fix(&lab, &["--fix", "--yes", "--fix-only", "receiver-window", "--journal", j]);
    assert!(out.status.success(), "{text}\n{}", String::from_utf8_lossy(&out.stderr));
    let s = step(&doc, "receiver-window");
    assert_eq!((s["step"]["host"].as_str(), status(s)), (Some("client"), "kept"), "{s}\n{text}");
    assert_eq!(s["step"]["targets"], serde_json::json!(["download"]), "{s}");
    assert_eq!(rmem(&lab, Side::A), RMEM_FIXED);
    assert!(text.contains("applied: /proc/sys/net/ipv4/tcp_rmem: 4096 4096 4096 → 4096 131072 6291456"), "{text}");
    assert!(text.contains("on the client: net.ipv4.tcp_rmem = 4096 131072 6291456"), "{text}");
    let journaled = std::fs::read_to_string(&journal).unwrap();
    assert!(
        journaled.contains("tcp_rmem") && journaled.contains("receiver-window"),
        "a kept step stays journaled: {journaled}"
    );
}

/// A client whose `tcp_wmem` is tiny: TCP_INFO counts no send-buffer-limited time (the sender
/// waits in poll), yet the verdict names the send buffer from its maximum against the flight,
/// and the plan's step is the doctor's remedy on the client. (Whether it is kept depends on
/// the path: over this veth a 4 kB buffer still moves 15 Gbit/s, since the kernel lets one
/// 64 kB GSO packet past it, and the loop rightly finds +20 % within noise.)
#[test]
fn lab_fix_a_clients_tiny_send_buffer_is_named_and_planned_on_the_client() {
    let lab = Lab::new(steady_download());
    lab.sysctl(Side::A, "net.ipv4.tcp_wmem", TINY);
    let _server = lab.start_server(Side::B, &wireperf(), &[]);
    let (text, doc, out) = fix(&lab, &["--fix=plan"]);
    assert!(out.status.success(), "{text}\n{}", String::from_utf8_lossy(&out.stderr));
    let s = step(&doc, "sender-buffer");
    assert_eq!((s["step"]["host"].as_str(), status(s)), (Some("client"), "planned"), "{s}");
    assert_eq!(s["step"]["change"], "net.ipv4.tcp_wmem 4096 4096 4096 → 4096 16384 4194304", "{s}");
    let why = s["step"]["why"].as_str().unwrap();
    assert!(why.contains("sender-buffer on the client") && why.contains("4096 bytes (net.ipv4.tcp_wmem max)"), "{why}");
    assert!(text.contains("run:    sudo sysctl -w net.ipv4.tcp_wmem='4096 16384 4194304'"), "{text}");
    assert_eq!(read(&lab, Side::A, "/proc/sys/net/ipv4/tcp_wmem"), "4096\t4096\t4096", "a plan changes nothing");
}

#[test]
fn lab_fix_proof_a_step_that_does_not_help_is_undone_and_the_value_restored() {
    // A 100 Mbit/s router between the hosts: the client's short transmit queue is a real
    // doctor finding, and lifting it changes nothing any direction can show.
    let shaper = MiddleShaper { rate: "100mbit", rate_bps: 100e6, limit: 200_000 };
    let lab = Lab::new(LabConfig { middle_shaper: Some(shaper), ..fix_lab() });
    let dev = lab.dev(Side::A).to_string();
    lab.exec(Side::A, &["ip", "link", "set", &dev, "txqueuelen", "500"]);
    let _server = lab.start_server(Side::B, &wireperf(), &["--allow-fix"]);
    let dir = tempfile::tempdir().unwrap();
    let journal = dir.path().join("j.json");
    let (text, doc, out) =
        fix(&lab, &["--fix", "--yes", "--fix-only", "txqueuelen", "--journal", journal.to_str().unwrap()]);
    assert!(out.status.success(), "{text}\n{}", String::from_utf8_lossy(&out.stderr));
    let s = step(&doc, "txqueuelen");
    assert_eq!((s["step"]["host"].as_str(), status(s)), (Some("client"), "undone"), "{s}\n{text}");
    assert_eq!(read(&lab, Side::A, &format!("/sys/class/net/{dev}/tx_queue_len")), "500", "restored");
    let path = format!("/sys/class/net/{dev}/tx_queue_len");
    assert!(text.contains(&format!("applied: {path}: 500 → 1000")), "{text}");
    assert!(text.contains(&format!("restored: {path}: 1000 → 500")), "{text}");
    // Undone because the upload it targets did not move; the router shapes only the upload, so
    // the unshaped download may also read as noise worse, which undoes it as well.
    assert!(text.contains("\n  undone: the "), "{text}");
    let j: Value = serde_json::from_str(&std::fs::read_to_string(&journal).unwrap()).unwrap();
    assert_eq!(j["entries"], serde_json::json!([]), "an undone step leaves the journal");
}

#[test]
fn lab_fix_a_server_without_allow_fix_changes_nothing_and_the_client_prints_its_commands() {
    let lab = Lab::new(fix_lab());
    lab.sysctl(Side::B, "net.ipv4.tcp_rmem", TINY);
    let server = lab.start_server(Side::B, &wireperf(), &[]);
    let (text, doc, out) = fix(&lab, &["--fix", "--yes", "--fix-only", "receiver-window"]);
    assert!(out.status.success(), "{text}\n{}", String::from_utf8_lossy(&out.stderr));
    let s = step(&doc, "receiver-window");
    assert_eq!(status(s), "not-applied", "{s}");
    assert!(s["status"]["reason"].as_str().unwrap().contains("cannot be asked"), "{s}");
    assert!(doc["far"]["reason"].as_str().unwrap().contains("--allow-fix"), "{}", doc["far"]);
    assert_eq!(rmem(&lab, Side::B), "4096\t4096\t4096", "the server's host is unchanged");
    for line in [
        "the server's steps are not applied: this server does not change its host (it was not started with --allow-fix)",
        "run:    sudo sysctl -w net.ipv4.tcp_rmem='4096 131072 6291456'",
        "not applied: the server cannot be asked to change its host",
    ] {
        assert!(text.contains(line), "no {line:?} in:\n{text}");
    }
    let (_, log) = server.finish(Duration::from_millis(300));
    assert!(log.contains("a fix request, and --allow-fix is off"), "{log}");
}

#[test]
fn lab_fix_plan_changes_nothing_on_either_host() {
    let lab = Lab::new(fix_lab());
    lab.sysctl(Side::B, "net.ipv4.tcp_rmem", TINY);
    let dev = lab.dev(Side::A).to_string();
    lab.exec(Side::A, &["ip", "link", "set", &dev, "txqueuelen", "500"]);
    let before = (rmem(&lab, Side::B), read(&lab, Side::A, &format!("/sys/class/net/{dev}/tx_queue_len")));
    let server = lab.start_server(Side::B, &wireperf(), &["--allow-fix"]);
    let (text, doc, out) = fix(&lab, &["--fix=plan"]);
    assert!(out.status.success(), "{text}\n{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(doc["mode"], "plan");
    let steps = doc["steps"].as_array().unwrap();
    let causes: Vec<&str> = steps.iter().filter_map(|s| s["step"]["cause"].as_str()).collect();
    assert!(causes.contains(&"receiver-window") && causes.contains(&"txqueuelen"), "{causes:?}");
    assert!(steps.iter().all(|s| status(s) == "planned"), "{steps:?}");
    assert!(text.contains("--fix=plan: nothing was changed on either host"), "{text}");
    let after = (rmem(&lab, Side::B), read(&lab, Side::A, &format!("/sys/class/net/{dev}/tx_queue_len")));
    assert_eq!(after, before);
    let (_, log) = server.finish(Duration::from_millis(300));
    assert!(!log.contains("fix channel"), "a plan opens no fix channel: {log}");
}

/// Polls `done` every 50 ms for at most `limit`.
fn wait_for(limit: Duration, mut done: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if done() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}

/// Starts the loop in A as a child (to be killed), with longer phases so the proof runs a while.
fn spawn_fix(lab: &Lab, args: &[&str]) -> std::process::Child {
    let port = LAB_PORT.to_string();
    let mut a = vec!["suite", lab.addr(Side::B), "-p", &port, "-t", "2", "--repeat", "3", "--no-latency", "--no-save"];
    a.extend_from_slice(args);
    lab.command(Side::A, &wireperf(), &a)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap()
}

#[test]
fn lab_fix_a_client_killed_mid_proof_leaves_the_server_restored_within_10_s() {
    let lab = Lab::new(fix_lab());
    lab.sysctl(Side::B, "net.ipv4.tcp_rmem", TINY);
    let server = lab.start_server(Side::B, &wireperf(), &["--allow-fix"]);
    let mut client = spawn_fix(&lab, &["--fix", "--yes", "--fix-only", "receiver-window"]);
    let applied = wait_for(Duration::from_secs(60), || server.output_so_far().1.contains("(receiver-window) applied"));
    assert!(applied, "never applied: {}", server.output_so_far().1);
    assert_eq!(rmem(&lab, Side::B), RMEM_FIXED, "applied while the proof runs");
    client.kill().unwrap();
    let killed = Instant::now();
    let _ = client.wait();
    let restored = wait_for(Duration::from_secs(10), || rmem(&lab, Side::B) == "4096\t4096\t4096");
    assert!(restored, "not restored within 10 s: {}", rmem(&lab, Side::B));
    let secs = killed.elapsed().as_secs_f64();
    let (_, log) = server.finish(Duration::from_millis(300));
    assert!(log.contains("restored step 1 (receiver-window), the channel closed before it was kept"), "{log}");
    assert!(secs < 10.0, "{secs}");
}

#[test]
fn lab_fix_doctor_undo_restores_what_a_killed_loop_left_on_the_client() {
    let lab = Lab::new(fix_lab());
    let dev = lab.dev(Side::A).to_string();
    let qlen = format!("/sys/class/net/{dev}/tx_queue_len");
    lab.exec(Side::A, &["ip", "link", "set", &dev, "txqueuelen", "500"]);
    let _server = lab.start_server(Side::B, &wireperf(), &[]);
    let dir = tempfile::tempdir().unwrap();
    let journal = dir.path().join("j.json");
    let j = journal.to_str().unwrap();
    let mut client = spawn_fix(&lab, &["--fix", "--yes", "--fix-only", "txqueuelen", "--journal", j]);
    let applied = wait_for(Duration::from_secs(60), || read(&lab, Side::A, &qlen) == "1000");
    assert!(applied, "never applied");
    assert!(std::fs::read_to_string(&journal).unwrap().contains("tx_queue_len"), "journaled before it was made");
    client.kill().unwrap();
    let _ = client.wait();
    assert_eq!(read(&lab, Side::A, &qlen), "1000", "a SIGKILL leaves the change");
    let out = lab.run(Side::A, &wireperf(), &["doctor", "--undo", "--journal", j]);
    assert_ok(&out);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains(&format!("restored {qlen}: 1000 → 500")), "{text}");
    assert_eq!(read(&lab, Side::A, &qlen), "500");
}
