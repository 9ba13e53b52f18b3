//! The README introduces and `docs/` is the manual, each thing said once: a paragraph (or a
//! table row, a list item, a code block) of 120 characters or more that appears in two of
//! README.md and docs/*.md fails here, naming both places, because two copies drift apart (one
//! gets the fix, the other keeps the old text) and a maintainer has to edit both. Short blocks
//! (a command line, a heading) may repeat. The same test checks that every relative link in
//! those files points to a file that exists and, for a `.md` target with `#anchor`, to one of
//! its headings.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Shorter units may repeat: a one-line command, a heading, a short note.
const MIN_CHARS: usize = 120;

fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// README.md and every docs/*.md, as (path relative to the workspace, text), in a fixed order.
fn pages() -> Vec<(String, String)> {
    let root = workspace();
    let mut names = vec!["README.md".to_string()];
    let mut docs: Vec<String> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .filter(|n| n.ends_with(".md"))
        .map(|n| format!("docs/{n}"))
        .collect();
    docs.sort();
    names.extend(docs);
    names.into_iter().map(|n| (n.clone(), std::fs::read_to_string(root.join(&n)).unwrap())).collect()
}

fn is_fence(line: &str) -> bool {
    line.trim_start().starts_with("```")
}

/// The blocks of a page, each with its first line (1-based): runs of lines separated by blank
/// lines, a fenced code block whole (blank lines inside it included).
fn blocks(text: &str) -> Vec<(usize, Vec<&str>)> {
    let mut out = Vec::new();
    let mut cur: Vec<&str> = Vec::new();
    let mut start = 0;
    let mut in_fence = false;
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        if in_fence {
            cur.push(line);
            if is_fence(line) {
                in_fence = false;
                out.push((start, std::mem::take(&mut cur)));
            }
        } else if is_fence(line) {
            if !cur.is_empty() {
                out.push((start, std::mem::take(&mut cur)));
            }
            start = n;
            cur.push(line);
            in_fence = true;
        } else if line.trim().is_empty() {
            if !cur.is_empty() {
                out.push((start, std::mem::take(&mut cur)));
            }
        } else {
            if cur.is_empty() {
                start = n;
            }
            cur.push(line);
        }
    }
    if !cur.is_empty() {
        out.push((start, cur));
    }
    out
}

fn is_list_item(line: &str) -> bool {
    let t = line.trim_start();
    t.starts_with("- ") || t.starts_with("* ") || {
        let digits = t.chars().take_while(char::is_ascii_digit).count();
        digits > 0 && t[digits..].starts_with(". ")
    }
}

/// Whitespace collapsed and link targets dropped (`[text](docs/x.md)` and `[text](x.md)` are the
/// same paragraph moved between the README and docs/).
fn normalise(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("](") {
        out.push_str(&rest[..at + 2]);
        rest = &rest[at + 2..];
        if let Some(end) = rest.find(')') {
            rest = &rest[end..];
        }
    }
    out.push_str(rest);
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// What is compared, with its line: a table row by row, a list item by item, any other block
/// (a paragraph, a code block) whole.
fn units(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (start, lines) in blocks(text) {
        if lines[0].trim_start().starts_with('|') {
            out.extend(lines.iter().enumerate().map(|(k, l)| (start + k, normalise(l))));
        } else if is_list_item(lines[0]) {
            let mut item_start = start;
            let mut item: Vec<&str> = Vec::new();
            for (k, l) in lines.iter().enumerate() {
                if is_list_item(l) && !item.is_empty() {
                    out.push((item_start, normalise(&item.join("\n"))));
                    item.clear();
                    item_start = start + k;
                }
                item.push(l);
            }
            out.push((item_start, normalise(&item.join("\n"))));
        } else {
            out.push((start, normalise(&lines.join("\n"))));
        }
    }
    out
}

/// Each repeat as "first place and second place: the start of the text".
fn repeats(pages: &[(String, String)]) -> Vec<String> {
    let mut seen: BTreeMap<String, (String, usize)> = BTreeMap::new();
    let mut found = Vec::new();
    for (page, text) in pages {
        for (line, unit) in units(text) {
            if unit.chars().count() < MIN_CHARS {
                continue;
            }
            match seen.get(&unit) {
                Some((first, first_line)) if first != page => {
                    let excerpt: String = unit.chars().take(80).collect();
                    found.push(format!("{first}:{first_line} and {page}:{line}: {excerpt}…"));
                }
                Some(_) => {}
                None => {
                    seen.insert(unit, (page.clone(), line));
                }
            }
        }
    }
    found
}

#[test]
fn no_paragraph_of_the_readme_or_of_a_docs_page_appears_in_another() {
    let found = repeats(&pages());
    assert!(
        found.is_empty(),
        "{} paragraphs said twice (keep one, in the page that is its home, and link to it):\n{}",
        found.len(),
        found.join("\n")
    );
}

#[test]
fn a_repeat_is_found_across_pages_with_both_places() {
    let para = "A paragraph long enough to count as one, said once here and again there, which the \
                check must report with the file and line of both places.";
    let pages = vec![
        ("README.md".to_string(), format!("# t\n\n{para}\n")),
        ("docs/a.md".to_string(), format!("intro\n\n[a link](../x.md)\n\n{}\n", para.replace(' ', "\n"))),
        ("docs/b.md".to_string(), "- short item\n- another\n".to_string()),
    ];
    let found = repeats(&pages);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].starts_with("README.md:3 and docs/a.md:5: A paragraph"), "{}", found[0]);
}

