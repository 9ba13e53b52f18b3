//! The engine's top-level modules import one another one way only. `lib.rs` lists them leaves
//! first in its Layout section; every module (all its files) may import only modules listed
//! above it, so the arrows form no loop, and a module missing from the list fails here too.
//! (Inside `stream`, the loops import `spec`, `context`, `loop_end`, `counters`, `budget` and
//! `buffer`, never `stream/mod.rs`; that is not checked here.)

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn src() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The top-level modules in the order `lib.rs`'s Layout names them ("//! - `name`: …").
fn layout_order(lib: &str) -> Vec<String> {
    let layout = lib.split("//! # Layout").nth(1).expect("lib.rs has a Layout section");
    layout
        .lines()
        .skip(1)
        .take_while(|l| l.starts_with("//!"))
        .filter_map(|l| l.strip_prefix("//! - ")?.trim_start_matches('[').strip_prefix('`'))
        .map(|l| l.split('`').next().unwrap().to_string())
        .collect()
}

/// `pub use module::{Item, …}` in `lib.rs`: which module a `crate::Item` path means.
fn reexport_owner(lib: &str, item: &str) -> Option<String> {
    lib.lines().filter_map(|l| l.strip_prefix("pub use ")).find_map(|l| {
        let (module, items) = l.split_once("::")?;
        let names = items.trim_end_matches(';').trim_matches(['{', '}']);
        names
            .split(',')
            .any(|n| n.split(" as ").last().unwrap().trim() == item || n.trim().starts_with(&format!("{item} ")))
            .then(|| module.to_string())
    })
}

/// The text of a module without comments and without its `#[cfg(test)]` part.
fn code(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    let text = text.split("#[cfg(test)]").next().unwrap();
    text.lines().map(|l| l.split("//").next().unwrap()).collect::<Vec<_>>().join("\n")
}

/// The first path segment after every `crate::` (each name of a `crate::{a, b::c}` group).
fn crate_refs(code: &str) -> BTreeSet<String> {
    let ident = |s: &str| s.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect::<String>();
    let mut out = BTreeSet::new();
    for rest in code.split("crate::").skip(1) {
        if let Some(group) = rest.strip_prefix('{') {
            let mut depth = 0;
            let mut item = String::new();
            for c in group.chars() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        out.insert(ident(item.trim()));
                        item.clear();
                        continue;
                    }
                    _ => {}
                }
                item.push(c);
            }
            out.insert(ident(item.trim()));
        } else {
            out.insert(ident(rest));
        }
    }
    out.retain(|s| !s.is_empty());
    out
}

fn files_of(module: &str) -> Vec<PathBuf> {
    let file = src().join(format!("{module}.rs"));
    if file.is_file() {
        return vec![file];
    }
    let mut out = Vec::new();
    let mut dirs = vec![src().join(module)];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).unwrap_or_else(|_| panic!("no module file for {module}")) {
            let p = e.unwrap().path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    out
}

#[test]
fn every_module_imports_only_modules_listed_above_it_in_the_layout() {
    let lib = std::fs::read_to_string(src().join("lib.rs")).unwrap();
    let order = layout_order(&lib);
    let declared: BTreeSet<String> = lib
        .lines()
        .filter_map(|l| l.trim_start_matches("pub ").strip_prefix("mod "))
        .map(|l| l.trim_end_matches(';').to_string())
        .collect();
    assert_eq!(order.iter().cloned().collect::<BTreeSet<_>>(), declared, "the Layout lists every module once");
    assert_eq!(order.len(), declared.len(), "no module listed twice: {order:?}");
    let mut wrong = Vec::new();
    for (rank, module) in order.iter().enumerate() {
        for file in files_of(module) {
            for r in crate_refs(&code(&file)) {
                let target = if declared.contains(&r) { Some(r.clone()) } else { reexport_owner(&lib, &r) };
                let Some(target) = target else { continue };
                let pos = order.iter().position(|m| *m == target).unwrap();
                if pos >= rank && target != *module {
                    wrong.push(format!("{} imports {target} (listed below {module})", file.display()));
                }
            }
        }
    }
    assert!(wrong.is_empty(), "imports against the arrows:\n{}", wrong.join("\n"));
}

#[test]
fn the_reader_sees_grouped_and_reexported_imports() {
    let refs = crate_refs("use crate::{config::Family, stream::{self, Stream}};\nlet x = crate::SendMode::Write;");
    assert_eq!(refs, ["SendMode", "config", "stream"].map(String::from).into());
    let lib = "pub use config::{ClientConfig, Family, SendMode, ServerConfig};\npub use start::{rfc1123, version_line as report_version};";
    assert_eq!(reexport_owner(lib, "SendMode").as_deref(), Some("config"));
    assert_eq!(reexport_owner(lib, "report_version").as_deref(), Some("start"));
}

#[test]
fn the_stream_leaves_import_no_other_stream_module() {
    // What every stream loop reads (its spec, budget, buffers, low-water mark, UDP counts)
    // must not reach back into a loop: `spec` reading `udp` once made spec → udp → spec.
    for leaf in ["spec", "budget", "buffer", "low_water", "udp_stats", "sock", "io_report"] {
        let text = code(&src().join("stream").join(format!("{leaf}.rs")));
        assert!(
            !text.contains("super::") && !text.contains("crate::stream"),
            "stream/{leaf}.rs imports a stream module"
        );
    }
}
