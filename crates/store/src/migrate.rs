//! Versioned schema migrations.
//!
//! `PRAGMA user_version` holds the schema version of a file. [`MIGRATIONS`]`[n]` takes a file
//! from version `n` to `n + 1`; each runs in its own `BEGIN IMMEDIATE` transaction that
//! re-reads the version first (two wireperf processes opening a fresh file at once must not
//! both apply it) and sets the new version before committing, so a crash leaves the file at a
//! whole version. Migrations are append-only: a released one is never edited.

use rusqlite::{Connection, TransactionBehavior};

/// Version 1: runs, phases, per-interval series and per-stream totals.
const V1: &str = "
CREATE TABLE runs (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    time_unix        INTEGER NOT NULL,
    time             TEXT    NOT NULL,
    kind             TEXT    NOT NULL CHECK (kind IN ('client', 'suite', 'selftest', 'import')),
    local_host       TEXT,
    remote_host      TEXT,
    remote_port      INTEGER,
    command_line     TEXT,
    parameters       TEXT    NOT NULL,
    protocol         TEXT,
    direction        TEXT,
    duration         REAL,
    sent_bytes       INTEGER,
    sent_bps         REAL,
    received_bytes   INTEGER,
    received_bps     REAL,
    retransmits      INTEGER,
    cpu_host         REAL,
    cpu_remote       REAL,
    error            TEXT,
    doctor           TEXT,
    findings         TEXT,
    verdicts         TEXT,
    source           TEXT,
    wireperf_version TEXT    NOT NULL
);
CREATE TABLE phases (
    run_id         INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    seq            INTEGER NOT NULL,
    name           TEXT    NOT NULL,
    side           TEXT    NOT NULL CHECK (side IN ('client', 'server')),
    protocol       TEXT,
    direction      TEXT,
    num_streams    INTEGER,
    duration       REAL,
    sent_bytes     INTEGER,
    sent_bps       REAL,
    received_bytes INTEGER,
    received_bps   REAL,
    upload_bps     REAL,
    download_bps   REAL,
    retransmits    INTEGER,
    cpu_host       REAL,
    cpu_remote     REAL,
    jitter_ms      REAL,
    lost_packets   INTEGER,
    packets        INTEGER,
    lost_percent   REAL,
    error          TEXT,
    document       TEXT    NOT NULL,
    PRIMARY KEY (run_id, seq)
);
CREATE TABLE intervals (
    run_id       INTEGER NOT NULL,
    phase        INTEGER NOT NULL,
    idx          INTEGER NOT NULL,
    stream       INTEGER,
    direction    TEXT,
    t_start      REAL    NOT NULL,
    t_end        REAL    NOT NULL,
    bytes        INTEGER NOT NULL,
    bps          REAL    NOT NULL,
    retransmits  INTEGER,
    cwnd         INTEGER,
    rtt          INTEGER,
    jitter_ms    REAL,
    lost_packets INTEGER,
    packets      INTEGER,
    omitted      INTEGER NOT NULL,
    FOREIGN KEY (run_id, phase) REFERENCES phases(run_id, seq) ON DELETE CASCADE
);
CREATE INDEX intervals_by_phase ON intervals(run_id, phase, idx);
CREATE TABLE streams (
    run_id         INTEGER NOT NULL,
    phase          INTEGER NOT NULL,
    stream         INTEGER NOT NULL,
    direction      TEXT,
    sent_bytes     INTEGER,
    sent_bps       REAL,
    received_bytes INTEGER,
    received_bps   REAL,
    retransmits    INTEGER,
    max_cwnd       INTEGER,
    max_rtt        INTEGER,
    min_rtt        INTEGER,
    mean_rtt       INTEGER,
    jitter_ms      REAL,
    lost_packets   INTEGER,
    packets        INTEGER,
    lost_percent   REAL,
    FOREIGN KEY (run_id, phase) REFERENCES phases(run_id, seq) ON DELETE CASCADE
);
CREATE INDEX streams_by_phase ON streams(run_id, phase);
";

/// Version 2: a free label per run, and an index for listing by time.
const V2: &str = "
ALTER TABLE runs ADD COLUMN label TEXT;
CREATE INDEX runs_by_time ON runs(time_unix);
";

/// Version 3: the bottleneck watch per phase: its verdicts (a JSON list, one per direction)
/// and both hosts' per-CPU load over the phase (JSON; drawn by the HTML report).
const V3: &str = "
ALTER TABLE phases ADD COLUMN bottleneck TEXT;
ALTER TABLE phases ADD COLUMN cpu_load TEXT;
";

/// Version 4: repeat series. A series is one run (its head, no phases of its own) whose
/// `series` holds the statistics over its rounds (JSON); each round is a run of its own with
/// `series_of` naming the head and `series_round` its place (1 = first, warm-ups included).
/// Deleting the head deletes its rounds.
const V4: &str = "
ALTER TABLE runs ADD COLUMN series TEXT;
ALTER TABLE runs ADD COLUMN series_of INTEGER REFERENCES runs(id) ON DELETE CASCADE;
ALTER TABLE runs ADD COLUMN series_round INTEGER;
CREATE INDEX runs_by_series ON runs(series_of, series_round);
";

/// All migrations; index `n` upgrades version `n` to `n + 1`.
pub const MIGRATIONS: &[&str] = &[V1, V2, V3, V4];

/// The schema version this build reads and writes.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// The file's `PRAGMA user_version`.
pub fn version(conn: &Connection) -> rusqlite::Result<i64> {
    conn.query_row("PRAGMA user_version", [], |r| r.get(0))
}

/// Applies the migrations above the file's version up to `target`, one transaction each.
/// The caller has checked that the file is not newer than this build.
pub fn migrate_to(conn: &mut Connection, target: i64) -> rusqlite::Result<()> {
    for (i, sql) in MIGRATIONS.iter().enumerate() {
        let to = i as i64 + 1;
        if to > target {
            break;
        }
        if version(conn)? >= to {
            continue;
        }
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        if version(&tx)? < to {
            tx.execute_batch(sql)?;
            // PRAGMA takes no bound parameters; `to` is our own integer.
            tx.execute_batch(&format!("PRAGMA user_version = {to}"))?;
        }
        tx.commit()?;
    }
    Ok(())
}
