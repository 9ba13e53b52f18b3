//! Verdicts: measured numbers against the ceiling, in plain words.
//!
//! Pure functions over numbers so every sentence is unit-tested. Thresholds: at least 85 % of
//! the theoretical goodput is what a healthy path reaches (TCP on a clean link gets 94–95 %);
//! below 50 % something is wrong.

use crate::link::{Ceiling, LinkContext};
use crate::phase::{FarHost, Phase, PhaseResult};
use serde::Serialize;
use wireperf_bottleneck::Side;
use wireperf_doctor::share::SharedHost;
use wireperf_protocol::outcome::words::{count, rate};

/// How a measurement compares with what the path can carry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Grade {
    /// ≥ 85 % of the ceiling.
    Good,
    /// 50–85 %.
    Fair,
    /// < 50 %.
    Slow,
    /// No ceiling known (loopback, unknown speed) or the phase failed.
    Unknown,
}

/// One judged direction of one phase.
#[derive(Clone, Debug, Serialize)]
pub struct Verdict {
    /// Phase name.
    pub phase: String,
    /// `upload` or `download`.
    pub direction: String,
    /// Measured goodput, bit/s.
    pub measured_bps: f64,
    /// The ceiling, bit/s.
    pub ceiling_bps: Option<u64>,
    /// measured / ceiling.
    pub ratio: Option<f64>,
    /// The grade.
    pub grade: Grade,
    /// The sentence.
    pub text: String,
}

/// Grades a ratio.
pub fn grade(ratio: f64) -> Grade {
    if ratio >= 0.85 {
        Grade::Good
    } else if ratio >= 0.5 {
        Grade::Fair
    } else {
        Grade::Slow
    }
}

/// Judges one direction.
pub fn judge(
    phase: &str,
    direction: &str,
    measured: f64,
    retransmits: u64,
    ceiling: Option<&Ceiling>,
    findings: &[&str],
) -> Verdict {
    let retr = if retransmits > 0 { format!(", with {} retransmits", count(retransmits)) } else { String::new() };
    let see = if findings.is_empty() { String::new() } else { format!("; see doctor finding {}", findings.join(", ")) };
    let Some(c) = ceiling else {
        return Verdict {
            phase: phase.into(),
            direction: direction.into(),
            measured_bps: measured,
            ceiling_bps: None,
            ratio: None,
            grade: Grade::Unknown,
            text: format!("{direction} measured {}{retr} (no link ceiling to judge against){see}", rate(measured)),
        };
    };
    let cap = if phase == "udp" { c.udp_bps } else { c.tcp_bps };
    // A shared (half-duplex) ceiling is split between the two directions of a bidir test.
    let cap_dir = if phase == "bidir" && c.shared_between_directions { cap / 2 } else { cap };
    let ratio = if cap_dir > 0 { measured / cap_dir as f64 } else { 0.0 };
    let g = grade(ratio);
    Verdict {
        phase: phase.into(),
        direction: direction.into(),
        measured_bps: measured,
        ceiling_bps: Some(cap_dir),
        ratio: Some(ratio),
        grade: g,
        text: format!(
            "{direction} reached {:.0}% of the {} {} can carry{retr}{see}",
            ratio * 100.0,
            rate(cap_dir as f64),
            c.described_as
        ),
    }
}

/// What TCP_INFO says held this host's senders back in a phase ("limited-by" times summed over
/// the streams this host sent on), in words; `None` when nothing stood out (under 20 %).
pub fn limited_words(report: &wireperf_protocol::schema::TestReport) -> Option<String> {
    let (mut busy, mut rwnd, mut sndbuf) = (0u64, 0u64, 0u64);
    for s in report.end.streams.iter().filter_map(|e| e.sender.as_ref()).filter(|s| s.sender) {
        busy += s.busy_time_us.unwrap_or(0);
        rwnd += s.rwnd_limited_us.unwrap_or(0);
        sndbuf += s.sndbuf_limited_us.unwrap_or(0);
    }
    if busy == 0 {
        return None;
    }
    let pct = |x: u64| x as f64 * 100.0 / busy as f64;
    let mut parts = Vec::new();
    if pct(rwnd) >= 20.0 {
        parts.push(format!(
            "the receiver's window held the sender back {:.0}% of the time (raise the receiver's rmem or -w)",
            pct(rwnd)
        ));
    }
    if pct(sndbuf) >= 20.0 {
        parts.push(format!(
            "the send buffer held it back {:.0}% of the time (raise wmem or -w on this host)",
            pct(sndbuf)
        ));
    }
    (!parts.is_empty()).then(|| parts.join("; "))
}

