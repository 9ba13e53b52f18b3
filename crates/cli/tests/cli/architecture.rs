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

/// Every `.rs` file under `crates/*/src`.
fn source_files(root: &std::path::Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for krate in std::fs::read_dir(root.join("crates")).unwrap() {
        let src = krate.unwrap().path().join("src");
        if src.is_dir() {
            rust_files(&src, &mut files);
        }
    }
    files
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
    let files = source_files(&root);
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

/// `text` with comments removed and the contents of string and character literals blanked, so
/// only code is left to read paths from (lines kept, for nothing else reads positions).
fn blank_comments_and_literals(text: &str) -> String {
    let b: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < b.len() {
        let at = |j: usize| b.get(j).copied().unwrap_or('\0');
        if b[i] == '/' && at(i + 1) == '/' {
            while i < b.len() && b[i] != '\n' {
                i += 1;
            }
        } else if b[i] == '/' && at(i + 1) == '*' {
            let mut depth = 0;
            while i < b.len() {
                if b[i] == '/' && at(i + 1) == '*' {
                    depth += 1;
                    i += 2;
                } else if b[i] == '*' && at(i + 1) == '/' {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if b[i] == 'r'
            && (at(i + 1) == '"' || (at(i + 1) == '#' && (at(i + 2) == '"' || at(i + 2) == '#')))
            && !b.get(i.wrapping_sub(1)).is_some_and(|c| c.is_alphanumeric() || *c == '_')
        {
            let hashes = b[i + 1..].iter().take_while(|c| **c == '#').count();
            i += 2 + hashes;
            while i < b.len()
                && !(b[i] == '"' && b[i + 1..].iter().take(hashes).filter(|c| **c == '#').count() == hashes)
            {
                i += 1;
            }
            i += 1 + hashes;
            out.push_str("\"\"");
        } else if b[i] == '"' {
            i += 1;
            while i < b.len() && b[i] != '"' {
                i += if b[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
        } else if b[i] == '\''
            && (at(i + 2) == '\'' || (at(i + 1) == '\\' && b[i + 2..].iter().take(8).any(|c| *c == '\'')))
        {
            // A character literal ('x', '\n', '\u{..}'), not a lifetime.
            i += 1;
            while i < b.len() && b[i] != '\'' {
                i += if b[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("' '");
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    out
}

/// `code` without the items marked `#[cfg(test)]` (a `mod tests { … }`, a `mod x;`, a `use`).
fn without_test_items(code: &str) -> String {
    let mut out = String::new();
    let mut rest = code;
    while let Some(at) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..at]);
        let item = &rest[at + "#[cfg(test)]".len()..];
        let mut depth = 0;
        let mut end = item.len();
        for (k, c) in item.char_indices() {
            match c {
                ';' if depth == 0 => {
                    end = k + 1;
                    break;
                }
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = k + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        // Attributes on the item (`#[path = …]`) hold no braces; skipping up to the end is enough.
        rest = &item[end..];
    }
    out.push_str(rest);
    out
}

/// `code` without its attributes (`#[cfg(feature = …)]`, `#![forbid(…)]`).
fn without_attributes(code: &str) -> String {
    let mut out = String::new();
    let mut depth = 0;
    let mut chars = code.chars().peekable();
    while let Some(c) = chars.next() {
        if depth == 0 && c == '#' && matches!(chars.peek(), Some('[' | '!')) {
            for c in chars.by_ref() {
                match c {
                    '[' => depth += 1,
                    ']' => depth -= 1,
                    _ => {}
                }
                if depth == 0 && c == ']' {
                    break;
                }
            }
            continue;
        }
        out.push(c);
    }
    out
}

/// Every path in `code` that starts with one of `roots` (`crate`, `super`, `self`, a child
/// module), as its segments, each `{a, b::c}` group expanded. A root counts only where a path
/// starts (not after `::` or inside a longer name).
fn paths_from(code: &str, roots: &BTreeSet<String>) -> Vec<Vec<String>> {
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    let chars: Vec<(usize, char)> = code.char_indices().collect();
    let mut out = Vec::new();
    for (n, &(at, c)) in chars.iter().enumerate() {
        if !ident(c) || n > 0 && (ident(chars[n - 1].1) || chars[n - 1].1 == ':') {
            continue;
        }
        let word: String = code[at..].chars().take_while(|c| ident(*c)).collect();
        if !roots.contains(&word) || !code[at + word.len()..].starts_with("::") {
            continue;
        }
        expand(&code[at..], Vec::new(), &mut out);
    }
    out
}

/// Reads one path (`a::b::{c, d::e}::…`) from the start of `text` onto `prefix`.
fn expand(text: &str, mut prefix: Vec<String>, out: &mut Vec<Vec<String>>) -> usize {
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut i = 0;
    loop {
        let skip = text[i..].len() - text[i..].trim_start().len();
        i += skip;
        if text[i..].starts_with('{') {
            i += 1;
            loop {
                i += expand(&text[i..], prefix.clone(), out);
                let skip = text[i..].len() - text[i..].trim_start().len();
                i += skip;
                match text[i..].chars().next() {
                    Some(',') => i += 1,
                    Some('}') => return i + 1,
                    _ => return i,
                }
                let skip = text[i..].len() - text[i..].trim_start().len();
                if text[i + skip..].starts_with('}') {
                    return i + skip + 1;
                }
            }
        }
        let word: String = text[i..].chars().take_while(|c| ident(*c) || *c == '*').collect();
        if word.is_empty() {
            out.push(prefix);
            return i;
        }
        i += word.len();
        prefix.push(word);
        if text[i..].starts_with("::") && !text[i + 2..].starts_with('<') {
            i += 2;
        } else {
            out.push(prefix);
            return i;
        }
    }
}

/// One crate's source files as modules: the module path of each file reached from a crate root
/// by its non-test `mod` lines, and the file of each module path.
struct ModuleTree {
    file_of: BTreeMap<Vec<String>, PathBuf>,
    code: BTreeMap<PathBuf, String>,
}

impl ModuleTree {
    fn read(src: &std::path::Path) -> ModuleTree {
        let mut tree = ModuleTree { file_of: BTreeMap::new(), code: BTreeMap::new() };
        for root in ["lib.rs", "main.rs"] {
            if src.join(root).is_file() {
                tree.visit(src, &src.join(root), Vec::new());
            }
        }
        tree
    }

    fn visit(&mut self, src: &std::path::Path, file: &std::path::Path, module: Vec<String>) {
        let code = without_test_items(&blank_comments_and_literals(&std::fs::read_to_string(file).unwrap()));
        let dir = if module.is_empty() { src.to_path_buf() } else { src.join(module.join("/")) };
        let mut children = Vec::new();
        for stmt in without_attributes(&code).split([';', '{', '}']) {
            let words: Vec<&str> = stmt.split_whitespace().filter(|w| !w.starts_with("pub")).collect();
            if let ["mod", name] = words[..] {
                children.push(name.to_string());
            }
        }
        self.code.insert(file.to_path_buf(), code);
        self.file_of.insert(module.clone(), file.to_path_buf());
        for name in children {
            let mut child = module.clone();
            child.push(name.clone());
            let flat = dir.join(format!("{name}.rs"));
            let nested = dir.join(&name).join("mod.rs");
            if flat.is_file() {
                self.visit(src, &flat, child);
            } else if nested.is_file() {
                self.visit(src, &nested, child);
            }
        }
    }

    /// The files `file` (module `module`) imports from: each path resolved to the file of its
    /// longest module prefix, an item re-exported there (`pub use x::Item`) followed to `x`.
    fn imports(&self, module: &[String]) -> BTreeSet<PathBuf> {
        let file = &self.file_of[module];
        let code = &self.code[file];
        let children: BTreeSet<String> = self
            .file_of
            .keys()
            .filter(|m| m.len() == module.len() + 1 && m.starts_with(module))
            .map(|m| m[module.len()].clone())
            .collect();
        let mut roots: BTreeSet<String> = ["crate", "super", "self"].map(String::from).into();
        roots.extend(children.iter().cloned());
        // A `pub use` re-exports: it is no import of this file's own (what names the item
        // through it is pointed at where the item lives, in `resolve`).
        let code: String =
            code.split_inclusive(';').filter(|s| !(s.trim_start().starts_with("pub") && s.contains(" use "))).collect();
        let mut out = BTreeSet::new();
        for path in paths_from(&code, &roots) {
            if let Some(target) = self.resolve(module, &path, 0).filter(|t| t != file) {
                out.insert(target);
            }
        }
        out
    }

    /// The absolute module path `path` means inside `module`.
    fn absolute(module: &[String], path: &[String]) -> Option<Vec<String>> {
        let mut at: Vec<String> = module.to_vec();
        let mut rest = path;
        match path.first().map(String::as_str) {
            Some("crate") => {
                at.clear();
                rest = &path[1..];
            }
            Some("self") => rest = &path[1..],
            _ => {}
        }
        while rest.first().is_some_and(|s| s == "super") {
            at.pop()?;
            rest = &rest[1..];
        }
        at.extend(rest.iter().cloned());
        Some(at)
    }

    fn resolve(&self, module: &[String], path: &[String], depth: usize) -> Option<PathBuf> {
        let abs = Self::absolute(module, path)?;
        let (len, file) = (0..=abs.len()).rev().find_map(|n| Some((n, self.file_of.get(&abs[..n])?)))?;
        let Some(item) = abs.get(len).filter(|_| depth < 8) else { return Some(file.clone()) };
        // `pub use a::b::{Item, …}` in the file the path reached: the item lives in `a::b`.
        let here = &abs[..len];
        let children: BTreeSet<String> = self
            .file_of
            .keys()
            .filter(|m| m.len() == here.len() + 1 && m.starts_with(here))
            .map(|m| m[here.len()].clone())
            .collect();
        let mut roots: BTreeSet<String> = ["crate", "super", "self"].map(String::from).into();
        roots.extend(children);
        let code = &self.code[file];
        for stmt in code.split(';').filter(|s| s.trim_start().starts_with("pub") && s.contains(" use ")) {
            let stmt = &stmt[stmt.find(" use ").unwrap() + 5..];
            for p in paths_from(stmt, &roots) {
                let named = p.last().is_some_and(|l| l == item) || stmt.contains(&format!(" as {item}"));
                if named && p.len() > 1 {
                    return self.resolve(here, &p[..p.len() - 1], depth + 1).or(Some(file.clone()));
                }
            }
        }
        Some(file.clone())
    }
}

/// The import graph of one crate's files (file → the files it imports from).
fn file_graph(krate: &std::path::Path) -> BTreeMap<PathBuf, BTreeSet<PathBuf>> {
    let tree = ModuleTree::read(&krate.join("src"));
    tree.file_of.iter().map(|(m, f)| (f.clone(), tree.imports(m))).collect()
}

/// Every loop of `graph`: for each file on a loop, the shortest loop through it, each loop once.
fn cycles(graph: &BTreeMap<PathBuf, BTreeSet<PathBuf>>) -> Vec<Vec<PathBuf>> {
    let mut found = BTreeSet::new();
    for start in graph.keys() {
        // Breadth first from `start` until it is reached again.
        let mut came_from: BTreeMap<&PathBuf, &PathBuf> = BTreeMap::new();
        let mut queue = std::collections::VecDeque::from([start]);
        let mut closing = None;
        while let Some(at) = queue.pop_front() {
            for next in graph.get(at).into_iter().flatten() {
                if next == start {
                    closing = Some(at);
                    break;
                }
                if !came_from.contains_key(next) {
                    came_from.insert(next, at);
                    queue.push_back(next);
                }
            }
            if closing.is_some() {
                break;
            }
        }
        let Some(mut at) = closing else { continue };
        let mut cycle = vec![at.clone()];
        while at != start {
            at = came_from[at];
            cycle.push(at.clone());
        }
        cycle.reverse();
        let first = cycle.iter().enumerate().min_by_key(|(_, f)| *f).map(|(i, _)| i).unwrap();
        cycle.rotate_left(first);
        found.insert(cycle);
    }
    found.into_iter().collect()
}

/// No crate's files import one another in a loop: each file may use what its module tree
/// puts below or beside it, but never be imported back by what it imports. Paths are read from
/// code only (comments, strings and `#[cfg(test)]` items skipped): `crate::…`, `super::…`,
/// `self::…` and a child module's name, each resolved to the file of its longest module
/// prefix, and an item a file re-exports followed to where it lives; a `mod` line is no import.
#[test]
fn no_crate_has_an_import_loop_between_its_files() {
    let root = workspace();
    let mut loops = Vec::new();
    let mut files = 0;
    for krate in std::fs::read_dir(root.join("crates")).unwrap().map(|e| e.unwrap().path()) {
        if !krate.join("src").is_dir() {
            continue;
        }
        let graph = file_graph(&krate);
        files += graph.len();
        for cycle in cycles(&graph) {
            let show = |f: &PathBuf| f.strip_prefix(krate.join("src")).unwrap_or(f).display().to_string();
            let mut names: Vec<String> = cycle.iter().map(show).collect();
            names.push(show(&cycle[0]));
            loops.push(format!("{}: {}", krate.file_name().unwrap().to_string_lossy(), names.join(" → ")));
        }
    }
    assert!(files > 100, "read only {files} files");
    assert!(loops.is_empty(), "import loops between files:\n{}", loops.join("\n"));
}

#[test]
fn the_loop_reader_sees_groups_relative_paths_and_reexports() {
    let roots: BTreeSet<String> = ["crate", "super", "self", "child"].map(String::from).into();
    let code = blank_comments_and_literals(
        "use crate::{a::{b, c::D}, e};\n// crate::comment\nlet s = \"crate::string\";\nsuper::f(); child::g(); x::crate_y::z;",
    );
    let got: Vec<String> = paths_from(&code, &roots).iter().map(|p| p.join("::")).collect();
    assert_eq!(got, ["crate::a::b", "crate::a::c::D", "crate::e", "super::f", "child::g"]);
    assert_eq!(without_test_items("a\n#[cfg(test)]\nmod tests { fn x() { } }\nb"), "a\n\nb");
    let m = |s: &[&str]| s.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert_eq!(ModuleTree::absolute(&m(&["a", "b"]), &m(&["super", "c"])), Some(m(&["a", "c"])));
    let g: BTreeMap<PathBuf, BTreeSet<PathBuf>> = [("a", &["b"][..]), ("b", &["c"]), ("c", &["a"]), ("d", &["a"])]
        .iter()
        .map(|(k, v)| (PathBuf::from(k), v.iter().map(PathBuf::from).collect()))
        .collect();
    assert_eq!(cycles(&g), vec![["a", "b", "c"].map(PathBuf::from).to_vec()]);
}

/// Long files hide more than one job: no source file is over 600 lines.
#[test]
fn no_source_file_is_over_600_lines() {
    let root = workspace();
    let files = source_files(&root);
    let mut long: Vec<String> = files
        .iter()
        .filter_map(|f| {
            let n = std::fs::read_to_string(f).unwrap().lines().count();
            (n > 600).then(|| format!("{}: {n} lines", f.strip_prefix(&root).unwrap_or(f).display()))
        })
        .collect();
    long.sort();
    assert!(long.is_empty(), "source files over 600 lines:\n{}", long.join("\n"));
}
