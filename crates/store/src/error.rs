//! [`StoreError`]: everything that can go wrong with the history database, in words a user
//! understands. None of these errors is ever "fixed" by touching the file: a corrupt, locked or
//! newer database is reported and left exactly as it was, because it holds the user's runs.

use std::path::PathBuf;

use crate::model::RunId;

/// An error from the history store.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The file exists but is not an SQLite database, or its pages are damaged.
    #[error(
        "{path} is not a readable wireperf history database ({detail}); it was left untouched: \
         move it away or pass another --db"
    )]
    Corrupt {
        /// The database file.
        path: PathBuf,
        /// SQLite's message.
        detail: String,
    },
    /// Another process kept the database locked for longer than the busy timeout.
    #[error(
        "{path} is locked by another process (still busy after {timeout_ms} ms); nothing was \
         written, earlier runs are intact: try again when the other wireperf has finished"
    )]
    Locked {
        /// The database file.
        path: PathBuf,
        /// How long we waited.
        timeout_ms: u64,
    },
    /// The database was written by a newer wireperf with a schema this build does not know.
    #[error(
        "{path} has history schema version {found}, but this wireperf knows versions up to \
         {supported}; upgrade wireperf (the file was not changed)"
    )]
    TooNew {
        /// The database file.
        path: PathBuf,
        /// `PRAGMA user_version` of the file.
        found: i64,
        /// The newest version this build can read and write.
        supported: i64,
    },
    /// No database path was given and none could be derived from the environment.
    #[error("no history database location: set WIREPERF_DB, XDG_DATA_HOME or HOME, or pass --db")]
    NoDefaultPath,
    /// Creating the database's directory failed.
    #[error("cannot create directory {path}: {source}")]
    CreateDir {
        /// The directory.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// Reading or writing a file other than the database (import, export).
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// No run has this id.
    #[error("no run with id {0} in the history")]
    NotFound(RunId),
    /// A file given to `import` is not an iperf3 `-J` document.
    #[error("cannot import {source_name}: {reason}")]
    Import {
        /// The file name or label the text came from.
        source_name: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A run to insert is not valid (for example it has no phase).
    #[error("invalid run: {0}")]
    InvalidRun(String),
    /// A JSON value could not be encoded or a stored JSON column could not be decoded.
    #[error("JSON error in the history database: {0}")]
    Json(#[from] serde_json::Error),
    /// Any other SQLite error.
    #[error("history database error: {0}")]
    Sqlite(#[from] rusqlite::Error),
}

impl StoreError {
    /// Turns an SQLite error into the typed error for `path`: busy/locked and corrupt/not-a-db
    /// get their own variants so the message says what happened to which file.
    pub(crate) fn from_sqlite(e: rusqlite::Error, path: &std::path::Path, timeout_ms: u64) -> StoreError {
        use rusqlite::ErrorCode;
        if let rusqlite::Error::SqliteFailure(f, msg) = &e {
            match f.code {
                ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked => {
                    return StoreError::Locked { path: path.to_path_buf(), timeout_ms };
                }
                ErrorCode::NotADatabase | ErrorCode::DatabaseCorrupt => {
                    let detail = msg.clone().unwrap_or_else(|| f.to_string());
                    return StoreError::Corrupt { path: path.to_path_buf(), detail };
                }
                _ => {}
            }
        }
        StoreError::Sqlite(e)
    }
}
