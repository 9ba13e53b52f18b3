//! A suite repeated: rounds of all its phases, and per phase and direction the statistics of
//! throughput, retransmits and loaded latency over the rounds ([`wireperf_stats`]).
//!
//! Each round runs every phase in order (upload, download, bidir, …), so a drift of the path
//! over the series (a neighbour's download, a CPU warming up) falls on every direction alike
//! rather than on whichever ran last. A first round may be kept out of the statistics as a
//! warm-up (`--warmup`): the first test after a quiet spell often meets cold caches, an ARP
//! lookup, a router's flow setup. With a confidence target (netperf's `-I LEVEL,WIDTH`) the
//! series stops as soon as every direction's interval of the mean is narrow enough, or at
//! the cap, and says which.

use crate::phase::{Phase, PhaseResult};
use crate::run::{Progress, SuiteConfig, SuiteResult, run_suite};
use serde::Serialize;
use std::sync::atomic::{AtomicBool, Ordering};
use wireperf_stats::Summary;

/// How many rounds, and when to stop early.
#[derive(Clone, Debug, PartialEq)]
pub struct RepeatConfig {
    /// Rounds at most (`--repeat`; with a confidence target the cap, default 10).
    pub rounds: usize,
    /// First rounds left out of the statistics (`--warmup`).
    pub warmup: usize,
    /// Confidence level of the intervals, percent (95 unless `--confidence` says otherwise).
    pub level: f64,
    /// `--confidence LEVEL,WIDTH`: stop once every throughput interval lies within ±WIDTH/2 %
    /// of its mean.
    pub width_pct: Option<f64>,
}

/// Counted rounds needed before a confidence target is judged: two give one degree of
/// freedom and an interval wider than any target; netperf's minimum is three as well.
pub const MIN_ROUNDS_FOR_CONFIDENCE: usize = 3;

/// One figure of one direction of one phase, over the counted rounds.
#[derive(Clone, Debug, Serialize)]
pub struct DirectionStats {
    /// The phase.
    pub phase: Phase,
    /// `upload` or `download`.
    pub direction: &'static str,
    /// Goodput, bit/s.
    pub throughput_bps: Summary,
    /// TCP retransmits per round.
    pub retransmits: Summary,
    /// The phase's loaded round trip (probes' median), ms, when latency was measured.
    pub loaded_latency_ms: Option<Summary>,
}

impl DirectionStats {
    /// The throughput row's cells in the series text: median, mean, standard deviation,
    /// `min - max` and the interval with its ± percent of the mean (`none from one {unit}`
    /// when a single round or test is counted).
    pub fn throughput_cells(&self, unit: &str) -> [String; 5] {
        use wireperf_protocol::outcome::words::rate;
        let t = &self.throughput_bps;
        let ci = match (t.ci, t.relative_half_width()) {
            (Some((lo, hi)), Some(h)) => format!("[{}, {}] ±{:.1}%", rate(lo.max(0.0)), rate(hi), h * 100.0),
            _ => format!("none from one {unit}"),
        };
        [rate(t.median), rate(t.mean), rate(t.sd), format!("{} - {}", rate(t.min), rate(t.max)), ci]
    }

    /// The line under a direction's throughput row in the suite's and the client's series
    /// text: `retransmits median 0, mean 0.2 [0.0, 0.8]; loaded latency median …`. Interval
    /// ends below zero are shown as 0 (a count or a delay cannot be negative; the JSON keeps
    /// the interval as computed).
    pub fn side_figures(&self) -> String {
        let r = &self.retransmits;
        let mut s = format!("retransmits median {:.0}, mean {:.1}", r.median, r.mean);
        if let Some((lo, hi)) = r.ci {
            s.push_str(&format!(" [{:.1}, {:.1}]", lo.max(0.0), hi));
        }
        if let Some(l) = &self.loaded_latency_ms {
            s.push_str(&format!("; loaded latency median {:.2} ms, mean {:.2} ms", l.median, l.mean));
            if let Some((lo, hi)) = l.ci {
                s.push_str(&format!(" [{:.2}, {:.2}]", lo.max(0.0), hi));
            }
        }
        s
    }
}

