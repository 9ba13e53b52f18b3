//! Is a firmware file on the kernel's search path? (link-facts §2.3: `updates/<release>`,
//! `updates`, `<release>`, then the base directory, under both /lib/firmware and
//! /usr/lib/firmware, with optional `.zst`/`.xz` compression.)

use crate::root::Root;

/// The path (relative to the root) where `file` (e.g. `rtl_nic/rtl8156b-2.fw`) was found.
pub fn find(root: &Root, file: &str, release: Option<&str>) -> Option<String> {
    for base in ["lib/firmware", "usr/lib/firmware"] {
        let mut dirs = vec![];
        if let Some(r) = release {
            dirs.push(format!("{base}/updates/{r}"));
        }
        dirs.push(format!("{base}/updates"));
        if let Some(r) = release {
            dirs.push(format!("{base}/{r}"));
        }
        dirs.push(base.to_string());
        for d in dirs {
            for ext in ["", ".zst", ".xz"] {
                let p = format!("{d}/{file}{ext}");
                if root.exists(&p) {
                    return Some(p);
                }
            }
        }
    }
    None
}
