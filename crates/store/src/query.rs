//! Reading runs back: `list`, `get`, `delete`.

use rusqlite::{OptionalExtension, Row, params};
use serde_json::Value;

use crate::error::StoreError;
use crate::model::{
    Direction, Figures, IntervalRow, ListFilter, PhaseDetail, RunDetail, RunId, RunKind, RunSummary, Side, StreamRow,
};
use crate::store::Store;

/// The `runs` columns a [`RunSummary`] is read from, in [`summary_from_row`]'s order.
const SUMMARY_COLS: &str = "id, time_unix, time, kind, local_host, remote_host, remote_port,
    protocol, direction, duration, sent_bytes, sent_bps, received_bytes, received_bps,
    retransmits, cpu_host, cpu_remote, error, label,
    (SELECT group_concat(name, char(31)) FROM
        (SELECT name FROM phases WHERE phases.run_id = runs.id ORDER BY seq)),
    series, series_of, series_round";

/// Columns after [`SUMMARY_COLS`] start here.
const AFTER_SUMMARY: usize = 23;

fn u64_col(r: &Row<'_>, i: usize) -> rusqlite::Result<Option<u64>> {
    Ok(r.get::<_, Option<i64>>(i)?.map(|v| u64::try_from(v).unwrap_or(0)))
}

fn figures_at(r: &Row<'_>, at: usize) -> rusqlite::Result<Figures> {
    Ok(Figures {
        protocol: r.get(at)?,
        direction: r.get(at + 1)?,
        duration: r.get(at + 2)?,
        sent_bytes: u64_col(r, at + 3)?,
        sent_bps: r.get(at + 4)?,
        received_bytes: u64_col(r, at + 5)?,
        received_bps: r.get(at + 6)?,
        retransmits: u64_col(r, at + 7)?,
        cpu_host: r.get(at + 8)?,
        cpu_remote: r.get(at + 9)?,
        error: r.get(at + 10)?,
    })
}

fn summary_from_row(r: &Row<'_>) -> rusqlite::Result<RunSummary> {
    let kind: String = r.get(3)?;
    let phases: Option<String> = r.get(19)?;
    Ok(RunSummary {
        id: RunId(r.get(0)?),
        time_unix: r.get(1)?,
        time: r.get(2)?,
        // The CHECK constraint admits only known kinds.
        kind: RunKind::parse(&kind).unwrap_or(RunKind::Import),
        local_host: r.get(4)?,
        remote_host: r.get(5)?,
        remote_port: r.get::<_, Option<i64>>(6)?.and_then(|p| u16::try_from(p).ok()),
        figures: figures_at(r, 7)?,
        label: r.get(18)?,
        phases: phases.map(|p| p.split('\u{1f}').map(str::to_string).collect()).unwrap_or_default(),
        series: r.get::<_, Option<String>>(20)?.and_then(|t| serde_json::from_str(&t).ok()),
        series_of: r.get::<_, Option<i64>>(21)?.map(RunId),
        series_round: r.get(22)?,
    })
}

fn json_col(text: Option<String>) -> Result<Option<Value>, StoreError> {
    Ok(text.map(|t| serde_json::from_str(&t)).transpose()?)
}

impl Store {
    /// Runs matching `filter`, oldest first.
    pub fn list(&self, filter: &ListFilter) -> Result<Vec<RunSummary>, StoreError> {
        let sql = format!(
            "SELECT {SUMMARY_COLS} FROM runs
             WHERE (?1 IS NULL OR kind = ?1) AND (?2 IS NULL OR remote_host = ?2)
               AND (?3 IS NULL OR label = ?3) AND (?4 IS NULL OR time_unix >= ?4)
               AND (?6 OR series_of IS NULL)
             ORDER BY id DESC LIMIT ?5"
        );
        let limit = filter.limit.map_or(-1, i64::from);
        let run = || -> rusqlite::Result<Vec<RunSummary>> {
            let mut st = self.conn.prepare(&sql)?;
            let rows = st.query_map(
                params![
                    filter.kind.map(RunKind::as_str),
                    filter.remote_host,
                    filter.label,
                    filter.since_unix,
                    limit,
                    filter.members
                ],
                summary_from_row,
            )?;
            rows.collect()
        };
        let mut out = run().map_err(|e| self.err(e))?;
        out.reverse();
        Ok(out)
    }

