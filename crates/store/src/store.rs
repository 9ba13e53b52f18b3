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
use crate::model::{Figures, NewPhase, NewRun, NewSeries, RunId, SeriesIds};
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
        let prepared = PreparedRun::of(run)?;
        let (path, timeout_ms) = (self.path.clone(), self.timeout_ms);
        let err = |e| StoreError::from_sqlite(e, &path, timeout_ms);
        let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate).map_err(err)?;
        // On error `tx` is dropped, which rolls back: no half-written run.
        let id = prepared.write(&tx, None).map_err(err)?;
        tx.commit().map_err(err)?;
        Ok(id)
    }

    /// Stores a repeat series in one transaction: a head run that carries the series'
    /// statistics (and no phases of its own), then each round as the run it is, pointing at
    /// the head (`series_of`) with its round number. Returns the head's id and the rounds'.
    pub fn insert_series(&mut self, head: &NewSeries, rounds: &[NewRun]) -> Result<SeriesIds, StoreError> {
        if rounds.is_empty() {
            return Err(StoreError::InvalidRun("a series needs at least one round".into()));
        }
        let prepared: Vec<PreparedRun> = rounds.iter().map(PreparedRun::of).collect::<Result<_, _>>()?;
        let mut head_row = prepared[0].clone();
        head_row.figures = Figures {
            protocol: head_row.figures.protocol.clone(),
            direction: head_row.figures.direction.clone(),
            duration: Some(prepared.iter().filter_map(|p| p.figures.duration).sum()),
            error: prepared.iter().find_map(|p| p.figures.error.clone()),
            ..Figures::default()
        };
        head_row.kind = head.kind.as_str();
        head_row.command_line.clone_from(&head.command_line);
        head_row.label.clone_from(&head.label);
        head_row.doctor = None;
        head_row.findings = None;
        head_row.verdicts = None;
        head_row.phases.clear();
        let series_doc = head.document(rounds.len());
        let (path, timeout_ms) = (self.path.clone(), self.timeout_ms);
        let err = |e| StoreError::from_sqlite(e, &path, timeout_ms);
        let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate).map_err(err)?;
        let write = || -> rusqlite::Result<SeriesIds> {
            let id = head_row.write(&tx, None)?;
            tx.execute("UPDATE runs SET series = ?1 WHERE id = ?2", params![series_doc.to_string(), id.0])?;
            let mut ids = Vec::with_capacity(prepared.len());
            for (i, p) in prepared.iter().enumerate() {
                ids.push(p.write(&tx, Some((id, i as i64 + 1)))?);
            }
            Ok(SeriesIds { head: id, rounds: ids })
        };
        let ids = write().map_err(err)?;
        tx.commit().map_err(err)?;
        Ok(ids)
    }

    /// Makes runs already stored (`rounds`, in order: a `-c --repeat` series saves each test as
    /// it ends, so nothing is lost if the series is cut short) one series: a head run like
    /// [`Store::insert_series`]'s, its context taken from the first round, and each round
    /// pointing at it. Returns the head's id. A round that already belongs to a series is
    /// refused, so no run is in two.
    pub fn group_series(&mut self, head: &NewSeries, rounds: &[RunId]) -> Result<RunId, StoreError> {
        let Some(first) = rounds.first() else {
            return Err(StoreError::InvalidRun("a series needs at least one round".into()));
        };
        let series_doc = head.document(rounds.len());
        let (path, timeout_ms) = (self.path.clone(), self.timeout_ms);
        let err = |e| StoreError::from_sqlite(e, &path, timeout_ms);
        let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate).map_err(err)?;
        let write = || -> rusqlite::Result<Result<RunId, StoreError>> {
            let n = tx.execute(
                "INSERT INTO runs (time_unix, time, kind, local_host, remote_host, remote_port,
                    command_line, parameters, protocol, direction, wireperf_version, label, series)
                 SELECT time_unix, time, ?1, local_host, remote_host, remote_port, ?2, parameters,
                    protocol, direction, ?3, ?4, ?5
                 FROM runs WHERE id = ?6 AND series_of IS NULL",
                params![
                    head.kind.as_str(),
                    head.command_line,
                    env!("CARGO_PKG_VERSION"),
                    head.label,
                    series_doc.to_string(),
                    first.0
                ],
            )?;
            if n == 0 {
                return Ok(Err(StoreError::InvalidRun(format!("run {first} is not stored, or already in a series"))));
            }
            let id = tx.last_insert_rowid();
            for (i, r) in rounds.iter().enumerate() {
                let n = tx.execute(
                    "UPDATE runs SET series_of = ?1, series_round = ?2 WHERE id = ?3 AND series_of IS NULL",
                    params![id, i as i64 + 1, r.0],
                )?;
                if n == 0 {
                    return Ok(Err(StoreError::InvalidRun(format!("run {r} is not stored, or already in a series"))));
                }
            }
            Ok(Ok(RunId(id)))
        };
        // On any error `tx` is dropped unfinished, which rolls back.
        let id = write().map_err(err)??;
        tx.commit().map_err(err)?;
        Ok(id)
    }
}

