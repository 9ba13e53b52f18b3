//! Where the history database lives when `--db` is not given.

use std::path::{Path, PathBuf};

use crate::error::StoreError;

/// The database file name inside the data directory.
pub const FILE_NAME: &str = "history.sqlite";

/// `$WIREPERF_DB`, else `$XDG_DATA_HOME/wireperf/history.sqlite`, else
/// `~/.local/share/wireperf/history.sqlite`. Empty or relative XDG values are ignored, as the
/// XDG base directory spec says.
pub fn default_db_path() -> Result<PathBuf, StoreError> {
    let var = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty()).map(PathBuf::from);
    if let Some(p) = var("WIREPERF_DB") {
        return Ok(p);
    }
    if let Some(x) = var("XDG_DATA_HOME").filter(|p| p.is_absolute()) {
        return Ok(x.join("wireperf").join(FILE_NAME));
    }
    if let Some(h) = var("HOME") {
        return Ok(h.join(".local/share/wireperf").join(FILE_NAME));
    }
    Err(StoreError::NoDefaultPath)
}

/// `explicit` when given, else [`default_db_path`].
pub fn resolve(explicit: Option<&Path>) -> Result<PathBuf, StoreError> {
    match explicit {
        Some(p) => Ok(p.to_path_buf()),
        None => default_db_path(),
    }
}