    /// Everything stored about run `id`.
    pub fn get(&self, id: RunId) -> Result<RunDetail, StoreError> {
        let sql = format!(
            "SELECT {SUMMARY_COLS}, command_line, parameters, source, wireperf_version, doctor,
                    findings, verdicts
             FROM runs WHERE id = ?1"
        );
        type Extra = (Option<String>, String, Option<String>, String, Option<String>, Option<String>, Option<String>);
        let row = self
            .conn
            .query_row(&sql, [id.0], |r| {
                let c = AFTER_SUMMARY;
                let extra: Extra = (
                    r.get(c)?,
                    r.get(c + 1)?,
                    r.get(c + 2)?,
                    r.get(c + 3)?,
                    r.get(c + 4)?,
                    r.get(c + 5)?,
                    r.get(c + 6)?,
                );
                Ok((summary_from_row(r)?, extra))
            })
            .optional()
            .map_err(|e| self.err(e))?;
        let Some((summary, (command_line, parameters, source, wireperf_version, doctor, findings, verdicts))) = row
        else {
            return Err(StoreError::NotFound(id));
        };
        Ok(RunDetail {
            summary,
            command_line,
            parameters: serde_json::from_str(&parameters)?,
            source,
            wireperf_version,
            doctor: json_col(doctor)?,
            findings: json_col(findings)?,
            verdicts: json_col(verdicts)?,
            phase_details: self.phases(id).map_err(|e| self.err(e))?,
            members: self.members(id).map_err(|e| self.err(e))?,
        })
    }

    /// The rounds of series `head` in order (empty when it is not a series' head).
    fn members(&self, head: RunId) -> rusqlite::Result<Vec<RunId>> {
        let mut st = self.conn.prepare("SELECT id FROM runs WHERE series_of = ?1 ORDER BY series_round, id")?;
        st.query_map([head.0], |r| Ok(RunId(r.get(0)?)))?.collect()
    }

    /// The runs a comparison side stands for: a series' head becomes its counted rounds (the
    /// warm-ups left out, as its statistics left them out); any other run stays itself.
    pub fn expand_series(&self, ids: &[RunId]) -> Result<Vec<RunId>, StoreError> {
        let mut out = Vec::new();
        for &id in ids {
            let d = self.get(id)?;
            if d.members.is_empty() {
                out.push(id);
            } else {
                let skip = usize::try_from(d.summary.series_warmup()).unwrap_or(0);
                out.extend(d.members.iter().skip(skip).copied());
            }
        }
        Ok(out)
    }

    /// Deletes run `id` with its phases and series.
    pub fn delete(&mut self, id: RunId) -> Result<(), StoreError> {
        let n = self.conn.execute("DELETE FROM runs WHERE id = ?1", [id.0]).map_err(|e| self.err(e))?;
        if n == 0 { Err(StoreError::NotFound(id)) } else { Ok(()) }
    }