/// Whether the confidence target was met.
#[derive(Clone, Debug, Serialize)]
pub struct ConfidenceOutcome {
    /// Level, percent.
    pub level: f64,
    /// The target width, percent of the mean (±width/2).
    pub width_pct: f64,
    /// Every direction's interval within the target.
    pub met: bool,
    /// Counted rounds when the series stopped.
    pub counted_rounds: usize,
    /// The widest interval at the end: (`phase direction`, ± percent of its mean).
    pub widest: Option<(String, f64)>,
}

/// The whole series.
#[derive(Clone, Debug, Serialize)]
pub struct SeriesResult {
    /// Every round, warm-up included, in order.
    pub rounds: Vec<SuiteResult>,
    /// Leading rounds left out of the statistics.
    pub warmup: usize,
    /// Per phase and direction, over the counted rounds.
    pub statistics: Vec<DirectionStats>,
    /// The confidence target's outcome (`--confidence`).
    pub confidence: Option<ConfidenceOutcome>,
    /// The series ended early because it was interrupted.
    pub interrupted: bool,
}

impl SeriesResult {
    /// True when every phase of every round completed.
    pub fn all_ok(&self) -> bool {
        !self.rounds.is_empty() && self.rounds.iter().all(SuiteResult::all_ok)
    }

    /// The rounds the statistics count.
    pub fn counted(&self) -> &[SuiteResult] {
        self.rounds.get(self.warmup..).unwrap_or_default()
    }

    /// The statistics of `phase`'s `direction`.
    pub fn stats(&self, phase: Phase, direction: &str) -> Option<&DirectionStats> {
        self.statistics.iter().find(|s| s.phase == phase && s.direction == direction)
    }
}

/// Runs the suite `repeat.rounds` times at most (see the module's doc).
pub fn run_series(
    cfg: &SuiteConfig,
    repeat: &RepeatConfig,
    progress: &mut dyn Progress,
    interrupt: &AtomicBool,
) -> SeriesResult {
    let mut rounds: Vec<SuiteResult> = Vec::new();
    let mut round_cfg = cfg.clone();
    let mut confidence = None;
    for i in 0..repeat.rounds.max(1) {
        if interrupt.load(Ordering::Relaxed) {
            break;
        }
        progress.note(&format!(
            "round {} of {}{}",
            i + 1,
            repeat.rounds,
            if i < repeat.warmup { " (warm-up)" } else { "" }
        ));
        let r = run_suite(&round_cfg, progress, interrupt);
        // The loopback baseline and the disk say the same every round: measure them once.
        round_cfg.baseline = false;
        round_cfg.path = None;
        rounds.push(r);
        let counted = rounds.get(repeat.warmup..).unwrap_or_default();
        if let Some(width) = repeat.width_pct {
            let stats = statistics(counted, repeat.level);
            let outcome = judge(&stats, repeat.level, width, counted.len());
            let stop = outcome.met;
            confidence = Some(outcome);
            if stop {
                break;
            }
        }
    }
    let interrupted = interrupt.load(Ordering::Relaxed);
    let warmup = repeat.warmup.min(rounds.len());
    let statistics = statistics(&rounds[warmup..], repeat.level);
    SeriesResult { rounds, warmup, statistics, confidence, interrupted }
}

/// The directions a phase measures.
fn directions(phase: Phase) -> &'static [&'static str] {
    match phase {
        Phase::Upload | Phase::Udp | Phase::File => &["upload"],
        Phase::Download => &["download"],
        Phase::Bidir => &["upload", "download"],
    }
}

/// A phase's loaded round trip, ms (the probes' median).
fn loaded_ms(p: &PhaseResult) -> Option<f64> {
    p.latency.as_ref()?["loaded_ms"]["p50"].as_f64()
}

/// Per phase and direction over `rounds` (phases that failed in a round are left out of it).
pub fn statistics(rounds: &[SuiteResult], level: f64) -> Vec<DirectionStats> {
    let mut phases: Vec<Phase> = Vec::new();
    for p in rounds.iter().flat_map(|r| &r.phases) {
        if !phases.contains(&p.phase) {
            phases.push(p.phase);
        }
    }
    let mut out = Vec::new();
    for phase in phases {
        let ok: Vec<&PhaseResult> =
            rounds.iter().flat_map(|r| &r.phases).filter(|p| p.phase == phase && p.error.is_none()).collect();
        for &direction in directions(phase) {
            let (bps, retr): (Vec<f64>, Vec<f64>) = ok
                .iter()
                .map(|p| match direction {
                    "upload" => (p.upload_bps, p.upload_retransmits as f64),
                    _ => (p.download_bps, p.download_retransmits as f64),
                })
                .unzip();
            let lat: Vec<f64> = ok.iter().filter_map(|p| loaded_ms(p)).collect();
            let (Some(throughput_bps), Some(retransmits)) = (Summary::of(&bps, level), Summary::of(&retr, level))
            else {
                continue;
            };
            let loaded_latency_ms = (lat.len() == ok.len()).then(|| Summary::of(&lat, level)).flatten();
            out.push(DirectionStats { phase, direction, throughput_bps, retransmits, loaded_latency_ms });
        }
    }
    out
}

