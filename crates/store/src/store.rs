//! [`Store`]: opening the database safely, and writing a run in one transaction.
//!
//! Opening reads before it writes: the schema version is read first, so a file that is not a
//! database, or one from a newer wireperf, is refused before anything (even the WAL switch)
//! touches it. Every write is a single `BEGIN IMMEDIATE` transaction: a failure part-way
//! rolls back, leaving earlier runs exactly as they were.

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags, TransactionBehavior, params};

use crate::error::StoreError;
use crate::extract::{self, PhaseFigures};
use crate::migrate::{self, SCHEMA_VERSION};
use crate::model::{Figures, NewPhase, NewRun, RunId};
use crate::time::{now_unix, rfc3339_utc};

/// How to open a store.
#[derive(Clone, Debug)]
pub struct OpenOptions {
    /// How long to wait for another process's lock before giving up with [`StoreError::Locked`].
    pub busy_timeout: Duration,
}

impl Default for OpenOptions {
    fn default() -> Self {
        OpenOptions { busy_timeout: Duration::from_secs(5) }
    }
}

/// The run history database.
#[derive(Debug)]
pub struct Store {
    pub(crate) conn: Connection,
    path: PathBuf,
    timeout_ms: u64,
}

impl Store {
    /// Opens (creating it and its directory if needed) the database at `path`, migrating it to
    /// the current schema.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        Store::open_with(path, &OpenOptions::default())
    }

    /// Opens `explicit`, else the default location ([`crate::default_db_path`]).
    pub fn open_default(explicit: Option<&Path>) -> Result<Store, StoreError> {
        Store::open(&crate::path::resolve(explicit)?)
    }

    /// [`Store::open`] with options.
    pub fn open_with(path: &Path, opts: &OpenOptions) -> Result<Store, StoreError> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|source| StoreError::CreateDir { path: dir.to_path_buf(), source })?;
        }
        let timeout_ms = u64::try_from(opts.busy_timeout.as_millis()).unwrap_or(u64::MAX);
        let err = |e| StoreError::from_sqlite(e, path, timeout_ms);
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX
            | OpenFlags::SQLITE_OPEN_URI;
        let mut conn = Connection::open_with_flags(path, flags).map_err(err)?;
        conn.busy_timeout(opts.busy_timeout).map_err(err)?;
        // The first read of the file: fails with NOTADB on a non-database, before any write.
        let found = migrate::version(&conn).map_err(err)?;
        if found > SCHEMA_VERSION {
            return Err(StoreError::TooNew { path: path.to_path_buf(), found, supported: SCHEMA_VERSION });
        }
        // A sanity read of the schema: catches damaged files whose header still looks fine.
        conn.query_row("SELECT count(*) FROM sqlite_schema", [], |r| r.get::<_, i64>(0)).map_err(err)?;
        conn.pragma_update(None, "foreign_keys", true).map_err(err)?;
        // WAL: readers (history list) never wait for a writer (a run being saved).
        conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get::<_, String>(0)).map_err(err)?;
        migrate::migrate_to(&mut conn, SCHEMA_VERSION).map_err(err)?;
        Ok(Store { conn, path: path.to_path_buf(), timeout_ms })
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The file's schema version (after migration: [`crate::SCHEMA_VERSION`]).
    pub fn schema_version(&self) -> Result<i64, StoreError> {
        migrate::version(&self.conn).map_err(|e| self.err(e))
    }

    /// Maps an SQLite error to the typed error for this file.
    pub(crate) fn err(&self, e: rusqlite::Error) -> StoreError {
        StoreError::from_sqlite(e, &self.path, self.timeout_ms)
    }

    /// Stores a run with all its phases in one transaction; returns its id.
    pub fn insert_run(&mut self, run: &NewRun) -> Result<RunId, StoreError> {
        if run.phases.is_empty() {
            return Err(StoreError::InvalidRun("a run needs at least one phase".into()));
        }
        let prepared: Vec<(&NewPhase, PhaseFigures, String)> = run
            .phases
            .iter()
            .map(|p| {
                let doc = match &p.document {
                    Some(d) => d.clone(),
                    None => serde_json::to_string(&p.report)?,
                };
                Ok((p, extract::phase_figures(&p.report, p.side), doc))
            })
            .collect::<Result<_, StoreError>>()?;
        let figs: Vec<Figures> = prepared.iter().map(|(_, f, _)| f.figures.clone()).collect();
        let mut total = extract::run_figures(&figs);
        if run.error.is_some() {
            total.error.clone_from(&run.error);
        }
        let first = &run.phases[0].report;
        let time_unix = run
            .time_unix
            .or_else(|| first.start.timestamp.as_ref().map(|t| t.timesecs).filter(|t| *t > 0))
            .unwrap_or_else(now_unix);
        let parameters = match &run.parameters {
            Some(v) => v.clone(),
            None => serde_json::to_value(&first.start.test_start)?,
        };
        let (remote_host, remote_port) = remote_of(first);
        let local_host = first.start.connected.first().map(|c| c.local_host.clone());
        let json = |v: &Option<serde_json::Value>| v.as_ref().map(serde_json::to_string).transpose();
        let (doctor, findings, verdicts) = (json(&run.doctor)?, json(&run.findings)?, json(&run.verdicts)?);

        let (path, timeout_ms) = (self.path.clone(), self.timeout_ms);
        let err = |e| StoreError::from_sqlite(e, &path, timeout_ms);
        let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate).map_err(err)?;
        let write = || -> rusqlite::Result<RunId> {
            tx.execute(
                "INSERT INTO runs (time_unix, time, kind, local_host, remote_host, remote_port,
                    command_line, parameters, protocol, direction, duration, sent_bytes, sent_bps,
                    received_bytes, received_bps, retransmits, cpu_host, cpu_remote, error,
                    doctor, findings, verdicts, source, wireperf_version, label)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16,
                    ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25)",
                params![
                    time_unix,
                    rfc3339_utc(time_unix),
                    run.kind.as_str(),
                    local_host,
                    remote_host,
                    remote_port,
                    run.command_line,
                    parameters.to_string(),
                    total.protocol,
                    total.direction,
                    total.duration,
                    total.sent_bytes.map(to_i64),
                    total.sent_bps,
                    total.received_bytes.map(to_i64),
                    total.received_bps,
                    total.retransmits.map(to_i64),
                    total.cpu_host,
                    total.cpu_remote,
                    total.error,
                    doctor,
                    findings,
                    verdicts,
                    run.source,
                    env!("CARGO_PKG_VERSION"),
                    run.label,
                ],
            )?;
            let id = tx.last_insert_rowid();
            for (seq, (phase, f, doc)) in prepared.iter().enumerate() {
                insert_phase(&tx, id, seq as i64, phase, f, doc)?;
            }
            Ok(RunId(id))
        };
        // On error `tx` is dropped, which rolls back: no half-written run.
        let id = write().map_err(err)?;
        tx.commit().map_err(err)?;
        Ok(id)
    }
}

