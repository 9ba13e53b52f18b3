//! The latency figures of one test, computed once from its probes, and their JSON and text.
//!
//! Every reader (the client's text and `-J`, the suite's phases, the history, the HTML report,
//! the exporter) reads a [`LatencySummary`]; none recomputes a percentile from the probes.

use crate::advice::{LocalQueue, advise};
use crate::grade::Grade;
use crate::percentile::{jitter, nearest_rank, sorted};
use crate::rpm::rpm;
use crate::sample::{Phase, Probe};
use serde::{Deserialize, Serialize};

/// Nearest-rank percentiles of a set of round trips, ms.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Percentiles {
    /// Median.
    pub p50: f64,
    /// 90th percentile.
    pub p90: f64,
    /// 99th percentile.
    pub p99: f64,
    /// Largest.
    pub max: f64,
    /// How many round trips they come from.
    pub samples: usize,
}

impl Percentiles {
    /// The percentiles of `samples` (ms); `None` when there are none.
    pub fn of(samples: &[f64]) -> Option<Percentiles> {
        let s = sorted(samples);
        Some(Percentiles {
            p50: round_us(nearest_rank(&s, 50.0)?),
            p90: round_us(nearest_rank(&s, 90.0)?),
            p99: round_us(nearest_rank(&s, 99.0)?),
            max: round_us(nearest_rank(&s, 100.0)?),
            samples: s.len(),
        })
    }
}

/// Milliseconds rounded to the microsecond: finer digits are clock noise.
fn round_us(ms: f64) -> f64 {
    (ms * 1000.0).round() / 1000.0
}

/// The latency of one test: idle and loaded round trips and what they mean.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LatencySummary {
    /// What the probes were (e.g. `tcp_connect` to the server's port, plus the loaded
    /// streams' `tcpi_rtt`), so a reader knows what was measured.
    pub method: String,
    /// The loaded phase (upload, download or bidir).
    pub phase: Phase,
    /// Round trips before the load; `None` when no idle probe came back.
    pub idle_ms: Option<Percentiles>,
    /// Round trips of the probes under load; `None` when none came back.
    pub loaded_ms: Option<Percentiles>,
    /// The load streams' own smoothed RTT (`tcpi_rtt`, one value per stream and interval);
    /// `None` when this host sent no TCP stream.
    pub stream_rtt_ms: Option<Percentiles>,
    /// Loaded p50 − idle p50.
    pub added_ms: Option<f64>,
    /// Mean absolute difference between consecutive loaded probes.
    pub jitter_ms: Option<f64>,
    /// Loaded probes sent.
    pub probes: usize,
    /// Loaded probes that got no answer in time.
    pub lost: usize,
    /// `lost / probes`; `None` when no loaded probe was sent.
    pub probe_loss: Option<f64>,
    /// Responsiveness, round trips per minute (see [`crate::rpm`]).
    pub rpm: Option<f64>,
    /// The grade (see [`crate::grade`]); `None` without idle and loaded round trips.
    pub grade: Option<Grade>,
    /// This host's qdisc backlog on the test's interface during the load, when sampled.
    #[serde(default)]
    pub local_queue: Option<LocalQueue>,
    /// Where the queue is and the fix, when the grade is bad (see [`crate::advice`]).
    #[serde(default)]
    pub advice: Vec<String>,
    /// Every probe with its time, for charts (idle ones first).
    pub series: Vec<Probe>,
}

