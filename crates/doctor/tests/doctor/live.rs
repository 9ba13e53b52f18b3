//! The live path: this machine's NICs, and --apply/--undo on a veth inside a network namespace
//! the test creates (removed by a Drop guard even when the test fails). No traffic is sent.

use std::process::{Command, Output};

use wireperf_doctor::{InspectOptions, KernelLogSource};

const BIN: &str = env!("CARGO_BIN_EXE_wireperf-doctor");

fn is_root() -> bool {
    wireperf_doctor::apply::is_root_user()
}

fn have(cmd: &str) -> bool {
    Command::new(cmd).arg("-V").output().is_ok()
}

fn sh(argv: &[&str]) -> Output {
    Command::new(argv[0]).args(&argv[1..]).output().unwrap_or_else(|e| panic!("{argv:?}: {e}"))
}

fn ok(argv: &[&str]) -> String {
    let o = sh(argv);
    assert!(o.status.success(), "{argv:?} failed: {}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

/// A network namespace that is deleted when dropped.
struct Netns(String);

impl Netns {
    fn new(tag: &str) -> Self {
        let name = format!("wpd-{tag}-{}", std::process::id());
        let _ = sh(&["ip", "netns", "del", &name]);
        ok(&["ip", "netns", "add", &name]);
        Netns(name)
    }

    fn exec(&self, argv: &[&str]) -> Output {
        let mut v = vec!["ip", "netns", "exec", self.0.as_str()];
        v.extend_from_slice(argv);
        sh(&v)
    }

    fn read(&self, path: &str) -> String {
        let o = self.exec(&["cat", path]);
        assert!(o.status.success(), "cat {path}: {}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stdout).trim().to_string()
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        let _ = sh(&["ip", "netns", "del", &self.0]);
    }
}

#[test]
fn live_system_inspects_without_errors() {
    let opts = InspectOptions { kernel_log: KernelLogSource::Auto, ..Default::default() };
    let r = wireperf_doctor::inspect(&opts).expect("live inspect");
    assert!(r.interfaces.iter().all(|i| i.link.name != "lo"), "loopback is excluded");
    for i in &r.interfaces {
        // Physical only: each has a bus.
        assert!(i.link.bus.is_some(), "{}", i.link.name);
    }
    let text = wireperf_doctor::render::render(&r);
    assert!(text.starts_with("wireperf doctor — kernel"));
    if r.interfaces.iter().any(|i| i.link.speed_mbps.is_none()) {
        assert!(text.contains("not reported"), "{text}");
    }
    wireperf_doctor::json::to_string(&r).expect("json");
    // The binary's exit code reflects the worst finding (0/1/2), never an error (3).
    let o = sh(&[BIN, "--no-kernel-log"]);
    assert!(matches!(o.status.code(), Some(0..=2)), "{o:?}");
    let o = sh(&[BIN, "lo", "--json", "--no-kernel-log"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(v["interfaces"][0]["name"], "lo");
    assert_eq!(v["interfaces"][0]["bus"], "virtual");
}

#[test]
fn live_snapshot_replays_with_root() {
    let dir = tempfile::tempdir().expect("tmp");
    let snap = dir.path().join("snap");
    let o = sh(&[BIN, "--snapshot", snap.to_str().expect("utf8")]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let live = sh(&[BIN, "--json", "--no-kernel-log"]);
    let replay = sh(&[BIN, "--json", "--no-kernel-log", "--root", snap.to_str().expect("utf8")]);
    let a: serde_json::Value = serde_json::from_slice(&live.stdout).expect("json");
    let b: serde_json::Value = serde_json::from_slice(&replay.stdout).expect("json");
    let names = |v: &serde_json::Value| -> Vec<String> {
        v["interfaces"]
            .as_array()
            .map(|a| a.iter().map(|i| i["name"].as_str().unwrap_or("").to_string()).collect())
            .unwrap_or_default()
    };
    assert_eq!(names(&a), names(&b));
    let fids = |v: &serde_json::Value| -> Vec<String> {
        v["interfaces"]
            .as_array()
            .map(|a| {
                a.iter()
                    .flat_map(|i| i["findings"].as_array().cloned().unwrap_or_default())
                    .map(|f| f["id"].as_str().unwrap_or("").to_string())
                    .collect()
            })
            .unwrap_or_default()
    };
    assert_eq!(fids(&a), fids(&b));
    assert!(snap.join("wireperf/kernel.log").exists() || !is_root());
}

#[test]
fn apply_and_undo_on_veth_in_a_netns() {
    if !is_root() || !have("ip") {
        eprintln!("SKIP apply_and_undo_on_veth_in_a_netns: needs root and ip (iproute2)");
        return;
    }
    let ns = Netns::new("apply");
    assert!(ns.exec(&["ip", "link", "add", "wpd0", "type", "veth", "peer", "name", "wpd1"]).status.success());
    for dev in ["wpd0", "wpd1"] {
        assert!(ns.exec(&["ip", "link", "set", dev, "up"]).status.success());
    }
    assert!(ns.exec(&["ip", "link", "set", "wpd0", "txqueuelen", "100"]).status.success());
    let rps_path = "/sys/class/net/wpd0/queues/rx-0/rps_cpus";
    let txq_path = "/sys/class/net/wpd0/tx_queue_len";
    let (rps0, txq0) = (ns.read(rps_path), ns.read(txq_path));
    assert_eq!(txq0, "100");
    let dir = tempfile::tempdir().expect("tmp");
    let journal = dir.path().join("journal.json");
    let j = journal.to_str().expect("utf8");

    let o = ns.exec(&[BIN, "wpd0", "--apply", "--journal", j, "--no-kernel-log"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "apply failed: {out}\n{}", String::from_utf8_lossy(&o.stderr));
    assert!(out.contains("rps-off") && out.contains("txqueuelen"), "{out}");
    let cpus = std::fs::read_to_string("/sys/devices/system/cpu/online").expect("cpus");
    let multi = cpus.trim() != "0";
    if multi {
        assert_ne!(ns.read(rps_path), rps0, "RPS mask changed");
    }
    assert_eq!(ns.read(txq_path), "1000");
    // The peer was not named and is untouched.
    assert_eq!(ns.read("/sys/class/net/wpd1/queues/rx-0/rps_cpus"), rps0);

    let o = ns.exec(&[BIN, "--undo", "--journal", j]);
    assert!(o.status.success(), "undo failed: {}", String::from_utf8_lossy(&o.stderr));
    assert_eq!((ns.read(rps_path), ns.read(txq_path)), (rps0, txq0));
}

#[test]
fn rings_on_veth_are_reported_as_not_changeable() {
    if !is_root() || !have("ip") {
        eprintln!("SKIP rings_on_veth_are_reported_as_not_changeable: needs root and ip");
        return;
    }
    let ns = Netns::new("rings");
    assert!(ns.exec(&["ip", "link", "add", "wpd0", "type", "veth", "peer", "name", "wpd1"]).status.success());
    let o = ns.exec(&[BIN, "wpd0", "--no-kernel-log"]);
    let out = String::from_utf8_lossy(&o.stdout);
    // A down veth: the link is reported down, rings "not reported", the rule "not checked".
    assert!(
        out.contains("link-down") && out.contains("rings       not reported") && out.contains("small-rings"),
        "{out}"
    );
}

#[test]
fn apply_without_root_is_a_clear_error() {
    if !is_root() || !have("setpriv") {
        eprintln!("SKIP apply_without_root_is_a_clear_error: needs root (to drop it) and setpriv");
        return;
    }
    let o = sh(&["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", BIN, "--apply", "--no-kernel-log"]);
    assert_eq!(o.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&o.stderr).contains("must run as root"), "{o:?}");
}
