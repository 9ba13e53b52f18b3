//! `compare`: two runs side by side, phase by phase, and what changed in the link.
//!
//! Phases are matched by name (a client `-R` run's `download` phase lines up with a suite's
//! `download`). The change is `(B - A) / A`; it is absent when A is zero or missing.

use serde::Serialize;
use wireperf_protocol::outcome::words::percent_change;

use crate::link::{self, LinkFacts};
use crate::model::{PhaseDetail, RunDetail, RunSummary};
use crate::significance::{Significance, significance};

/// What a metric's numbers are.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    /// bit/s.
    BitsPerSecond,
    /// Bytes.
    Bytes,
    /// A count.
    Count,
    /// Percent.
    Percent,
    /// Seconds.
    Seconds,
    /// Milliseconds.
    Milliseconds,
}

/// One metric of one phase in both runs.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MetricDelta {
    /// Stable key (`received_bps`, `retransmits`, ...).
    pub metric: &'static str,
    /// What the table prints.
    pub label: &'static str,
    /// Unit of `a` and `b`.
    pub unit: Unit,
    /// Run A's value.
    pub a: Option<f64>,
    /// Run B's value.
    pub b: Option<f64>,
    /// `(b - a) / a * 100`.
    pub change_percent: Option<f64>,
}

/// One phase in both runs.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PhaseComparison {
    /// Phase name.
    pub name: String,
    /// Run A has this phase.
    pub in_a: bool,
    /// Run B has this phase.
    pub in_b: bool,
    /// The metrics at least one run has.
    pub metrics: Vec<MetricDelta>,
}

/// One link fact that differs.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LinkChange {
    /// Interface (`A -> B` when the interface itself changed).
    pub interface: String,
    /// `driver`, `speed`, `duplex`, `MTU`, ...
    pub field: &'static str,
    /// In run A.
    pub a: Option<String>,
    /// In run B.
    pub b: Option<String>,
}

/// What changed in the link between the runs, from their doctor snapshots.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct LinkComparison {
    /// Run A has a doctor snapshot.
    pub a_has_doctor: bool,
    /// Run B has a doctor snapshot.
    pub b_has_doctor: bool,
    /// Facts that differ.
    pub changes: Vec<LinkChange>,
    /// Finding ids in B and not in A.
    pub findings_added: Vec<String>,
    /// Finding ids in A and not in B.
    pub findings_removed: Vec<String>,
}

/// Two runs compared.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Comparison {
    /// Run A.
    pub a: RunSummary,
    /// Run B.
    pub b: RunSummary,
    /// Phases in A's order, then B's extra ones.
    pub phases: Vec<PhaseComparison>,
    /// Link changes.
    pub link: LinkComparison,
    /// Each direction's change against the noise of the runs on each side.
    pub significance: Significance,
}

/// Compares two stored runs.
pub fn compare(a: &RunDetail, b: &RunDetail) -> Comparison {
    let mut names: Vec<&str> = a.phase_details.iter().map(|p| p.name.as_str()).collect();
    for p in &b.phase_details {
        if !names.contains(&p.name.as_str()) {
            names.push(&p.name);
        }
    }
    let phases = names
        .into_iter()
        .map(|n| {
            let (pa, pb) = (a.phase(n), b.phase(n));
            PhaseComparison { name: n.to_string(), in_a: pa.is_some(), in_b: pb.is_some(), metrics: metrics(pa, pb) }
        })
        .collect();
    Comparison {
        a: a.summary.clone(),
        b: b.summary.clone(),
        phases,
        link: link_changes(a, b),
        significance: significance(std::slice::from_ref(a), std::slice::from_ref(b)),
    }
}

/// Compares two sides of one run or more each (a series' rounds): the table and link facts
/// from each side's first run, the significance from all of them.
pub fn compare_sets(a: &[RunDetail], b: &[RunDetail]) -> Option<Comparison> {
    compare_sets_at(a, b, crate::significance::LEVEL)
}

/// [`compare_sets`] with the significance judged at `level` percent.
pub fn compare_sets_at(a: &[RunDetail], b: &[RunDetail], level: f64) -> Option<Comparison> {
    let mut c = compare(a.first()?, b.first()?);
    c.significance = crate::significance::significance_at(a, b, level);
    Some(c)
}

type Getter = fn(&PhaseDetail) -> Option<f64>;

fn u(v: Option<u64>) -> Option<f64> {
    v.map(|x| x as f64)
}

/// The metrics compared, in table order.
const METRICS: &[(&str, &str, Unit, Getter)] = &[
    ("received_bps", "goodput (receiver)", Unit::BitsPerSecond, |p| p.figures.received_bps),
    ("sent_bps", "sender rate", Unit::BitsPerSecond, |p| p.figures.sent_bps),
    ("upload_bps", "upload goodput", Unit::BitsPerSecond, |p| p.upload_bps),
    ("download_bps", "download goodput", Unit::BitsPerSecond, |p| p.download_bps),
    ("received_bytes", "bytes received", Unit::Bytes, |p| u(p.figures.received_bytes)),
    ("retransmits", "retransmits", Unit::Count, |p| u(p.figures.retransmits)),
    ("jitter_ms", "jitter", Unit::Milliseconds, |p| p.jitter_ms),
    ("lost_percent", "datagrams lost", Unit::Percent, |p| p.lost_percent),
    ("cpu_host", "CPU local", Unit::Percent, |p| p.figures.cpu_host),
    ("cpu_remote", "CPU remote", Unit::Percent, |p| p.figures.cpu_remote),
    ("duration", "duration", Unit::Seconds, |p| p.figures.duration),
    ("latency_idle_p50_ms", "RTT idle p50", Unit::Milliseconds, |p| latency(p, "/idle_ms/p50")),
    ("latency_loaded_p50_ms", "RTT loaded p50", Unit::Milliseconds, |p| latency(p, "/loaded_ms/p50")),
    ("latency_loaded_p99_ms", "RTT loaded p99", Unit::Milliseconds, |p| latency(p, "/loaded_ms/p99")),
    ("latency_added_ms", "added latency", Unit::Milliseconds, |p| latency(p, "/added_ms")),
    ("latency_rpm", "responsiveness (RPM)", Unit::Count, |p| latency(p, "/rpm")),
];

