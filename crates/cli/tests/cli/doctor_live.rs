//! `wireperf doctor` on the live path: this machine's NICs, and --apply/--undo on a veth inside
//! a network namespace the test creates (removed by a Drop guard even when the test fails). No
//! traffic is sent.
//!
//! These tests need root and iproute2, as the whole suite does (the README's test command runs
//! as root and installs what is missing); without them they fail with a message saying so,
//! never pass quietly.

use std::process::{Command, Output};

use wireperf_doctor::{InspectOptions, KernelLogSource};

/// `wireperf doctor ARGS...`: the one binary, as a user runs it (also under `ip netns exec`).
fn doctor_argv(args: &[&str]) -> Vec<String> {
    let bin = crate::support::harness::wireperf();
    let mut v = vec![bin.to_string_lossy().into_owned(), "doctor".to_string()];
    v.extend(args.iter().map(|a| a.to_string()));
    v
}

/// Runs `wireperf doctor ARGS...` on the host.
fn doctor(args: &[&str]) -> Output {
    let v = doctor_argv(args);
    sh(&v.iter().map(String::as_str).collect::<Vec<_>>())
}

/// Fails the test, with what to do, when it does not run as root with `tools` on the PATH.
fn require_root_and(tools: &[&str]) {
    assert!(
        wireperf_doctor::apply::is_root_user(),
        "this test needs root (network namespaces, --apply): run the README's test command as root"
    );
    for t in tools {
        assert!(
            Command::new(t).arg("--version").output().is_ok(),
            "this test needs `{t}` on the PATH: the README's test command installs it"
        );
    }
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

    /// `wireperf doctor ARGS...` inside the namespace.
    fn exec_doctor(&self, args: &[&str]) -> Output {
        let v = doctor_argv(args);
        self.exec(&v.iter().map(String::as_str).collect::<Vec<_>>())
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
    let o = doctor(&["--no-kernel-log"]);
    assert!(matches!(o.status.code(), Some(0..=2)), "{o:?}");
    let o = doctor(&["lo", "--json", "--no-kernel-log"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(v["interfaces"][0]["name"], "lo");
    assert_eq!(v["interfaces"][0]["bus"], "virtual");
}

#[test]
fn live_snapshot_replays_with_root() {
    let dir = tempfile::tempdir().expect("tmp");
    let snap = dir.path().join("snap");
    require_root_and(&[]);
    let o = doctor(&["--snapshot", snap.to_str().expect("utf8")]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let live = doctor(&["--json", "--no-kernel-log"]);
    let replay = doctor(&["--json", "--no-kernel-log", "--root", snap.to_str().expect("utf8")]);
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
    // As root the snapshot carries the kernel log too.
    assert!(snap.join("wireperf/kernel.log").exists(), "snapshot without wireperf/kernel.log");
}

#[test]
fn apply_and_undo_on_veth_in_a_netns() {
    require_root_and(&["ip"]);
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

    let o = ns.exec_doctor(&["wpd0", "--apply", "--journal", j, "--no-kernel-log"]);
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

    let o = ns.exec_doctor(&["--undo", "--journal", j]);
    assert!(o.status.success(), "undo failed: {}", String::from_utf8_lossy(&o.stderr));
    assert_eq!((ns.read(rps_path), ns.read(txq_path)), (rps0, txq0));
}

#[test]
fn rings_on_veth_are_reported_as_not_changeable() {
    require_root_and(&["ip"]);
    let ns = Netns::new("rings");
    assert!(ns.exec(&["ip", "link", "add", "wpd0", "type", "veth", "peer", "name", "wpd1"]).status.success());
    let o = ns.exec_doctor(&["wpd0", "--no-kernel-log"]);
    let out = String::from_utf8_lossy(&o.stdout);
    // A down veth: the link is reported down, rings "not reported", the rule "not checked".
    assert!(
        out.contains("link-down") && out.contains("rings       not reported") && out.contains("small-rings"),
        "{out}"
    );
}

#[test]
fn apply_without_root_is_a_clear_error() {
    require_root_and(&["setpriv"]);
    let mut argv = vec!["setpriv".to_string(), "--reuid=65534".into(), "--regid=65534".into(), "--clear-groups".into()];
    argv.extend(doctor_argv(&["--apply", "--no-kernel-log"]));
    let o = sh(&argv.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(o.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&o.stderr).contains("must run as root"), "{o:?}");
}
