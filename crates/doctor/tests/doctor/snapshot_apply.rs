//! --snapshot round trips and --apply/--undo on fixture trees (no root needed: `--root` mode
//! writes into the tree).

use wireperf_doctor::{DoctorConfig, run_with};

/// Runs the CLI entry point, capturing its output.
fn run(args: &DoctorConfig) -> Result<i32, wireperf_doctor::Error> {
    let mut sink = Vec::new();
    run_with(args, &mut sink)
}
use wireperf_doctor::journal;
use wireperf_doctor::{InspectOptions, Root, RuleOptions};

use crate::scenarios::scenario_a;
use crate::support::{ids, inspect_root};

fn snapshot_of(root: &std::path::Path, out: &std::path::Path) {
    let r = Root::at(root);
    let opts = InspectOptions { root: Some(root.to_path_buf()), ..Default::default() };
    let (_, log) = wireperf_doctor::inspect_with(&r, &opts).expect("inspect");
    wireperf_doctor::snapshot_capture::capture(&r, log.as_deref(), out).expect("capture");
}

#[test]
fn snapshot_directory_replays_the_same_report() {
    let (t, _) = scenario_a();
    let before = inspect_root(t.root(), RuleOptions::default());
    let out = tempfile::tempdir().expect("tmp");
    let snap = out.path().join("snap");
    snapshot_of(t.root(), &snap);
    let after = inspect_root(&snap, RuleOptions::default());
    assert_eq!(ids(&after), ids(&before));
    // Identical JSON except for the root path.
    let mut a = wireperf_doctor::json::to_value(&before).expect("json");
    let mut b = wireperf_doctor::json::to_value(&after).expect("json");
    for v in [&mut a, &mut b] {
        v["root"] = serde_json::Value::Null;
        v["host"]["kernel_log"]["source"] = serde_json::Value::Null;
    }
    assert_eq!(a, b);
    // Symlinks stay relative, as in sysfs; the errno sidecar of xps_cpus was kept.
    let link = std::fs::read_link(snap.join("sys/class/net/enx00e04c680001")).expect("link");
    assert!(link.is_relative(), "{link:?}");
    assert!(snap.join("wireperf/kernel.log").exists());
    // Only files that were read are copied: cdc_ncm/ attributes were never read.
    assert!(!snap.join("sys/class/net/enx00e04c680001/cdc_ncm/rx_max").exists());
}

#[test]
fn snapshot_tar_unpacks_and_replays() {
    let (t, _) = scenario_a();
    let out = tempfile::tempdir().expect("tmp");
    let tar_path = out.path().join("snap.tar");
    snapshot_of(t.root(), &tar_path);
    let unpack = out.path().join("unpacked");
    tar::Archive::new(std::fs::File::open(&tar_path).expect("open")).unpack(&unpack).expect("unpack");
    let r = inspect_root(&unpack, RuleOptions::default());
    assert_eq!(ids(&r), crate::support::set(&["generic-usb-driver", "half-duplex", "rps-off", "mtu-locked"]));
}

#[test]
fn apply_and_undo_on_a_fixture_root() {
    let tree = crate::support::fixture::Tree::new();
    crate::support::fixture::Host::default().write(&tree);
    crate::support::fixture::PciNic {
        net: crate::support::fixture::Netdev {
            name: "enp3s0",
            queues: 1,
            rps: "0",
            tx_queue_len: "100",
            ..Default::default()
        },
        ..Default::default()
    }
    .write(&tree);
    let rps = tree.root().join("sys/class/net/enp3s0/queues/rx-0/rps_cpus");
    let txq = tree.root().join("sys/class/net/enp3s0/tx_queue_len");
    let read = |p: &std::path::Path| std::fs::read_to_string(p).expect("read").trim().to_string();
    let (rps0, txq0) = (read(&rps), read(&txq));
    let args = DoctorConfig { root: Some(tree.root().to_path_buf()), apply: true, ..Default::default() };
    assert_eq!(run(&args).expect("apply"), 0);
    assert_eq!((read(&rps).as_str(), read(&txq).as_str()), ("f", "1000"));
    // Default journal location in --root mode.
    let jpath = tree.root().join("var/lib/wireperf/doctor-journal.json");
    let j = journal::load(&jpath).expect("journal");
    assert_eq!(j.entries.len(), 2);
    assert!(!j.undone);
    // Nothing left to apply: a second run changes nothing and keeps the journal.
    assert_eq!(run(&args).expect("apply again"), 0);
    assert_eq!(journal::load(&jpath).expect("journal").entries.len(), 2);
    let undo = DoctorConfig { root: Some(tree.root().to_path_buf()), undo: true, ..Default::default() };
    assert_eq!(run(&undo).expect("undo"), 0);
    assert_eq!((read(&rps), read(&txq)), (rps0, txq0));
    assert!(journal::load(&jpath).expect("journal").undone);
    // A second undo is refused: it would restore stale values.
    assert!(run(&undo).is_err());
}

#[test]
fn apply_only_touches_named_interfaces() {
    let tree = crate::support::fixture::Tree::new();
    crate::support::fixture::Host::default().write(&tree);
    crate::support::fixture::PciNic {
        net: crate::support::fixture::Netdev { name: "enp3s0", queues: 1, rps: "0", ..Default::default() },
        ..Default::default()
    }
    .write(&tree);
    crate::support::fixture::UsbNic {
        net: crate::support::fixture::Netdev { rps: "0", ..Default::default() },
        ..Default::default()
    }
    .write(&tree);
    let jpath = tree.root().join("j.json");
    let args = DoctorConfig {
        root: Some(tree.root().to_path_buf()),
        apply: true,
        interfaces: vec!["enp3s0".into()],
        journal: Some(jpath.clone()),
        ..Default::default()
    };
    run(&args).expect("apply");
    let read = |p: &str| std::fs::read_to_string(tree.root().join(p)).expect("read").trim().to_string();
    assert_eq!(read("sys/class/net/enp3s0/queues/rx-0/rps_cpus"), "f");
    assert_eq!(read("sys/class/net/enx00e04c680001/queues/rx-0/rps_cpus"), "0");
    let j = journal::load(&jpath).expect("journal");
    assert!(j.entries.iter().all(|e| e.iface == "enp3s0"));
}
