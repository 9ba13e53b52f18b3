//! `Root`: every file the doctor reads goes through here, relative to a root directory.
//!
//! Why one gate: tests point it at a fixture tree (`--root DIR`), and `--snapshot` needs to know
//! exactly which files were read so it can copy them. So every read, directory listing and
//! existence probe is logged, together with the errno of reads that failed (sysfs answers EINVAL
//! for `speed` on a down link; a fixture expresses that with a sibling `speed.errno` file).
//!
//! Command output (`ip -j link`, `ethtool`, `tc`) is captured here too, under the virtual path
//! `wireperf/IF/NAME`, so a snapshot replays it in `--root` mode.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::fmt;
use std::io;
use std::path::{Component, Path, PathBuf};

/// How a path was touched; decides what the snapshot writes for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Access {
    /// Contents were read; `errno` is set when the read failed (e.g. `EINVAL`).
    Read {
        /// errno name of a failed read.
        errno: Option<String>,
    },
    /// A directory was listed.
    List,
    /// Only existence was checked.
    Probe,
}

/// Why a read failed, kept short because it is printed next to "not reported".
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadFail {
    /// The file does not exist.
    Missing,
    /// The read failed with this errno (name, e.g. `EINVAL`).
    Errno(String),
}

impl fmt::Display for ReadFail {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadFail::Missing => f.write_str("absent"),
            ReadFail::Errno(e) => write!(f, "read fails with {e}"),
        }
    }
}

/// The filesystem view of the doctor: `/` on a live system, or a fixture/snapshot directory.
#[derive(Debug)]
pub struct Root {
    base: PathBuf,
    live: bool,
    log: RefCell<BTreeMap<PathBuf, Access>>,
    captured: RefCell<BTreeMap<PathBuf, String>>,
}

/// Maps an OS error to the errno name a fixture would use.
fn errno_name(e: &io::Error) -> String {
    match e.raw_os_error() {
        Some(libc::EINVAL) => "EINVAL".into(),
        Some(libc::ENOENT) => "ENOENT".into(),
        Some(libc::EOPNOTSUPP) => "EOPNOTSUPP".into(),
        Some(libc::ENODEV) => "ENODEV".into(),
        Some(libc::EPERM) => "EPERM".into(),
        Some(libc::EACCES) => "EACCES".into(),
        Some(libc::ENODATA) => "ENODATA".into(),
        Some(libc::EIO) => "EIO".into(),
        Some(libc::EAGAIN) => "EAGAIN".into(),
        Some(n) => format!("errno {n}"),
        None => e.kind().to_string(),
    }
}

impl Root {
    /// The live system (`/`): commands such as `ip` and `ethtool` may be run.
    pub fn live() -> Self {
        Self::new(PathBuf::from("/"), true)
    }

    /// A fixture or snapshot tree: only files are read, never a command, netlink or ioctl.
    pub fn at(dir: impl Into<PathBuf>) -> Self {
        let dir: PathBuf = dir.into();
        // Canonicalize once so that resolved symlinks can be made relative to the base again.
        let base = std::fs::canonicalize(&dir).unwrap_or(dir);
        Self::new(base, false)
    }

    fn new(base: PathBuf, live: bool) -> Self {
        Root { base, live, log: RefCell::new(BTreeMap::new()), captured: RefCell::new(BTreeMap::new()) }
    }

    /// True for the live system.
    pub fn is_live(&self) -> bool {
        self.live
    }

    /// The root directory.
    pub fn base(&self) -> &Path {
        &self.base
    }

    /// The real path of `rel` (e.g. `sys/class/net/eth0/mtu` → `/sys/class/net/eth0/mtu`).
    pub fn path(&self, rel: impl AsRef<Path>) -> PathBuf {
        self.base.join(rel)
    }

    fn note(&self, rel: &Path, access: Access) {
        let mut log = self.log.borrow_mut();
        // A read outranks a probe or listing of the same path.
        let keep = matches!(log.get(rel), Some(Access::Read { .. })) && access == Access::Probe;
        if !keep {
            log.insert(rel.to_path_buf(), access);
        }
    }

