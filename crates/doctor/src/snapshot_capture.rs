//! `--snapshot OUT`: copy exactly the files the doctor read (with their symlinks, relative as
//! sysfs has them), failed reads as `NAME.errno` sidecars, the captured command outputs and the
//! kernel log into a directory or a `.tar`, so `wireperf doctor --root OUT` replays the run.
//!
//! Why replay the symlinks rather than copy resolved files: the readers resolve
//! `device` → USB interface → USB device → root hub physically, so the tree must keep its shape.

use std::fs;
use std::io;
use std::path::{Component, Path, PathBuf};

use crate::error::Error;
use crate::root::{Access, Root, join_lexical};

/// What a capture wrote.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CaptureSummary {
    /// Files and links written.
    pub entries: usize,
    /// Paths that could not be copied (vanished, unreadable), with the reason.
    pub skipped: Vec<String>,
}

/// Writes the snapshot. `out` ending in `.tar` produces a tar archive, anything else a directory.
pub fn capture(root: &Root, kernel_log: Option<&str>, out: &Path) -> Result<CaptureSummary, Error> {
    let is_tar = out.extension().is_some_and(|e| e == "tar");
    if !is_tar {
        return capture_dir(root, kernel_log, out);
    }
    let stamp = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
    let tmp = std::env::temp_dir().join(format!("wireperf-snapshot-{}-{stamp}", std::process::id()));
    let result = capture_dir(root, kernel_log, &tmp).and_then(|s| {
        write_tar(&tmp, out)?;
        Ok(s)
    });
    let _ = fs::remove_dir_all(&tmp);
    result
}

fn write_tar(dir: &Path, out: &Path) -> Result<(), Error> {
    let f = fs::File::create(out).map_err(|e| Error::io(out, e))?;
    let mut b = tar::Builder::new(f);
    b.follow_symlinks(false);
    b.append_dir_all(".", dir).map_err(|e| Error::io(out, e))?;
    b.into_inner().map_err(|e| Error::io(out, e))?;
    Ok(())
}

/// Writes the snapshot as a directory tree.
pub fn capture_dir(root: &Root, kernel_log: Option<&str>, out: &Path) -> Result<CaptureSummary, Error> {
    fs::create_dir_all(out).map_err(|e| Error::io(out, e))?;
    let mut sum = CaptureSummary::default();
    for (rel, access) in root.accessed() {
        match mirror(root.base(), out, &rel, &access) {
            Ok(n) => sum.entries += n,
            Err(e) => sum.skipped.push(format!("{}: {e}", rel.display())),
        }
        // A listing is replayed with the same names: mirror each entry shallowly (a directory,
        // a symlink with its target directory, or an empty file), so counts such as the
        // number of `queues/tx-*` or the registered USB drivers stay the same.
        if access == Access::List
            && let Ok(rd) = fs::read_dir(root.path(&rel))
        {
            for child in rd.filter_map(|e| e.ok()) {
                let c = rel.join(child.file_name());
                if let Err(e) = mirror(root.base(), out, &c, &Access::Probe) {
                    sum.skipped.push(format!("{}: {e}", c.display()));
                }
            }
        }
    }
    let mut extra: Vec<(PathBuf, String)> = root.captured();
    if let Some(k) = kernel_log {
        extra.push((PathBuf::from("wireperf/kernel.log"), k.to_string()));
    }
    extra.push((
        PathBuf::from("wireperf/README.txt"),
        "wireperf doctor snapshot: replay with `wireperf doctor --root THIS_DIR`.\n\
         sys/ proc/ lib/ hold copies of the files the doctor read (NAME.errno = the read failed with that errno);\n\
         wireperf/IF/ holds ip/ethtool/tc output; wireperf/kernel.log the kernel log.\n"
            .to_string(),
    ));
    for (rel, text) in extra {
        let p = out.join(&rel);
        if let Some(d) = p.parent() {
            fs::create_dir_all(d).map_err(|e| Error::io(d, e))?;
        }
        fs::write(&p, text).map_err(|e| Error::io(&p, e))?;
        sum.entries += 1;
    }
    Ok(sum)
}