/// A figure of the phase's `--latency` summary (the `-J` document's `wireperf_latency` key, as
/// the client computed it: read, never recomputed); `None` for a run without it.
fn latency(p: &PhaseDetail, pointer: &str) -> Option<f64> {
    let doc: serde_json::Value = serde_json::from_str(&p.document).ok()?;
    doc.get(wireperf_protocol::schema::LATENCY_KEY)?.pointer(pointer)?.as_f64()
}

fn is_bidir(p: Option<&PhaseDetail>) -> bool {
    p.is_some_and(|p| p.upload_bps.is_some() && p.download_bps.is_some())
}

fn metrics(pa: Option<&PhaseDetail>, pb: Option<&PhaseDetail>) -> Vec<MetricDelta> {
    // Upload/download goodput repeat the receiver figure unless the phase went both ways.
    let both_ways = is_bidir(pa) || is_bidir(pb);
    METRICS
        .iter()
        .filter(|(k, ..)| both_ways || !matches!(*k, "upload_bps" | "download_bps"))
        .filter_map(|&(metric, label, unit, get)| {
            let a = pa.and_then(get);
            let b = pb.and_then(get);
            if a.is_none() && b.is_none() {
                return None;
            }
            let change_percent = a.zip(b).and_then(|(a, b)| percent_change(a, b));
            Some(MetricDelta { metric, label, unit, a, b, change_percent })
        })
        .collect()
}

fn link_changes(a: &RunDetail, b: &RunDetail) -> LinkComparison {
    let la = a.doctor.as_ref().map(link::interfaces).unwrap_or_default();
    let lb = b.doctor.as_ref().map(link::interfaces).unwrap_or_default();
    let mut changes = Vec::new();
    let mut pairs: Vec<(Option<&LinkFacts>, Option<&LinkFacts>)> = Vec::new();
    if let ([x], [y]) = (la.as_slice(), lb.as_slice()) {
        // One interface each: the same link even if it was renamed (a new adapter, a new
        // driver naming it differently).
        pairs.push((Some(x), Some(y)));
    } else {
        for x in &la {
            pairs.push((Some(x), lb.iter().find(|y| y.name == x.name)));
        }
        for y in lb.iter().filter(|y| !la.iter().any(|x| x.name == y.name)) {
            pairs.push((None, Some(y)));
        }
    }
    for (x, y) in pairs {
        let name = match (x, y) {
            (Some(x), Some(y)) if x.name != y.name => format!("{} -> {}", x.name, y.name),
            (Some(x), _) => x.name.clone(),
            (None, Some(y)) => y.name.clone(),
            (None, None) => continue,
        };
        if x.is_none() || y.is_none() {
            let present = |f: Option<&LinkFacts>| f.map(|_| "present".to_string());
            changes.push(LinkChange { interface: name.clone(), field: "interface", a: present(x), b: present(y) });
            continue;
        }
        let fa = x.map(LinkFacts::fields).unwrap_or_default();
        let fb = y.map(LinkFacts::fields).unwrap_or_default();
        for ((field, va), (_, vb)) in fa.into_iter().zip(fb) {
            if va != vb {
                changes.push(LinkChange { interface: name.clone(), field, a: va, b: vb });
            }
        }
    }
    let ia = link::finding_ids(a.doctor.as_ref(), a.findings.as_ref());
    let ib = link::finding_ids(b.doctor.as_ref(), b.findings.as_ref());
    LinkComparison {
        a_has_doctor: a.doctor.is_some(),
        b_has_doctor: b.doctor.is_some(),
        changes,
        findings_added: ib.difference(&ia).cloned().collect(),
        findings_removed: ia.difference(&ib).cloned().collect(),
    }
}

impl crate::Store {
    /// Compares stored runs `a` and `b`.
    pub fn compare(&self, a: crate::RunId, b: crate::RunId) -> Result<Comparison, crate::StoreError> {
        Ok(compare(&self.get(a)?, &self.get(b)?))
    }

    /// Compares the runs `a` (one or more) with the runs `b`; a series' head stands for its
    /// counted rounds ([`crate::Store::expand_series`]).
    pub fn compare_sets(&self, a: &[crate::RunId], b: &[crate::RunId]) -> Result<Comparison, crate::StoreError> {
        self.compare_sets_at(a, b, crate::significance::LEVEL)
    }

    /// [`Self::compare_sets`] with the significance judged at `level` percent.
    pub fn compare_sets_at(
        &self,
        a: &[crate::RunId],
        b: &[crate::RunId],
        level: f64,
    ) -> Result<Comparison, crate::StoreError> {
        let get = |ids: &[crate::RunId]| {
            self.expand_series(ids)?.into_iter().map(|i| self.get(i)).collect::<Result<Vec<_>, _>>()
        };
        let (ra, rb) = (get(a)?, get(b)?);
        compare_sets_at(&ra, &rb, level)
            .ok_or(crate::StoreError::NotFound(a.first().or(b.first()).copied().unwrap_or(crate::RunId(0))))
    }
}