/// Verdicts for every phase, plus the asymmetry remark.
pub fn judge_all(phases: &[PhaseResult], link: &LinkContext) -> Vec<Verdict> {
    let serious = link.serious_findings();
    let server = server_host(phases);
    let mut out = Vec::new();
    for p in phases.iter().filter(|p| p.error.is_none()) {
        let name = p.phase.name();
        let cited = |direction: &str| cited_findings(p, direction, &serious, server);
        let (up, down) = (cited("upload"), cited("download"));
        let (up, down): (Vec<&str>, Vec<&str>) =
            (up.iter().map(String::as_str).collect(), down.iter().map(String::as_str).collect());
        let (up, down) = (up.as_slice(), down.as_slice());
        match p.phase {
            // The file phase is judged against the disk, not the link (see `disk`).
            Phase::File => {}
            Phase::Upload | Phase::Udp => {
                let c = link.ceiling_for("upload");
                out.push(judge(name, "upload", p.upload_bps, p.upload_retransmits, c, up));
            }
            Phase::Download => {
                let c = link.ceiling_for("download");
                out.push(judge(name, "download", p.download_bps, p.download_retransmits, c, down));
            }
            Phase::Bidir => {
                let c = link.ceiling_for("upload");
                out.push(judge(name, "upload", p.upload_bps, p.upload_retransmits, c, up));
                let c = link.ceiling_for("download");
                out.push(judge(name, "download", p.download_bps, p.download_retransmits, c, down));
            }
        }
    }
    // This host's senders know from TCP_INFO what held them back: add it to the upload
    // verdicts (the client sends upload data).
    for v in out.iter_mut().filter(|v| v.direction == "upload") {
        if let Some(p) = phases.iter().find(|p| p.phase.name() == v.phase)
            && let Some(w) = limited_words(&p.report)
        {
            v.text.push_str("; ");
            v.text.push_str(&w);
        }
    }
    out
}

/// The first phase's copy of the server's shared host, when it shared one.
pub fn server_host(phases: &[PhaseResult]) -> Option<&SharedHost> {
    phases.iter().find_map(|p| match &p.far_host {
        FarHost::Shared(h) => Some(&**h),
        _ => None,
    })
}