/// A relative path from directory `from` to `to` (both relative to the same root).
fn relative(from: &Path, to: &Path) -> PathBuf {
    let f: Vec<_> = from.components().collect();
    let t: Vec<_> = to.components().collect();
    let common = f.iter().zip(&t).take_while(|(a, b)| a == b).count();
    let mut p = PathBuf::new();
    for _ in common..f.len() {
        p.push("..");
    }
    for c in &t[common..] {
        p.push(c.as_os_str());
    }
    p
}

/// Mirrors one accessed path, walking its components so every symlink on the way is recreated.
fn mirror(base: &Path, out: &Path, rel: &Path, access: &Access) -> io::Result<usize> {
    let comps: Vec<PathBuf> = rel
        .components()
        .filter_map(|c| match c {
            Component::Normal(s) => Some(PathBuf::from(s)),
            _ => None,
        })
        .collect();
    let mut cur = PathBuf::new();
    let mut written = 0;
    for (idx, c) in comps.iter().enumerate() {
        let last = idx + 1 == comps.len();
        let mut p = cur.join(c);
        for _hop in 0..40 {
            let src = base.join(&p);
            let meta = match fs::symlink_metadata(&src) {
                Ok(m) => m,
                Err(e) if last && matches!(access, Access::Read { errno: Some(_) }) => {
                    // The file failed to read and is gone now: keep the errno only.
                    let _ = e;
                    break;
                }
                Err(e) => return Err(e),
            };
            let dst = out.join(&p);
            if meta.file_type().is_symlink() {
                let mut target = fs::read_link(&src)?;
                let parent = p.parent().map(Path::to_path_buf).unwrap_or_default();
                if target.is_absolute() {
                    let inside: PathBuf = target.components().skip(1).collect();
                    target = relative(&parent, &inside);
                }
                if let Some(d) = dst.parent() {
                    fs::create_dir_all(d)?;
                }
                if fs::symlink_metadata(&dst).is_err() {
                    std::os::unix::fs::symlink(&target, &dst)?;
                    written += 1;
                }
                p = join_lexical(&parent, &target);
                continue;
            }
            if meta.is_dir() {
                fs::create_dir_all(&dst)?;
            } else if last {
                if let Some(d) = dst.parent() {
                    fs::create_dir_all(d)?;
                }
                written += copy_file(&src, &dst, access)?;
            }
            break;
        }
        cur = p;
    }
    Ok(written)
}

fn copy_file(src: &Path, dst: &Path, access: &Access) -> io::Result<usize> {
    let errno_file = |e: &str| {
        let mut s = dst.as_os_str().to_os_string();
        s.push(".errno");
        fs::write(PathBuf::from(s), format!("{e}\n"))
    };
    match access {
        Access::Read { errno: Some(e) } => {
            fs::write(dst, b"")?;
            errno_file(e)?;
        }
        Access::Read { errno: None } => match fs::read(src) {
            Ok(b) => fs::write(dst, b)?,
            Err(e) => {
                fs::write(dst, b"")?;
                errno_file(&format!("errno {}", e.raw_os_error().unwrap_or(0)))?;
            }
        },
        // Existence probes (firmware files, `rtl_adv`): an empty file is enough to replay them;
        // never clobber a file whose contents were copied.
        Access::Probe | Access::List => {
            if fs::symlink_metadata(dst).is_ok() {
                return Ok(0);
            }
            fs::write(dst, b"")?
        }
    }
    Ok(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths() {
        assert_eq!(relative(Path::new("sys/class/net"), Path::new("sys/devices/x")), PathBuf::from("../../devices/x"));
        assert_eq!(relative(Path::new("a"), Path::new("a/b")), PathBuf::from("b"));
    }
}