/// The confidence target against the throughput statistics of `counted` rounds.
pub fn judge(stats: &[DirectionStats], level: f64, width_pct: f64, counted: usize) -> ConfidenceOutcome {
    let widest = stats
        .iter()
        .filter_map(|s| {
            let h = s.throughput_bps.relative_half_width()?;
            Some((format!("{} {}", s.phase.name(), s.direction), h * 100.0))
        })
        .max_by(|a, b| a.1.total_cmp(&b.1));
    let met = counted >= MIN_ROUNDS_FOR_CONFIDENCE
        && !stats.is_empty()
        && stats.iter().all(|s| s.throughput_bps.within(width_pct));
    ConfidenceOutcome { level, width_pct, met, counted_rounds: counted, widest }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round(up: f64, down: f64) -> SuiteResult {
        let phase = |phase, u, d| PhaseResult {
            phase,
            upload_bps: u,
            download_bps: d,
            retransmits: 0,
            upload_retransmits: 3,
            download_retransmits: 0,
            udp_loss: None,
            error: None,
            report: Default::default(),
            bottleneck: Vec::new(),
            latency: Some(serde_json::json!({"loaded_ms": {"p50": 2.0}})),
            cpu_load: None,
            bottleneck_not_watched: None,
            far_host: Default::default(),
        };
        SuiteResult::of_phases(
            "x".into(),
            5201,
            1,
            1,
            vec![phase(Phase::Upload, up, 0.0), phase(Phase::Download, 0.0, down), phase(Phase::Bidir, up, down)],
        )
    }

    #[test]
    fn statistics_per_phase_and_direction() {
        let rounds = [round(940.0, 500.0), round(950.0, 510.0), round(960.0, 490.0)];
        let s = statistics(&rounds, 95.0);
        let names: Vec<(Phase, &str)> = s.iter().map(|s| (s.phase, s.direction)).collect();
        assert_eq!(
            names,
            [
                (Phase::Upload, "upload"),
                (Phase::Download, "download"),
                (Phase::Bidir, "upload"),
                (Phase::Bidir, "download")
            ]
        );
        assert_eq!(s[0].throughput_bps.mean, 950.0);
        assert_eq!(s[1].throughput_bps.median, 500.0);
        assert_eq!(s[0].retransmits.mean, 3.0);
        assert_eq!(s[0].loaded_latency_ms.unwrap().mean, 2.0);
    }

    #[test]
    fn confidence_needs_three_rounds_and_every_direction_narrow() {
        let steady = [round(950.0, 500.0), round(951.0, 500.5), round(949.0, 499.5)];
        let j = judge(&statistics(&steady[..2], 95.0), 95.0, 5.0, 2);
        assert!(!j.met, "two rounds are not enough: {j:?}");
        let j = judge(&statistics(&steady, 95.0), 95.0, 5.0, 3);
        assert!(j.met, "{j:?}");
        // The download swings: its interval is the widest and the target is missed.
        let noisy = [round(950.0, 300.0), round(951.0, 600.0), round(949.0, 450.0)];
        let j = judge(&statistics(&noisy, 95.0), 95.0, 5.0, 3);
        assert!(!j.met);
        let (name, pct) = j.widest.unwrap();
        assert!(name.ends_with("download") && pct > 50.0, "{name} {pct}");
    }

    #[test]
    fn a_failed_phase_is_left_out_of_its_round() {
        let mut bad = round(10.0, 10.0);
        bad.phases[0].error = Some("refused".into());
        let s = statistics(&[round(950.0, 500.0), bad], 95.0);
        assert_eq!(s[0].throughput_bps.n, 1, "the failed upload is not a zero");
        assert_eq!(s[1].throughput_bps.n, 2);
    }
}
