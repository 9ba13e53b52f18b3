//! Schema versions: a new file gets the current one; a version-1 file is upgraded in place
//! with its runs kept.

use rusqlite::Connection;
use wireperf_store::{ListFilter, MIGRATIONS, NewRun, RunKind, SCHEMA_VERSION, Store};

use crate::support::fixtures::{tcp_client_report, temp_db};

fn tables(conn: &Connection) -> Vec<String> {
    let mut st = conn.prepare("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name").unwrap();
    st.query_map([], |r| r.get(0)).unwrap().map(Result::unwrap).collect()
}

#[test]
fn a_new_file_gets_the_current_schema() {
    let (_dir, path) = temp_db();
    let store = Store::open(&path).unwrap();
    assert_eq!(store.schema_version().unwrap(), SCHEMA_VERSION);
    assert_eq!(SCHEMA_VERSION, MIGRATIONS.len() as i64);
    drop(store);
    let conn = Connection::open(&path).unwrap();
    let mode: String = conn.query_row("PRAGMA journal_mode", [], |r| r.get(0)).unwrap();
    assert_eq!(mode, "wal");
    let t = tables(&conn);
    for want in ["intervals", "phases", "runs", "streams"] {
        assert!(t.iter().any(|x| x == want), "{want} missing from {t:?}");
    }
    // Opening again is a no-op migration.
    assert_eq!(Store::open(&path).unwrap().schema_version().unwrap(), SCHEMA_VERSION);
}

#[test]
fn a_version_1_file_is_upgraded_with_its_runs_kept() {
    let (_dir, path) = temp_db();
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    {
        // A file as the first release wrote it: migration 1 only, with one run.
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch(MIGRATIONS[0]).unwrap();
        conn.execute_batch("PRAGMA user_version = 1").unwrap();
        conn.execute(
            "INSERT INTO runs (time_unix, time, kind, remote_host, remote_port, command_line, parameters,
                protocol, direction, received_bps, wireperf_version)
             VALUES (1795975241, '2026-11-29T18:00:41Z', 'client', 'lab-host', 5201, 'wireperf -c lab-host',
                '{}', 'TCP', 'upload', 941000000.0, '0.1.0')",
            [],
        )
        .unwrap();
        conn.execute(
            "INSERT INTO phases (run_id, seq, name, side, protocol, direction, received_bps, document)
             VALUES (1, 0, 'upload', 'client', 'TCP', 'upload', 941000000.0, '{}')",
            [],
        )
        .unwrap();
    }
    let mut store = Store::open(&path).unwrap();
    assert_eq!(store.schema_version().unwrap(), SCHEMA_VERSION);
    let old = store.list(&ListFilter::default()).unwrap();
    assert_eq!(old.len(), 1);
    assert_eq!(old[0].remote_host.as_deref(), Some("lab-host"));
    assert_eq!(old[0].figures.received_bps, Some(941_000_000.0));
    assert_eq!(old[0].label, None, "the label column came with version 2");
    assert_eq!(old[0].phases, ["upload"]);
    let before = store.get(old[0].id).unwrap();
    assert_eq!(before.phase_details[0].bottleneck, None, "the bottleneck column came with version 3");

    let (_, report) = tcp_client_report();
    let mut run = NewRun::single(RunKind::Client, None, report);
    run.label = Some("after upgrade".into());
    let id = store.insert_run(&run).unwrap();
    assert_eq!(store.get(id).unwrap().summary.label.as_deref(), Some("after upgrade"));
    assert_eq!(store.list(&ListFilter::default()).unwrap().len(), 2);
}