impl LatencySummary {
    /// The figures of a test whose loaded phase was `phase`, from its probes (idle and loaded,
    /// in the order sent) and the load streams' own round trips `stream_rtt` (ms).
    pub fn compute(method: &str, phase: Phase, probes: &[Probe], stream_rtt: &[f64]) -> LatencySummary {
        let answered = |idle: bool| -> Vec<f64> {
            probes.iter().filter(|p| (p.phase == Phase::Idle) == idle).filter_map(|p| p.rtt_ms).collect()
        };
        let idle = answered(true);
        let loaded = answered(false);
        let sent = probes.iter().filter(|p| p.phase != Phase::Idle).count();
        let lost = probes.iter().filter(|p| p.phase != Phase::Idle && p.rtt_ms.is_none()).count();
        let idle_ms = Percentiles::of(&idle);
        let loaded_ms = Percentiles::of(&loaded);
        let probe_loss = (sent > 0).then(|| lost as f64 / sent as f64);
        let added_ms = match (idle_ms, loaded_ms) {
            (Some(i), Some(l)) => Some(round_us(l.p50 - i.p50)),
            _ => None,
        };
        // A test whose loaded probes all failed is an F when the idle ones came back.
        let grade = match (added_ms, idle_ms, probe_loss) {
            (Some(a), _, loss) => Some(Grade::from_added(a, loss.unwrap_or(0.0))),
            (None, Some(_), Some(loss)) if loss >= 1.0 => Some(Grade::F),
            _ => None,
        };
        LatencySummary {
            method: method.to_string(),
            phase,
            idle_ms,
            loaded_ms,
            stream_rtt_ms: Percentiles::of(stream_rtt),
            added_ms,
            jitter_ms: jitter(&loaded).map(round_us),
            probes: sent,
            lost,
            probe_loss,
            rpm: rpm(&loaded, stream_rtt).map(f64::round),
            grade,
            local_queue: None,
            advice: Vec::new(),
            series: probes.to_vec(),
        }
    }

    /// Adds where the queue is and the fix (for a bad grade), from the loaded direction's
    /// rate and this host's qdisc samples.
    pub fn with_advice(mut self, rate_bps: f64, local: Option<LocalQueue>) -> LatencySummary {
        self.advice = advise(&self, rate_bps, local.as_ref());
        self.local_queue = local;
        self
    }

    /// The JSON object each suite phase and the client's `-J` carry (`series` left out: the
    /// history keeps it, a phase line stays short).
    pub fn to_json(&self) -> serde_json::Value {
        let mut v = serde_json::to_value(self).unwrap_or(serde_json::Value::Null);
        if let Some(m) = v.as_object_mut() {
            m.remove("series");
        }
        v
    }

    /// The whole summary with every probe (the `-J` extension key and the history keep it).
    pub fn to_json_full(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
    }

    /// Reads a summary back from [`LatencySummary::to_json_full`]'s value (history, HTML,
    /// exporter); `None` when it is not one.
    pub fn from_json(v: &serde_json::Value) -> Option<LatencySummary> {
        serde_json::from_value(v.clone()).ok()
    }

    /// The text block printed after a test's summary.
    pub fn text(&self) -> String {
        let mut out = format!("Latency under load ({}):\n", self.method);
        let row = |name: &str, p: Option<Percentiles>, extra: String| match p {
            Some(p) => format!(
                "  {name:<8} p50 {:>8.3} ms  p90 {:>8.3} ms  p99 {:>8.3} ms  max {:>8.3} ms  ({}{extra})\n",
                p.p50,
                p.p90,
                p.p99,
                p.max,
                plural(p.samples, "probe"),
            ),
            None => format!("  {name:<8} not measured: no probe came back{extra}\n"),
        };
        let idle = self.series.iter().filter(|p| p.phase == Phase::Idle).count();
        let idle_lost = idle - self.idle_ms.map_or(0, |p| p.samples);
        out.push_str(&row("idle", self.idle_ms, lost_note(idle_lost)));
        out.push_str(&row(self.phase.name(), self.loaded_ms, lost_note(self.lost)));
        if let Some(s) = self.stream_rtt_ms {
            out.push_str(&format!(
                "  {:<8} p50 {:>8.3} ms  p90 {:>8.3} ms  p99 {:>8.3} ms  max {:>8.3} ms  (tcpi_rtt of the load streams)\n",
                "streams", s.p50, s.p90, s.p99, s.max
            ));
        }
        let fig = |v: Option<f64>, unit: &str| v.map_or("not measured".to_string(), |x| format!("{x:.3} {unit}"));
        out.push_str(&format!(
            "  added latency {}, probe jitter {}, responsiveness {}, grade {}\n",
            fig(self.added_ms, "ms"),
            fig(self.jitter_ms, "ms"),
            self.rpm.map_or("not measured".to_string(), |r| format!("{r:.0} RPM")),
            self.grade.map_or("none (no idle and loaded round trips to compare)".to_string(), |g| g.to_string()),
        ));
        for a in &self.advice {
            out.push_str(&format!("  {a}\n"));
        }
        out
    }
}