/// The serious doctor findings that the phase's bottleneck verdict for `direction`
/// (`upload`: client→server) points at: its main limit's host's findings (this host's, or
/// the server's when it shared them, named "on the server") that explain that limit (see
/// [`Limit::findings_behind`]). The others are listed once per host under the suite's doctor
/// findings, not on every verdict.
///
/// [`Limit::findings_behind`]: wireperf_bottleneck::Limit::findings_behind
fn cited_findings(
    p: &PhaseResult,
    direction: &str,
    client: &[&'static str],
    server: Option<&SharedHost>,
) -> Vec<String> {
    let label = if direction == "upload" { "client→server" } else { "server→client" };
    let Some(v) = p.bottleneck.iter().find(|v| v.direction == label) else { return Vec::new() };
    let behind = v.main.findings_behind();
    match v.main.side {
        Side::Client => client.iter().filter(|f| behind.contains(f)).map(|f| f.to_string()).collect(),
        Side::Server => server
            .map(|h| h.serious_ids())
            .unwrap_or_default()
            .into_iter()
            .filter(|f| behind.contains(f))
            .map(|f| format!("{f} on the server"))
            .collect(),
        Side::Path => Vec::new(),
    }
}

/// "download is 64% slower than upload" when one direction is well below the other.
pub fn asymmetry(phases: &[PhaseResult]) -> Option<String> {
    let up_phase = phases.iter().find(|p| p.phase == Phase::Upload && p.error.is_none())?;
    let down_phase = phases.iter().find(|p| p.phase == Phase::Download && p.error.is_none())?;
    let (up, down) = (up_phase.upload_bps, down_phase.download_bps);
    if up <= 0.0 || down <= 0.0 {
        return None;
    }
    let (slow, fast, slow_name, fast_name, slow_phase, label) = if down < up {
        (down, up, "download", "upload", down_phase, "server→client")
    } else {
        (up, down, "upload", "download", up_phase, "client→server")
    };
    // When the watch named the slower direction's limit, the remark points at it instead of
    // guessing at the receiver.
    let limit = slow_phase.bottleneck.iter().find(|v| v.direction == label).map(|v| &v.main);
    let look = match limit {
        Some(l) if l.limit == wireperf_bottleneck::ids::PATH_BOTTLENECK => {
            format!("the path between the hosts holds the {slow_name} (see its bottleneck)")
        }
        Some(l) if l.limit != wireperf_bottleneck::ids::UNKNOWN => {
            format!("its bottleneck is {} on the {} (see below)", l.limit, l.side.as_str())
        }
        _ => format!("look at the receiving side of the {slow_name} (driver, RPS, rings)"),
    };
    (slow < 0.7 * fast).then(|| {
        format!(
            "{slow_name} ({}) is {:.0}% slower than {fast_name} ({}): {look}",
            rate(slow),
            (1.0 - slow / fast) * 100.0,
            rate(fast)
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::link::CeilingSource;
    use wireperf_bottleneck::ids;

    fn ceiling(bps: u64) -> Ceiling {
        Ceiling {
            tcp_bps: bps,
            udp_bps: bps,
            source: CeilingSource::Link,
            shared_between_directions: false,
            described_as: "this link".into(),
        }
    }

    #[test]
    fn the_sentence_from_the_issue() {
        let v =
            judge("download", "download", 0.25 * 2.35e9, 1386, Some(&ceiling(2_350_000_000)), &["generic-usb-driver"]);
        assert_eq!(v.grade, Grade::Slow);
        assert_eq!(
            v.text,
            "download reached 25% of the 2.35 Gbit/s this link can carry, with 1,386 retransmits; see doctor finding generic-usb-driver"
        );
    }

    #[test]
    fn grades_and_unknown_ceiling() {
        assert_eq!(grade(0.94), Grade::Good);
        assert_eq!(grade(0.6), Grade::Fair);
        assert_eq!(grade(0.2), Grade::Slow);
        let v = judge("upload", "upload", 1e9, 0, None, &[]);
        assert_eq!(v.grade, Grade::Unknown);
        assert!(v.text.contains("no link ceiling"));
    }

    #[test]
    fn half_duplex_bidir_shares_the_ceiling() {
        let mut c = ceiling(1_000_000_000);
        c.shared_between_directions = true;
        let v = judge("bidir", "upload", 450e6, 0, Some(&c), &[]);
        assert_eq!(v.ceiling_bps, Some(500_000_000));
        assert_eq!(v.grade, Grade::Good);
    }

    /// A phase that measured `up` and `down` bit/s and nothing else.
    fn phase_result(phase: Phase, up: f64, down: f64) -> PhaseResult {
        PhaseResult {
            phase,
            upload_bps: up,
            download_bps: down,
            retransmits: 0,
            upload_retransmits: 0,
            download_retransmits: 0,
            udp_loss: None,
            error: None,
            report: Default::default(),
            bottleneck: Vec::new(),
            latency: None,
            cpu_load: None,
            bottleneck_not_watched: None,
            far_host: Default::default(),
        }
    }

    #[test]
    fn asymmetry_is_reported_only_when_large() {
        let mk = phase_result;
        let s = asymmetry(&[mk(Phase::Upload, 2.3e9, 0.0), mk(Phase::Download, 0.0, 0.6e9)]).unwrap();
        assert!(s.starts_with("download (600 Mbit/s) is 74% slower than upload"), "{s}");
        assert!(asymmetry(&[mk(Phase::Upload, 1e9, 0.0), mk(Phase::Download, 0.0, 0.9e9)]).is_none());
        // The watch named the slower direction's limit: the remark points at it.
        let mut up = mk(Phase::Upload, 191e6, 0.0);
        up.bottleneck = vec![wireperf_bottleneck::Verdict {
            direction: "client→server".into(),
            main: wireperf_bottleneck::Limit {
                limit: ids::PATH_BOTTLENECK.into(),
                side: wireperf_bottleneck::Side::Path,
                evidence: Vec::new(),
                fix: Vec::new(),
                strength: 0.9,
            },
            also: Vec::new(),
            retransmits: None,
            far_side_seen: true,
            not_checked: Vec::new(),
        }];
        let s = asymmetry(&[up, mk(Phase::Download, 0.0, 431e6)]).unwrap();
        assert!(s.ends_with("the path between the hosts holds the upload (see its bottleneck)"), "{s}");
    }

    #[test]
    fn a_verdict_cites_only_the_findings_its_bottleneck_points_at() {
        use wireperf_bottleneck::{Limit, Side, Verdict as Bottleneck};
        let limit = |id: &str, side, evidence: &[&str]| Limit {
            limit: id.into(),
            side,
            evidence: evidence.iter().map(|e| e.to_string()).collect(),
            fix: Vec::new(),
            strength: 1.0,
        };
        let verdict = |direction: &str, main| Bottleneck::of(direction, main);
        let mut p = phase_result(Phase::Bidir, 477e6, 600e6);
        p.bottleneck = vec![
            // The upload's limit was the path: no finding of the client explains it.
            verdict("client→server", limit(ids::PATH_BOTTLENECK, Side::Path, &[])),
            // The download's receiver (the client) had one CPU full of softirq, RPS off.
            verdict(
                "server→client",
                limit(ids::RECEIVER_CPU, Side::Client, &["used by the network stack (softirq)", "RPS is off on eth0"]),
            ),
        ];
        let serious = ["rps-off", "generic-usb-driver"];
        assert!(cited_findings(&p, "upload", &serious, None).is_empty());
        assert_eq!(cited_findings(&p, "download", &serious, None), ["rps-off"]);
        // A CPU busy with the test's own copies is not RPS's to fix.
        p.bottleneck[1].main = limit(ids::RECEIVER_CPU, Side::Client, &["used by the test itself"]);
        assert!(cited_findings(&p, "download", &serious, None).is_empty());
        // A link ceiling on the client is what the generic USB driver explains...
        p.bottleneck[1].main = limit(ids::LINK, Side::Client, &[]);
        assert_eq!(cited_findings(&p, "download", &serious, None), ["generic-usb-driver"]);
        // ...but not one on the server: the client's doctor did not look there...
        p.bottleneck[1].main = limit(ids::LINK, Side::Server, &[]);
        assert!(cited_findings(&p, "download", &serious, None).is_empty());
        // ...the server's did, when it shared its findings.
        let server = SharedHost {
            findings: vec![wireperf_doctor::share::SharedFinding {
                id: "generic-usb-driver".into(),
                severity: "crit".into(),
                ..Default::default()
            }],
            ..Default::default()
        };
        assert_eq!(cited_findings(&p, "download", &serious, Some(&server)), ["generic-usb-driver on the server"]);
        p.bottleneck[1].main = limit(ids::PATH_BOTTLENECK, Side::Path, &[]);
        assert!(cited_findings(&p, "download", &serious, Some(&server)).is_empty());
        let text = judge("bidir", "download", 600e6, 0, None, &[]).text;
        assert!(!text.contains("see doctor finding"), "{text}");
    }

    #[test]
    fn tcp_info_limits_become_words() {
        use wireperf_protocol::schema::{EndStream, Summary, TestReport};
        let mut r = TestReport::default();
        r.end.streams.push(EndStream {
            sender: Some(Summary {
                busy_time_us: Some(1_000_000),
                rwnd_limited_us: Some(430_000),
                sndbuf_limited_us: Some(10_000),
                sender: true,
                ..Default::default()
            }),
            ..Default::default()
        });
        let w = limited_words(&r).unwrap();
        assert!(w.starts_with("the receiver's window held the sender back 43% of the time"), "{w}");
        assert!(!w.contains("send buffer"));
        // A stream the peer sent on (sender flag false) is not this host's to judge.
        r.end.streams[0].sender.as_mut().unwrap().sender = false;
        assert_eq!(limited_words(&r), None);
    }
}
