//! The crate arrows written in `docs/architecture.md` are the ones the manifests declare: a new
//! dependency between workspace crates fails here until the document says so, and the arrows
//! never form a loop.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Each workspace crate (its directory name under `crates/`) and the workspace crates in its
/// `[dependencies]` (not dev or build dependencies), by directory name.
fn declared() -> BTreeMap<String, BTreeSet<String>> {
    let crates = workspace().join("crates");
    let mut dirs: Vec<_> = std::fs::read_dir(&crates).unwrap().map(|e| e.unwrap().path()).collect();
    dirs.retain(|d| d.join("Cargo.toml").is_file());
    let mut package_dir = BTreeMap::new();
    let mut deps = BTreeMap::new();
    for d in &dirs {
        let dir = d.file_name().unwrap().to_string_lossy().to_string();
        let manifest = std::fs::read_to_string(d.join("Cargo.toml")).unwrap();
        let mut section = String::new();
        let mut mine = BTreeSet::new();
        for line in manifest.lines().map(str::trim) {
            if line.starts_with('[') {
                section = line.to_string();
            } else if section == "[package]" && line.starts_with("name") {
                let name = line.split('"').nth(1).unwrap().to_string();
                package_dir.insert(name, dir.clone());
            } else if section == "[dependencies]" && line.starts_with("wireperf") {
                mine.insert(line.split(['.', ' ', '=']).next().unwrap().to_string());
            }
        }
        deps.insert(dir, mine);
    }
    deps.into_iter()
        .map(|(dir, pkgs)| {
            let dirs = pkgs.iter().map(|p| package_dir.get(p).unwrap_or_else(|| panic!("{p}: not ours")).clone());
            (dir, dirs.collect())
        })
        .collect()
}

/// The arrows as `docs/architecture.md` lists them: "- `engine` → protocol, sys".
fn documented() -> BTreeMap<String, BTreeSet<String>> {
    let doc = std::fs::read_to_string(workspace().join("docs/architecture.md")).unwrap();
    doc.lines()
        .filter_map(|l| l.strip_prefix("- `")?.split_once("` → "))
        .map(|(from, to)| {
            let to = if to == "nothing of ours" { BTreeSet::new() } else { to.split(", ").map(String::from).collect() };
            (from.to_string(), to)
        })
        .collect()
}

#[test]
fn crate_arrows_match_docs_architecture_and_point_one_way() {
    let declared = declared();
    assert!(declared.len() >= 10, "found only {:?}", declared.keys());
    assert_eq!(documented(), declared, "docs/architecture.md (left) vs the manifests (right)");
    // No loops: repeatedly remove crates whose dependencies are all removed.
    let mut left = declared.clone();
    while !left.is_empty() {
        let ready: Vec<_> =
            left.iter().filter(|(_, d)| d.iter().all(|x| !left.contains_key(x))).map(|(k, _)| k.clone()).collect();
        assert!(!ready.is_empty(), "the arrows form a loop among {:?}", left.keys());
        for k in ready {
            left.remove(&k);
        }
    }
    assert!(declared.values().all(|d| !d.contains("cli")), "nothing depends on cli");
}