    /// Reads a file as bytes. In fixture trees, `NAME.errno` (content e.g. `EINVAL`) makes
    /// the read fail the way sysfs would.
    pub fn read_bytes(&self, rel: impl AsRef<Path>) -> Result<Vec<u8>, ReadFail> {
        let rel = rel.as_ref();
        let full = self.path(rel);
        if !self.live {
            let mut side = full.clone().into_os_string();
            side.push(".errno");
            if let Ok(e) = std::fs::read_to_string(&side) {
                let e = e.trim().to_string();
                self.note(rel, Access::Read { errno: Some(e.clone()) });
                return Err(if e == "ENOENT" { ReadFail::Missing } else { ReadFail::Errno(e) });
            }
        }
        match std::fs::read(&full) {
            Ok(b) => {
                self.note(rel, Access::Read { errno: None });
                Ok(b)
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => Err(ReadFail::Missing),
            Err(e) => {
                let name = errno_name(&e);
                self.note(rel, Access::Read { errno: Some(name.clone()) });
                Err(ReadFail::Errno(name))
            }
        }
    }

    /// Reads a text file and trims surrounding whitespace (sysfs pads some values: `" 3.20"`).
    pub fn read(&self, rel: impl AsRef<Path>) -> Result<String, ReadFail> {
        let b = self.read_bytes(rel)?;
        Ok(String::from_utf8_lossy(&b).trim().to_string())
    }

    /// Reads and trims, `None` when unreadable: for values that are simply "not reported".
    pub fn opt(&self, rel: impl AsRef<Path>) -> Option<String> {
        self.read(rel).ok()
    }

    /// Reads a decimal value; `None` when unreadable or not a number.
    pub fn num<T: std::str::FromStr>(&self, rel: impl AsRef<Path>) -> Option<T> {
        self.opt(rel).and_then(|s| s.parse().ok())
    }

    /// Lists a directory's entry names, sorted; empty when it cannot be listed.
    pub fn list(&self, rel: impl AsRef<Path>) -> Vec<String> {
        let rel = rel.as_ref();
        let Ok(rd) = std::fs::read_dir(self.path(rel)) else {
            return Vec::new();
        };
        self.note(rel, Access::List);
        let mut names: Vec<String> = rd
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| !n.ends_with(".errno"))
            .collect();
        names.sort();
        names
    }

    /// True when the path exists (following symlinks).
    pub fn exists(&self, rel: impl AsRef<Path>) -> bool {
        let rel = rel.as_ref();
        let ok = self.path(rel).exists();
        if ok {
            self.note(rel, Access::Probe);
        }
        ok
    }

    /// The last component of a symlink's target: `device/driver` → `r8152`.
    pub fn link_name(&self, rel: impl AsRef<Path>) -> Option<String> {
        let rel = rel.as_ref();
        let target = std::fs::read_link(self.path(rel)).ok()?;
        self.note(rel, Access::Probe);
        target.file_name().map(|n| n.to_string_lossy().into_owned())
    }

    /// A symlink's target text, e.g. `../../../../bus/virtio/drivers/virtio_net`.
    pub fn link_target(&self, rel: impl AsRef<Path>) -> Option<PathBuf> {
        let rel = rel.as_ref();
        let target = std::fs::read_link(self.path(rel)).ok()?;
        self.note(rel, Access::Probe);
        Some(target)
    }

    /// Resolves all symlinks in `rel` and returns the result relative to the root.
    ///
    /// Why not `Path::parent` on the link: `device/..` must be resolved physically (the USB
    /// device is the parent of the *real* interface directory), lexical `..` is wrong.
    pub fn resolve(&self, rel: impl AsRef<Path>) -> Option<PathBuf> {
        let rel = rel.as_ref();
        let real = std::fs::canonicalize(self.path(rel)).ok()?;
        self.note(rel, Access::Probe);
        real.strip_prefix(&self.base).ok().map(Path::to_path_buf)
    }

    /// Every path touched so far, with how.
    pub fn accessed(&self) -> Vec<(PathBuf, Access)> {
        self.log.borrow().iter().map(|(p, a)| (p.clone(), a.clone())).collect()
    }

    /// Records command output (live) under its replay path, e.g. `wireperf/eth0/ip-link.json`.
    pub fn capture(&self, rel: impl AsRef<Path>, text: &str) {
        self.captured.borrow_mut().insert(rel.as_ref().to_path_buf(), text.to_string());
    }

    /// Captured command outputs.
    pub fn captured(&self) -> Vec<(PathBuf, String)> {
        self.captured.borrow().iter().map(|(p, t)| (p.clone(), t.clone())).collect()
    }

    /// Writes `value` to a file under the root (used by `--apply`/`--undo`).
    pub fn write(&self, rel: impl AsRef<Path>, value: &str) -> io::Result<()> {
        std::fs::write(self.path(rel), value)
    }
}

/// Joins a relative symlink target onto the directory holding the link, removing `.` and `..`
/// lexically (valid because `dir` is already a resolved, real directory).
pub fn join_lexical(dir: &Path, target: &Path) -> PathBuf {
    let mut out: Vec<std::ffi::OsString> = dir
        .components()
        .filter_map(|c| match c {
            Component::Normal(s) => Some(s.to_os_string()),
            _ => None,
        })
        .collect();
    for c in target.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(s) => out.push(s.to_os_string()),
            Component::RootDir => out.clear(),
            _ => {}
        }
    }
    out.iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lexical_join_handles_parent_dirs() {
        let p = join_lexical(Path::new("sys/class/net"), Path::new("../../devices/virtual/net/lo"));
        assert_eq!(p, PathBuf::from("sys/devices/virtual/net/lo"));
    }

    #[test]
    fn errno_sidecar_makes_read_fail() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("speed"), "").unwrap();
        std::fs::write(d.path().join("speed.errno"), "EINVAL\n").unwrap();
        let r = Root::at(d.path());
        assert_eq!(r.read("speed"), Err(ReadFail::Errno("EINVAL".into())));
        assert_eq!(r.read("nothing"), Err(ReadFail::Missing));
        assert!(matches!(r.accessed()[0].1, Access::Read { errno: Some(_) }));
    }
}