    fn phases(&self, id: RunId) -> rusqlite::Result<Vec<PhaseDetail>> {
        let mut st = self.conn.prepare(
            "SELECT seq, name, side, num_streams, protocol, direction, duration, sent_bytes, sent_bps,
                    received_bytes, received_bps, retransmits, cpu_host, cpu_remote, error,
                    upload_bps, download_bps, jitter_ms, lost_packets, packets, lost_percent, document,
                    bottleneck, cpu_load
             FROM phases WHERE run_id = ?1 ORDER BY seq",
        )?;
        let mut phases: Vec<PhaseDetail> = st
            .query_map([id.0], |r| {
                let side: String = r.get(2)?;
                Ok(PhaseDetail {
                    seq: r.get(0)?,
                    name: r.get(1)?,
                    side: if side == "server" { Side::Server } else { Side::Client },
                    num_streams: r.get(3)?,
                    figures: figures_at(r, 4)?,
                    upload_bps: r.get(15)?,
                    download_bps: r.get(16)?,
                    jitter_ms: r.get(17)?,
                    lost_packets: r.get(18)?,
                    packets: r.get(19)?,
                    lost_percent: r.get(20)?,
                    document: r.get(21)?,
                    bottleneck: json_column(r.get(22)?),
                    cpu_load: json_column(r.get(23)?),
                    intervals: Vec::new(),
                    streams: Vec::new(),
                })
            })?
            .collect::<rusqlite::Result<_>>()?;
        for p in &mut phases {
            p.intervals = self.interval_rows(id, p.seq)?;
            p.streams = self.stream_rows(id, p.seq)?;
        }
        Ok(phases)
    }

    fn interval_rows(&self, id: RunId, phase: u32) -> rusqlite::Result<Vec<IntervalRow>> {
        let mut st = self.conn.prepare_cached(
            "SELECT idx, stream, direction, t_start, t_end, bytes, bps, retransmits, cwnd, rtt,
                    jitter_ms, lost_packets, packets, omitted
             FROM intervals WHERE run_id = ?1 AND phase = ?2 ORDER BY rowid",
        )?;
        st.query_map(params![id.0, phase], |r| {
            Ok(IntervalRow {
                index: r.get(0)?,
                stream: r.get(1)?,
                direction: r.get::<_, Option<String>>(2)?.as_deref().and_then(Direction::parse),
                start: r.get(3)?,
                end: r.get(4)?,
                bytes: u64_col(r, 5)?.unwrap_or(0),
                bits_per_second: r.get(6)?,
                retransmits: u64_col(r, 7)?,
                cwnd: u64_col(r, 8)?,
                rtt: u64_col(r, 9)?,
                jitter_ms: r.get(10)?,
                lost_packets: r.get(11)?,
                packets: r.get(12)?,
                omitted: r.get(13)?,
            })
        })?
        .collect()
    }

    fn stream_rows(&self, id: RunId, phase: u32) -> rusqlite::Result<Vec<StreamRow>> {
        let mut st = self.conn.prepare_cached(
            "SELECT stream, direction, sent_bytes, sent_bps, received_bytes, received_bps,
                    retransmits, max_cwnd, max_rtt, min_rtt, mean_rtt, jitter_ms, lost_packets,
                    packets, lost_percent
             FROM streams WHERE run_id = ?1 AND phase = ?2 ORDER BY rowid",
        )?;
        st.query_map(params![id.0, phase], |r| {
            Ok(StreamRow {
                stream: r.get(0)?,
                direction: r.get::<_, Option<String>>(1)?.as_deref().and_then(Direction::parse),
                sent_bytes: u64_col(r, 2)?,
                sent_bps: r.get(3)?,
                received_bytes: u64_col(r, 4)?,
                received_bps: r.get(5)?,
                retransmits: u64_col(r, 6)?,
                max_cwnd: u64_col(r, 7)?,
                max_rtt: u64_col(r, 8)?,
                min_rtt: u64_col(r, 9)?,
                mean_rtt: u64_col(r, 10)?,
                jitter_ms: r.get(11)?,
                lost_packets: r.get(12)?,
                packets: r.get(13)?,
                lost_percent: r.get(14)?,
            })
        })?
        .collect()
    }
}

/// A JSON text column; text that does not parse (written by hand, or damaged) reads as absent,
/// never as an error: the run's figures stay readable.
fn json_column(text: Option<String>) -> Option<serde_json::Value> {
    text.and_then(|t| serde_json::from_str(&t).ok())
}