/// SQLite integers are i64; counters beyond that saturate rather than wrap.
pub(crate) fn to_i64(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

fn remote_of(r: &wireperf_protocol::schema::TestReport) -> (Option<String>, Option<u16>) {
    let hp = r.start.connecting_to.as_ref().or(r.start.accepted_connection.as_ref());
    match hp {
        Some(hp) => (Some(hp.host.clone()), Some(hp.port)),
        None => match r.start.connected.first() {
            Some(c) => (Some(c.remote_host.clone()), Some(c.remote_port)),
            None => (None, None),
        },
    }
}

fn insert_phase(
    tx: &rusqlite::Transaction<'_>,
    run: i64,
    seq: i64,
    phase: &NewPhase,
    f: &PhaseFigures,
    doc: &str,
) -> rusqlite::Result<()> {
    let g = &f.figures;
    tx.execute(
        "INSERT INTO phases (run_id, seq, name, side, protocol, direction, num_streams, duration,
            sent_bytes, sent_bps, received_bytes, received_bps, upload_bps, download_bps,
            retransmits, cpu_host, cpu_remote, jitter_ms, lost_packets, packets, lost_percent,
            error, document, bottleneck, cpu_load)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18,
            ?19, ?20, ?21, ?22, ?23, ?24, ?25)",
        params![
            run,
            seq,
            phase.name,
            phase.side.as_str(),
            g.protocol,
            g.direction,
            f.num_streams,
            g.duration,
            g.sent_bytes.map(to_i64),
            g.sent_bps,
            g.received_bytes.map(to_i64),
            g.received_bps,
            f.upload_bps,
            f.download_bps,
            g.retransmits.map(to_i64),
            g.cpu_host,
            g.cpu_remote,
            f.jitter_ms,
            f.lost_packets,
            f.packets,
            f.lost_percent,
            g.error,
            doc,
            phase.bottleneck.as_ref().map(|v| v.to_string()),
            phase.cpu_load.as_ref().map(|v| v.to_string()),
        ],
    )?;
    let mut ins = tx.prepare_cached(
        "INSERT INTO intervals (run_id, phase, idx, stream, direction, t_start, t_end, bytes, bps,
            retransmits, cwnd, rtt, jitter_ms, lost_packets, packets, omitted)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)",
    )?;
    for r in extract::interval_rows(&phase.report, phase.side) {
        ins.execute(params![
            run,
            seq,
            r.index,
            r.stream,
            r.direction.map(|d| d.as_str()),
            r.start,
            r.end,
            to_i64(r.bytes),
            r.bits_per_second,
            r.retransmits.map(to_i64),
            r.cwnd.map(to_i64),
            r.rtt.map(to_i64),
            r.jitter_ms,
            r.lost_packets,
            r.packets,
            r.omitted,
        ])?;
    }
    let mut ins = tx.prepare_cached(
        "INSERT INTO streams (run_id, phase, stream, direction, sent_bytes, sent_bps,
            received_bytes, received_bps, retransmits, max_cwnd, max_rtt, min_rtt, mean_rtt,
            jitter_ms, lost_packets, packets, lost_percent)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)",
    )?;
    for s in extract::stream_rows(&phase.report, phase.side) {
        ins.execute(params![
            run,
            seq,
            s.stream,
            s.direction.map(|d| d.as_str()),
            s.sent_bytes.map(to_i64),
            s.sent_bps,
            s.received_bytes.map(to_i64),
            s.received_bps,
            s.retransmits.map(to_i64),
            s.max_cwnd.map(to_i64),
            s.max_rtt.map(to_i64),
            s.min_rtt.map(to_i64),
            s.mean_rtt.map(to_i64),
            s.jitter_ms,
            s.lost_packets,
            s.packets,
            s.lost_percent,
        ])?;
    }
    Ok(())
}
