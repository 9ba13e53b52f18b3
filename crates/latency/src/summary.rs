//! The latency figures of one test, computed once from its probes, and their JSON and text.
//!
//! Every reader (the client's text and `-J`, the suite's phases, the history, the HTML report,
//! the exporter) reads a [`LatencySummary`]; none recomputes a percentile from the probes.

use crate::advice::{LocalQueue, advise};
use crate::direction::{OneWayAdded, one_way_added};
use crate::grade::Grade;
use crate::percentile::{jitter, nearest_rank, sorted};
use crate::rpm::rpm;
use crate::sample::{Method, Phase, Probe};
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

/// One kind of probe's idle and loaded round trips, when a test used more than one kind
/// (the UDP echo and the TCP request/response of the echo extension).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MethodFigures {
    /// The kind.
    pub method: Method,
    /// Its idle round trips.
    pub idle_ms: Option<Percentiles>,
    /// Its loaded round trips.
    pub loaded_ms: Option<Percentiles>,
    /// Its loaded probes sent.
    pub probes: usize,
    /// Its loaded probes lost.
    pub lost: usize,
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
    /// The added latency split by direction, from echo probes' server timestamps (see
    /// [`crate::direction`]); `None` for connect probes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub one_way_added_ms: Option<OneWayAdded>,
    /// Each kind's figures, when the probes were of more than one kind (the headline figures
    /// above pool them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub per_method: Vec<MethodFigures>,
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
    /// Every probe with its time, for charts (idle ones first). Absent from a suite phase's
    /// `latency` line (its report carries them), so it reads back empty.
    #[serde(default)]
    pub series: Vec<Probe>,
}