/// GitHub's anchor for a heading: lower case, letters, digits, `-` and `_` kept, spaces turned
/// into `-`, everything else dropped; a repeated heading gets `-1`, `-2`, ….
fn anchors(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut copies: BTreeMap<String, usize> = BTreeMap::new();
    let mut in_fence = false;
    for line in text.lines() {
        if is_fence(line) {
            in_fence = !in_fence;
        }
        let hashes = line.chars().take_while(|&c| c == '#').count();
        if in_fence || hashes == 0 || !line[hashes..].starts_with(' ') {
            continue;
        }
        let slug: String = line[hashes..]
            .trim()
            .chars()
            .filter_map(|c| match c {
                ' ' => Some('-'),
                '-' | '_' => Some(c),
                c if c.is_alphanumeric() => Some(c),
                _ => None,
            })
            .flat_map(char::to_lowercase)
            .collect();
        let n = copies.entry(slug.clone()).or_insert(0);
        out.push(if *n == 0 { slug } else { format!("{slug}-{n}") });
        *n += 1;
    }
    out
}

/// The targets of the page's links and images outside code (`[text](target)`), with their line.
fn links(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut in_fence = false;
    for (i, line) in text.lines().enumerate() {
        if is_fence(line) {
            in_fence = !in_fence;
            continue;
        }
        if in_fence {
            continue;
        }
        // Inline code is not a link: drop what is between backticks.
        let prose: String = line.split('`').step_by(2).collect::<Vec<_>>().join(" ");
        let mut rest = prose.as_str();
        while let Some(at) = rest.find("](") {
            rest = &rest[at + 2..];
            if let Some(end) = rest.find(')') {
                out.push((i + 1, rest[..end].to_string()));
                rest = &rest[end..];
            }
        }
    }
    out
}

#[test]
fn every_relative_link_in_the_readme_and_docs_points_to_a_file_and_heading() {
    let root = workspace();
    let mut broken = Vec::new();
    for (page, text) in pages() {
        let dir = Path::new(&page).parent().unwrap().to_path_buf();
        for (line, target) in links(&text) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            let (file, anchor) = match target.split_once('#') {
                Some((f, a)) => (f, Some(a)),
                None => (target.as_str(), None),
            };
            let path = if file.is_empty() { PathBuf::from(&page) } else { dir.join(file) };
            let Ok(body) =
                std::fs::read(root.join(&path)).or_else(|_| std::fs::read_dir(root.join(&path)).map(|_| Vec::new()))
            else {
                broken.push(format!("{page}:{line}: {target}: no such file"));
                continue;
            };
            let is_md = file.is_empty() || file.ends_with(".md");
            if let Some(anchor) = anchor.filter(|_| is_md)
                && !anchors(&String::from_utf8_lossy(&body)).iter().any(|a| a == anchor)
            {
                broken.push(format!("{page}:{line}: {target}: no heading with that anchor"));
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn anchors_are_githubs() {
    let text = "# Why is my link slow? `--why`\n```\n# not a heading\n```\n## UDP (`-u`)\n## UDP (`-u`)\n";
    assert_eq!(anchors(text), ["why-is-my-link-slow---why", "udp--u", "udp--u-1"]);
}