fn plural(n: usize, what: &str) -> String {
    if n == 1 { format!("1 {what}") } else { format!("{n} {what}s") }
}

fn lost_note(lost: usize) -> String {
    if lost == 0 { String::new() } else { format!(", {lost} lost") }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn probes(phase: Phase, rtts: &[Option<f64>]) -> Vec<Probe> {
        rtts.iter().enumerate().map(|(i, r)| Probe { at_ms: i as f64 * 100.0, phase, rtt_ms: *r }).collect()
    }

    #[test]
    fn deep_queue_grades_low() {
        let mut p = probes(Phase::Idle, &[Some(0.1), Some(0.2), Some(0.1), Some(0.15)]);
        p.extend(probes(Phase::Upload, &[Some(80.0), Some(90.0), None, Some(100.0), Some(85.0)]));
        let s = LatencySummary::compute("tcp_connect", Phase::Upload, &p, &[95.0, 96.0]);
        assert_eq!(s.idle_ms.unwrap().p50, 0.1);
        let l = s.loaded_ms.unwrap();
        assert_eq!((l.p50, l.p90, l.max, l.samples), (85.0, 100.0, 100.0, 4));
        assert_eq!(s.added_ms, Some(84.9));
        assert_eq!((s.probes, s.lost), (5, 1));
        assert_eq!(s.probe_loss, Some(0.2));
        assert_eq!(s.grade, Some(Grade::D));
        // Jitter over answered probes in order: |90-80|, |100-90|, |85-100| → 35/3.
        assert!((s.jitter_ms.unwrap() - 11.667).abs() < 1e-9);
        // TM(foreign) = 88.75 (4 kept), TM(self) = 95.5 → 60000 / 92.125 = 651.3.
        assert_eq!(s.rpm, Some(651.0));
        let j = s.to_json();
        assert_eq!(j["loaded_ms"]["p50"], 85.0);
        assert_eq!(j["grade"], "D");
        assert!(j.get("series").is_none());
    }

    #[test]
    fn no_idle_means_no_grade_and_says_so() {
        let p = probes(Phase::Download, &[Some(3.0), Some(4.0)]);
        let s = LatencySummary::compute("tcp_connect", Phase::Download, &p, &[]);
        assert_eq!(s.grade, None);
        assert_eq!(s.added_ms, None);
        assert!(s.text().contains("idle     not measured"), "{}", s.text());
        assert!(s.text().contains("grade none"), "{}", s.text());
    }

    #[test]
    fn every_loaded_probe_lost_is_f() {
        let mut p = probes(Phase::Idle, &[Some(0.2)]);
        p.extend(probes(Phase::Upload, &[None, None]));
        let s = LatencySummary::compute("tcp_connect", Phase::Upload, &p, &[]);
        assert_eq!(s.loaded_ms, None);
        assert_eq!(s.rpm, None);
        assert_eq!(s.grade, Some(Grade::F));
        assert!(s.text().contains("upload   not measured: no probe came back, 2 lost"), "{}", s.text());
    }

    #[test]
    fn text_lists_phases_and_figures() {
        let mut p = probes(Phase::Idle, &[Some(0.05); 3]);
        p.extend(probes(Phase::Bidir, &[Some(2.0); 3]));
        let t = LatencySummary::compute("tcp_connect", Phase::Bidir, &p, &[]).text();
        assert!(t.contains("bidir    p50    2.000 ms"), "{t}");
        assert!(t.contains("added latency 1.950 ms"), "{t}");
        assert!(t.contains("30000 RPM, grade A"), "{t}");
    }
}
