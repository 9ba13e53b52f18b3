//! The crate's error type: every failure a user can hit, with a message that says what to do.

use std::path::PathBuf;

/// Errors returned by the doctor's public API.
///
/// Unreadable sysfs files are *not* errors: they become "not reported" in the snapshot.
/// These variants are for the things that stop the doctor from doing what it was asked.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A named interface does not exist under `sys/class/net`.
    #[error("no such interface: {name} (not found in {dir})")]
    NoSuchInterface {
        /// The name the user gave.
        name: String,
        /// The directory that was searched.
        dir: PathBuf,
    },
    /// The `--root` directory does not look like a root (no `sys/class/net`).
    #[error("{0} has no sys/class/net directory; --root needs a tree with sys/, proc/ (and lib/firmware/)")]
    BadRoot(PathBuf),
    /// A file could not be read or written where that is not expected (journal, snapshot, kernel log).
    #[error("{path}: {source}")]
    Io {
        /// The file involved.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// `--apply`/`--undo` on the live system without root.
    #[error("--apply and --undo change system settings and must run as root (try: sudo wireperf doctor ...)")]
    NeedRoot,
    /// The journal is missing, unreadable or already undone.
    #[error("journal {path}: {msg}")]
    Journal {
        /// The journal file.
        path: PathBuf,
        /// What is wrong with it.
        msg: String,
    },
    /// A change could not be made (write refused by the kernel, `ethtool` missing, ...).
    #[error("could not apply {what}: {msg}")]
    Apply {
        /// The change that failed, e.g. `rps_cpus of enp1s0 rx-0`.
        what: String,
        /// Why.
        msg: String,
    },
    /// An external command (`tc`, `ethtool`, `ip`) is missing or failed.
    #[error("`{cmd}` failed: {msg}")]
    Command {
        /// The command line.
        cmd: String,
        /// What happened.
        msg: String,
    },
    /// JSON encoding or decoding failed.
    #[error("JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// Invalid command-line combination.
    #[error("{0}")]
    Usage(String),
}

impl Error {
    /// Wraps an I/O error with the path it concerns.
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io { path: path.into(), source }
    }
}
