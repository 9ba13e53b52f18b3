//! `crates/cli/symbol-order.txt`, the code order the release build links with (`build.rs`,
//! docs/performance.md "Memory"), is what `scripts/symbol-order` writes: one linker symbol per
//! line, each once, and it covers the code of a plain test, not only of one side or one crate.

use std::collections::BTreeSet;

fn order() -> Vec<String> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/symbol-order.txt");
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e} (run scripts/symbol-order)"));
    text.lines().map(String::from).collect()
}

#[test]
fn the_symbol_order_lists_linker_symbols_once_each() {
    let names = order();
    assert!(names.len() > 500, "only {} functions: was the profile run cut short?", names.len());
    for n in &names {
        let symbol =
            !n.is_empty() && !n.starts_with("0x") && n.chars().all(|c| c.is_ascii_alphanumeric() || "_.$".contains(c));
        assert!(symbol, "not a linker symbol: {n:?}");
    }
    let unique: BTreeSet<&String> = names.iter().collect();
    assert_eq!(unique.len(), names.len(), "a symbol listed twice");
}

#[test]
fn the_symbol_order_covers_a_plain_tests_code() {
    let names = order();
    let has = |what: &str| names.iter().any(|n| n.contains(what));
    // v0 (`_R…`) and legacy (`_ZN…`) mangling both spell a crate name as its length and name.
    for krate in ["8wireperf", "15wireperf_engine", "17wireperf_protocol", "12clap_builder", "3std"] {
        assert!(has(krate), "no function of {krate}");
    }
    assert!(names.iter().any(|n| n.starts_with("sqlite3")), "the history save's SQLite code is not listed");
}
