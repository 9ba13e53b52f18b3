//! A history file is the user's data: a corrupt, locked or newer file gives a clear error and
//! is never changed or deleted.

use std::time::Duration;

use rusqlite::Connection;
use wireperf_store::{ListFilter, NewRun, OpenOptions, RunKind, SCHEMA_VERSION, Store, StoreError};

use crate::support::fixtures::{bytes_of, tcp_client_report, temp_db};

fn no_side_files(path: &std::path::Path) {
    for ext in ["-wal", "-shm", "-journal"] {
        let mut p = path.as_os_str().to_owned();
        p.push(ext);
        assert!(!std::path::Path::new(&p).exists(), "{} was created", p.to_string_lossy());
    }
}

#[test]
fn a_file_that_is_not_a_database_is_refused_untouched() {
    let (_dir, path) = temp_db();
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let garbage: Vec<u8> = (0..8192u32).map(|i| (i * 7 + 13) as u8).collect();
    std::fs::write(&path, &garbage).unwrap();
    let err = Store::open(&path).unwrap_err();
    assert!(matches!(err, StoreError::Corrupt { .. }), "{err:?}");
    let msg = err.to_string();
    assert!(msg.contains(&path.display().to_string()) && msg.contains("untouched"), "{msg}");
    assert_eq!(bytes_of(&path), garbage, "the file must not change");
    no_side_files(&path);
}

#[test]
fn a_damaged_database_is_refused_untouched() {
    let (_, report) = tcp_client_report();
    let (_dir, path) = temp_db();
    let mut store = Store::open(&path).unwrap();
    store.insert_run(&NewRun::single(RunKind::Client, None, report)).unwrap();
    drop(store); // checkpoints the WAL into the file
    // Keep the 100-byte header, scramble the schema page behind it.
    let mut b = bytes_of(&path);
    for (i, x) in b.iter_mut().enumerate().take(4096).skip(100) {
        *x = (i * 31) as u8;
    }
    std::fs::write(&path, &b).unwrap();
    let err = Store::open(&path).unwrap_err();
    assert!(matches!(err, StoreError::Corrupt { .. }), "{err:?}");
    assert_eq!(bytes_of(&path), b);
}

#[test]
fn a_locked_database_gives_a_clear_error_and_keeps_earlier_runs() {
    let (_, report) = tcp_client_report();
    let (_dir, path) = temp_db();
    let mut store = Store::open(&path).unwrap();
    let first = store.insert_run(&NewRun::single(RunKind::Client, None, report.clone())).unwrap();
    let before = store.get(first).unwrap();
    drop(store);

    let holder = Connection::open(&path).unwrap();
    holder.execute_batch("BEGIN EXCLUSIVE; DELETE FROM streams WHERE 0;").unwrap();
    let opts = OpenOptions { busy_timeout: Duration::from_millis(200) };
    let t0 = std::time::Instant::now();
    let mut store = Store::open_with(&path, &opts).unwrap();
    let err = store.insert_run(&NewRun::single(RunKind::Client, None, report)).unwrap_err();
    assert!(t0.elapsed() >= Duration::from_millis(200), "gave up before the busy timeout");
    assert!(matches!(err, StoreError::Locked { timeout_ms: 200, .. }), "{err:?}");
    assert!(err.to_string().contains("locked by another process"), "{err}");
    // Readers are not blocked by a writer (WAL).
    assert_eq!(store.list(&ListFilter::default()).unwrap().len(), 1);
    holder.execute_batch("ROLLBACK").unwrap();
    drop(holder);
    assert_eq!(store.get(first).unwrap(), before);
    assert_eq!(store.list(&ListFilter::default()).unwrap().len(), 1, "the failed run left nothing");
}

#[test]
fn a_database_from_a_newer_wireperf_is_refused_untouched() {
    let (_dir, path) = temp_db();
    drop(Store::open(&path).unwrap());
    {
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch(&format!("PRAGMA user_version = {}", SCHEMA_VERSION + 1)).unwrap();
    }
    let before = bytes_of(&path);
    match Store::open(&path) {
        Err(e @ StoreError::TooNew { found, supported, .. }) => {
            assert_eq!((found, supported), (SCHEMA_VERSION + 1, SCHEMA_VERSION));
            assert!(e.to_string().contains("upgrade wireperf"), "{e}");
        }
        other => panic!("expected TooNew, got {other:?}"),
    }
    assert_eq!(bytes_of(&path), before);
}
