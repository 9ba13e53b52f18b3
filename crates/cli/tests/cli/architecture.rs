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

/// Every `.rs` file under `dir`, recursively.
fn rust_files(dir: &std::path::Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Standard output is written in one place, `sys::stdout`, which turns a reader that went away
/// (`wireperf ... | head -1`, a closed pipe) into a quiet exit instead of a panic from
/// `println!` or an error printed for every later line. A `println!` or a raw `io::stdout()`
/// anywhere else would bring that panic back, so this test finds them. The live view (`tui`)
/// is exempt: it runs only on a terminal and owns the screen while it does. Asking whether
/// stdout is a terminal writes nothing and is allowed.
#[test]
fn standard_output_is_written_only_through_sys_stdout() {
    let root = workspace();
    let mut files = Vec::new();
    for krate in std::fs::read_dir(root.join("crates")).unwrap() {
        let src = krate.unwrap().path().join("src");
        if src.is_dir() {
            rust_files(&src, &mut files);
        }
    }
    assert!(files.len() > 50, "found only {} source files", files.len());
    let exempt =
        |p: &std::path::Path| p.ends_with("sys/src/stdout.rs") || p.components().any(|c| c.as_os_str() == "tui");
    let mut found = Vec::new();
    for file in files.iter().filter(|f| !exempt(f)) {
        let text = std::fs::read_to_string(file).unwrap();
        for (n, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            let printing = ["println!(", "print!("]
                .iter()
                .any(|m| code.match_indices(m).any(|(at, _)| !code[..at].ends_with('e')));
            let raw = code.contains("io::stdout()") && !code.contains("io::stdout().is_terminal()");
            if printing || raw {
                found.push(format!(
                    "{}:{}: {}",
                    file.strip_prefix(&root).unwrap_or(file).display(),
                    n + 1,
                    line.trim()
                ));
            }
        }
    }
    assert!(found.is_empty(), "write standard output through wireperf_sys::stdout:\n{}", found.join("\n"));
}
