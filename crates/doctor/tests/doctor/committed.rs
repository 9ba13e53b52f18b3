//! Fixture trees committed to the repository, for tests outside this crate that need a whole
//! host (the cli's lab tests stand a Pi with an RTL8156B on `cdc_ncm` behind a veth with
//! `wireperf -s --host-root`). Each is a scenario of `scenarios.rs` written out; this test
//! keeps the copy equal to the scenario, so the two never drift. `WIREPERF_BLESS_FIXTURES=1`
//! rewrites the copy after a scenario changed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::scenarios::scenario_a;
use crate::support::{ids, inspect_root, set};
use wireperf_doctor::RuleOptions;

/// A file's bytes or a symlink's target.
#[derive(Debug, PartialEq, Eq)]
enum Entry {
    File(Vec<u8>),
    Link(PathBuf),
}

fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, Entry>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir).expect("read_dir").map(|e| e.expect("entry").path()).collect();
    entries.sort();
    for p in entries {
        let rel = p.strip_prefix(root).expect("under root").to_path_buf();
        let meta = std::fs::symlink_metadata(&p).expect("metadata");
        if meta.file_type().is_symlink() {
            out.insert(rel, Entry::Link(std::fs::read_link(&p).expect("readlink")));
        } else if meta.is_dir() {
            walk(root, &p, out);
        } else {
            out.insert(rel, Entry::File(std::fs::read(&p).expect("read")));
        }
    }
}

fn tree(root: &Path) -> BTreeMap<PathBuf, Entry> {
    let mut m = BTreeMap::new();
    walk(root, root, &mut m);
    m
}

fn write(root: &Path, entries: &BTreeMap<PathBuf, Entry>) {
    if root.exists() {
        std::fs::remove_dir_all(root).expect("remove the old copy");
    }
    for (rel, e) in entries {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        match e {
            Entry::File(b) => std::fs::write(&p, b).expect("write"),
            Entry::Link(t) => std::os::unix::fs::symlink(t, &p).expect("symlink"),
        }
    }
}

/// Where the committed copy of a scenario lives.
pub fn committed(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name)
}

#[test]
fn the_committed_rtl8156b_on_cdc_ncm_tree_is_scenario_a() {
    let (t, _) = scenario_a();
    let want = tree(t.root());
    let dir = committed("rtl8156b-cdc-ncm");
    if std::env::var_os("WIREPERF_BLESS_FIXTURES").is_some() {
        write(&dir, &want);
    }
    assert!(dir.is_dir(), "{} is missing: run this test with WIREPERF_BLESS_FIXTURES=1", dir.display());
    let have = tree(&dir);
    let names = |m: &BTreeMap<PathBuf, Entry>| m.keys().cloned().collect::<Vec<_>>();
    assert_eq!(names(&have), names(&want), "files differ: rerun with WIREPERF_BLESS_FIXTURES=1");
    for (rel, e) in &want {
        assert_eq!(have.get(rel), Some(e), "{} differs: rerun with WIREPERF_BLESS_FIXTURES=1", rel.display());
    }
    // And it reads as the scenario does.
    let r = inspect_root(&dir, RuleOptions::default());
    assert_eq!(ids(&r), set(&["generic-usb-driver", "half-duplex", "rps-off", "mtu-locked"]));
}
