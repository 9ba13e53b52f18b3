//! Places the code a plain test runs together in the binary (docs/performance.md, "Memory").
//!
//! `symbol-order.txt` (written by `scripts/symbol-order`) lists the functions that plain tests
//! run; lld's `--symbol-ordering-file` puts them first in the text section, in that order.
//! Without it that code is spread over the whole section and each page fault maps its 64 KiB
//! neighbourhood, so a plain test had about 2.8 of the 4.7 MB of code resident.
//!
//! Only where rustc links with its own lld by default (x86_64 Linux with glibc, Rust 1.90 and
//! later) and no other linker was configured: GNU ld does not know the option. A name the
//! linker does not find (a stale file after a toolchain update) is skipped without a warning;
//! the order only changes where code sits, never what it does.

use std::env;

fn main() {
    println!("cargo:rerun-if-changed=symbol-order.txt");
    println!("cargo:rerun-if-env-changed=WIREPERF_SYMBOL_ORDER");
    let target = env::var("TARGET").unwrap_or_default();
    let flags = env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    let own_linker = env::var_os("RUSTC_LINKER").is_some() || flags.contains("link");
    let off = env::var("WIREPERF_SYMBOL_ORDER").is_ok_and(|v| v == "off");
    if target != "x86_64-unknown-linux-gnu" || own_linker || off || !links_with_lld() {
        return;
    }
    let Ok(dir) = env::var("CARGO_MANIFEST_DIR") else { return };
    let file = std::path::Path::new(&dir).join("symbol-order.txt");
    if file.is_file() {
        println!("cargo:rustc-link-arg-bins=-Wl,--symbol-ordering-file={}", file.display());
        println!("cargo:rustc-link-arg-bins=-Wl,--no-warn-symbol-ordering");
    }
}

/// Whether this rustc links x86_64 Linux binaries with its own lld by default (1.90 and
/// later; 1.89, the oldest supported, still calls GNU ld through cc).
fn links_with_lld() -> bool {
    let rustc = env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let Ok(out) = std::process::Command::new(rustc).arg("-vV").output() else { return false };
    let text = String::from_utf8_lossy(&out.stdout);
    let minor = text
        .lines()
        .find_map(|l| l.strip_prefix("release: "))
        .and_then(|v| v.split('.').nth(1))
        .and_then(|m| m.parse::<u32>().ok());
    minor.is_some_and(|m| m >= 90)
}