impl LatencySummary {
    /// The figures of a test whose loaded phase was `phase`, from its probes (idle and loaded,
    /// in the order sent) and the load streams' own round trips `stream_rtt` (ms).
    pub fn compute(method: &str, phase: Phase, probes: &[Probe], stream_rtt: &[f64]) -> LatencySummary {
        let (idle, loaded, sent, lost) = split(probes.iter());
        let idle_ms = Percentiles::of(&idle);
        let loaded_ms = Percentiles::of(&loaded);
        let mut methods: Vec<Method> = probes.iter().map(|p| p.method).collect();
        methods.sort();
        methods.dedup();
        let per_method = if methods.len() < 2 {
            Vec::new()
        } else {
            methods
                .into_iter()
                .map(|m| {
                    let (i, l, probes, lost) = split(probes.iter().filter(|p| p.method == m));
                    MethodFigures {
                        method: m,
                        idle_ms: Percentiles::of(&i),
                        loaded_ms: Percentiles::of(&l),
                        probes,
                        lost,
                    }
                })
                .collect()
        };
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
            one_way_added_ms: one_way_added(probes),
            per_method,
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
        self.advice = advise(self.grade, self.added_ms, rate_bps, local.as_ref());
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

    /// One line of the figures a reader compares across phases: idle and loaded p50/p99, the
    /// added latency, RPM and the grade (the suite prints one per phase).
    pub fn line(&self) -> String {
        let pair = |p: Option<Percentiles>| {
            p.map_or("not measured".to_string(), |p| format!("p50 {:.2} ms, p99 {:.2} ms", p.p50, p.p99))
        };
        let mut out = format!("idle {}; loaded {}", pair(self.idle_ms), pair(self.loaded_ms));
        if let Some(a) = self.added_ms {
            out.push_str(&format!("; added {a:+.2} ms"));
        }
        if self.lost > 0 {
            out.push_str(&format!("; {} of {} loaded probes lost", self.lost, self.probes));
        }
        out.push_str(&match self.rpm {
            Some(r) => format!("; {r:.0} RPM"),
            None => "; RPM not measured".to_string(),
        });
        out.push_str(&match self.grade {
            Some(g) => format!("; grade {}", g.letter()),
            None => "; no grade (no idle and loaded round trips to compare)".to_string(),
        });
        out
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
        for m in &self.per_method {
            let p50 = |p: Option<Percentiles>| p.map_or("not measured".to_string(), |p| format!("{:.3} ms", p.p50));
            out.push_str(&format!(
                "  {:<12} idle p50 {}, {} p50 {}, p99 {} ({}{})\n",
                m.method.name(),
                p50(m.idle_ms),
                self.phase.name(),
                p50(m.loaded_ms),
                m.loaded_ms.map_or("not measured".to_string(), |p| format!("{:.3} ms", p.p99)),
                plural(m.probes, "probe"),
                lost_note(m.lost),
            ));
        }
        if let Some(d) = self.one_way_added_ms {
            out.push_str(&format!(
                "  added one way: client->server {:.3} ms, server->client {:.3} ms (echo timestamps, {})\n",
                d.up_ms,
                d.down_ms,
                plural(d.samples, "probe"),
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

/// Answered idle and loaded round trips, loaded probes sent and lost.
fn split<'a>(probes: impl Iterator<Item = &'a Probe>) -> (Vec<f64>, Vec<f64>, usize, usize) {
    let (mut idle, mut loaded, mut sent, mut lost) = (Vec::new(), Vec::new(), 0, 0);
    for p in probes {
        match (p.phase == Phase::Idle, p.rtt_ms) {
            (true, Some(r)) => idle.push(r),
            (true, None) => {}
            (false, r) => {
                sent += 1;
                match r {
                    Some(r) => loaded.push(r),
                    None => lost += 1,
                }
            }
        }
    }
    (idle, loaded, sent, lost)
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
    use crate::sample::Method;

    fn probes(phase: Phase, rtts: &[Option<f64>]) -> Vec<Probe> {
        rtts.iter().enumerate().map(|(i, r)| Probe::new(i as f64 * 100.0, phase, *r, Method::TcpConnect)).collect()
    }

    #[test]
    fn a_bad_grade_gets_advice_and_keeps_the_local_queue() {
        let mut p = probes(Phase::Idle, &[Some(0.2); 5]);
        p.extend(probes(Phase::Upload, &[Some(60.2); 5]).into_iter().map(|mut x| {
            x.at_ms += 1000.0;
            x
        }));
        let q = LocalQueue { iface: "eth0".into(), kind: "pfifo_fast".into(), max_backlog: 150_000, samples: 10 };
        let s = LatencySummary::compute("tcp_connect", Phase::Upload, &p, &[]).with_advice(20e6, Some(q.clone()));
        assert!(s.advice[1].starts_with("the queue is on this host: eth0's pfifo_fast"), "{:?}", s.advice);
        assert_eq!(s.local_queue, Some(q));
        let good = LatencySummary::compute("tcp_connect", Phase::Upload, &probes(Phase::Idle, &[Some(0.2); 5]), &[]);
        assert!(good.with_advice(20e6, None).advice.is_empty());
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
        assert_eq!(
            s.line(),
            "idle p50 0.10 ms, p99 0.20 ms; loaded p50 85.00 ms, p99 100.00 ms; added +84.90 ms; 1 of 5 loaded probes lost; 651 RPM; grade D"
        );
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

    #[test]
    fn echo_probes_of_two_kinds_have_their_own_rows_and_a_direction_split() {
        let echo = |m, phase, rtt: f64, up: f64| Probe { up_ms: Some(up), ..Probe::new(0.0, phase, Some(rtt), m) };
        let mut p = Vec::new();
        for m in [Method::UdpEcho, Method::TcpRr] {
            p.extend((0..4).map(|_| echo(m, Phase::Idle, 0.2, 100.1)));
            p.extend((0..4).map(|_| echo(m, Phase::Bidir, 50.2, 150.1)));
        }
        p.push(Probe::new(0.0, Phase::Bidir, None, Method::UdpEcho));
        let s = LatencySummary::compute("udp_echo+tcp_rr", Phase::Bidir, &p, &[]);
        assert_eq!(s.per_method.len(), 2);
        assert_eq!((s.per_method[0].method, s.per_method[0].probes, s.per_method[0].lost), (Method::UdpEcho, 5, 1));
        assert_eq!((s.per_method[1].method, s.per_method[1].lost), (Method::TcpRr, 0));
        let d = s.one_way_added_ms.unwrap();
        assert_eq!((d.up_ms, d.down_ms), (50.0, 0.0));
        let t = s.text();
        assert!(t.contains("udp_echo     idle p50 0.200 ms, bidir p50 50.200 ms"), "{t}");
        assert!(t.contains("client->server 50.000 ms, server->client 0.000 ms"), "{t}");
        let back = LatencySummary::from_json(&s.to_json_full()).unwrap();
        assert_eq!(back, s);
        // History written before the extension (no method, no split) still reads.
        let mut old = s.to_json_full();
        old.as_object_mut().unwrap().remove("per_method");
        old.as_object_mut().unwrap().remove("one_way_added_ms");
        old["series"] = serde_json::json!([{"at_ms": 1.0, "phase": "idle", "rtt_ms": 0.3}]);
        let o = LatencySummary::from_json(&old).unwrap();
        assert_eq!(o.series[0].method, Method::TcpConnect);
        assert!(o.per_method.is_empty() && o.one_way_added_ms.is_none());
    }
}
