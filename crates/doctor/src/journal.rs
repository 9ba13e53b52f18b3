//! The `--apply` journal: a JSON file listing every change with its old value, so `--undo`
//! restores exactly what was there. Written after every change, so a failure half-way still
//! leaves an accurate journal.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::Error;
use crate::root::Root;

/// Journal format version.
pub const JOURNAL_VERSION: u32 = 1;

/// One change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Change {
    /// A sysfs/procfs file was written.
    File {
        /// Path relative to the root (`sys/class/net/eth0/tx_queue_len`).
        path: String,
        /// Content before (trimmed).
        old: String,
        /// Content written.
        new: String,
    },
    /// The RX ring was resized with `ethtool -G`.
    RxRing {
        /// Interface.
        iface: String,
        /// Ring size before.
        old: u32,
        /// Ring size set.
        new: u32,
    },
}

impl Change {
    /// The change as a user reads it: `/proc/sys/net/ipv4/tcp_rmem: 4096 8192 8192 → 4096 131072 6291456`.
    pub fn describe(&self) -> String {
        match self {
            Change::File { path, old, new } => format!("/{path}: {} → {}", spaced(old), spaced(new)),
            Change::RxRing { iface, old, new } => format!("{iface} rx ring: {old} → {new}"),
        }
    }

    /// Its undo as a user reads it (new → old).
    pub fn describe_restore(&self) -> String {
        match self {
            Change::File { path, old, new } => format!("/{path}: {} → {}", spaced(new), spaced(old)),
            Change::RxRing { iface, old, new } => format!("{iface} rx ring: {new} → {old}"),
        }
    }
}

/// sysctl triples are tab separated in /proc; a line shows them with spaces.
fn spaced(v: &str) -> String {
    v.replace('\t', " ")
}

/// A journal entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// Interface the finding was about.
    pub iface: String,
    /// Finding id that caused the change.
    pub finding: String,
    /// What changed.
    pub change: Change,
    /// Seconds since the epoch.
    pub at_unix: u64,
}

/// The journal file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Journal {
    /// [`JOURNAL_VERSION`].
    pub schema_version: u32,
    /// The root the paths are relative to (`/` live).
    pub root: String,
    /// Changes in the order they were made.
    pub entries: Vec<Entry>,
    /// True once `--undo` restored the entries.
    pub undone: bool,
}

impl Journal {
    /// An empty journal for `root`.
    pub fn new(root: &Root) -> Self {
        Journal {
            schema_version: JOURNAL_VERSION,
            root: root.base().display().to_string(),
            entries: Vec::new(),
            undone: false,
        }
    }
}

/// Default journal location: `DIR/var/lib/wireperf/` with `--root`, `/var/lib/wireperf/` for
/// root, else `$XDG_STATE_HOME/wireperf/` (or `~/.local/state/wireperf/`).
pub fn default_path(root: &Root, is_root_user: bool) -> PathBuf {
    const FILE: &str = "doctor-journal.json";
    if !root.is_live() {
        return root.path("var/lib/wireperf").join(FILE);
    }
    if is_root_user {
        return PathBuf::from("/var/lib/wireperf").join(FILE);
    }
    let state = std::env::var_os("XDG_STATE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/state")))
        .unwrap_or_else(std::env::temp_dir);
    state.join("wireperf").join(FILE)
}

/// Loads a journal.
pub fn load(path: &Path) -> Result<Journal, Error> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::Journal {
        path: path.to_path_buf(),
        msg: format!("cannot read it ({e}); nothing to undo?"),
    })?;
    serde_json::from_str(&text)
        .map_err(|e| Error::Journal { path: path.to_path_buf(), msg: format!("not a wireperf journal: {e}") })
}

/// Saves a journal (creating its directory).
pub fn save(path: &Path, j: &Journal) -> Result<(), Error> {
    if let Some(d) = path.parent() {
        std::fs::create_dir_all(d).map_err(|e| Error::io(d, e))?;
    }
    let text = serde_json::to_string_pretty(j)?;
    std::fs::write(path, text + "\n").map_err(|e| Error::io(path, e))
}

/// Seconds since the epoch (0 if the clock is before 1970).
pub fn now_unix() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
}