/// A run's rows computed before the transaction opens (JSON encoding can fail; SQL then
/// only writes). The phases are borrowed from the [`NewRun`]: a report with its intervals is
/// the largest thing a save holds, and it is not copied.
#[derive(Clone)]
struct PreparedRun<'a> {
    kind: &'static str,
    time_unix: i64,
    local_host: Option<String>,
    remote_host: Option<String>,
    remote_port: Option<u16>,
    command_line: Option<String>,
    parameters: String,
    figures: Figures,
    doctor: Option<String>,
    findings: Option<String>,
    verdicts: Option<String>,
    source: Option<String>,
    label: Option<String>,
    phases: Vec<(&'a NewPhase, PhaseFigures, String)>,
}

impl<'a> PreparedRun<'a> {
    fn of(run: &'a NewRun) -> Result<PreparedRun<'a>, StoreError> {
        if run.phases.is_empty() {
            return Err(StoreError::InvalidRun("a run needs at least one phase".into()));
        }
        let phases: Vec<(&NewPhase, PhaseFigures, String)> = run
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
        let figs: Vec<Figures> = phases.iter().map(|(_, f, _)| f.figures.clone()).collect();
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
        let json = |v: &Option<serde_json::Value>| v.as_ref().map(serde_json::to_string).transpose();
        Ok(PreparedRun {
            kind: run.kind.as_str(),
            time_unix,
            local_host: first.start.connected.first().map(|c| c.local_host.clone()),
            remote_host,
            remote_port,
            command_line: run.command_line.clone(),
            parameters: parameters.to_string(),
            figures: total,
            doctor: json(&run.doctor)?,
            findings: json(&run.findings)?,
            verdicts: json(&run.verdicts)?,
            source: run.source.clone(),
            label: run.label.clone(),
            phases,
        })
    }

    /// Writes the run row and its phases; `member` = (the series' head, round number).
    fn write(&self, tx: &rusqlite::Transaction<'_>, member: Option<(RunId, i64)>) -> rusqlite::Result<RunId> {
        let total = &self.figures;
        tx.execute(
            "INSERT INTO runs (time_unix, time, kind, local_host, remote_host, remote_port,
                command_line, parameters, protocol, direction, duration, sent_bytes, sent_bps,
                received_bytes, received_bps, retransmits, cpu_host, cpu_remote, error,
                doctor, findings, verdicts, source, wireperf_version, label, series_of, series_round)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16,
                ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27)",
            params![
                self.time_unix,
                rfc3339_utc(self.time_unix),
                self.kind,
                self.local_host,
                self.remote_host,
                self.remote_port,
                self.command_line,
                self.parameters,
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
                self.doctor,
                self.findings,
                self.verdicts,
                self.source,
                env!("CARGO_PKG_VERSION"),
                self.label,
                member.map(|m| m.0.0),
                member.map(|m| m.1),
            ],
        )?;
        let id = tx.last_insert_rowid();
        for (seq, (phase, f, doc)) in self.phases.iter().enumerate() {
            insert_phase(tx, id, seq as i64, phase, f, doc)?;
        }
        Ok(RunId(id))
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
