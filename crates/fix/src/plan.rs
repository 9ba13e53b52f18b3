//! The plan: every fix the baseline's verdicts and both hosts' doctors point at, strongest
//! first, each with the host it changes, the exact change and why.
//!
//! A verdict names a cause on a side (`receiver-window` on the server); the change for it comes
//! from the doctor's one remedy per cause ([`wireperf_doctor::remedy`]), so the plan applies
//! exactly the line the bottleneck, the "both ends" section and the doctor print. A cause named
//! in many rounds and directions weighs more than one named once; a doctor finding no verdict
//! points at comes after every verdict's. What wireperf cannot change (a driver, a cable, the
//! router's shaper) is a step by hand.

use crate::step::{Direction, Host, How, PlannedStep};
use std::collections::BTreeMap;
use wireperf_bottleneck::diagnosis::{Limit, Side, ids};
use wireperf_doctor::remedy::{self, Remedy};
use wireperf_doctor::rules::{Finding, Severity};
use wireperf_suite::Phase;
use wireperf_suite::series::SeriesResult;

/// This host's facts the plan needs, read by the caller (the plan itself reads nothing).
#[derive(Debug, Clone, Default)]
pub struct LocalFacts {
    /// The interface toward the server.
    pub iface: Option<String>,
    /// `net.ipv4.tcp_rmem`.
    pub tcp_rmem: Option<[u64; 3]>,
    /// `net.ipv4.tcp_wmem`.
    pub tcp_wmem: Option<[u64; 3]>,
    /// The doctor's findings for the interface, run with the measured round trip (so the
    /// socket-buffer rule is checked).
    pub findings: Vec<Finding>,
}

/// Doctor findings a server applies on request (it recomputes them); the rest of a far
/// host's findings are steps by hand.
pub const REMOTE_FINDINGS: &[&str] = &["rps-off", "txqueuelen", "socket-buffers"];

/// Weight of a verdict's main limit against one it lists under `also`.
const ALSO_WEIGHT: f64 = 0.3;

/// The ordered plan for `baseline`.
pub fn plan(baseline: &SeriesResult, local: &LocalFacts) -> Vec<PlannedStep> {
    let need = NeedBytes::of(baseline);
    let mut steps: BTreeMap<(Host, String), PlannedStep> = BTreeMap::new();
    let far = baseline.counted().iter().find_map(|r| r.server_host.as_ref());
    for round in baseline.counted() {
        for phase in round.phases.iter().filter(|p| p.error.is_none()) {
            for v in &phase.bottleneck {
                let dir = Direction::of_verdict_label(&v.direction);
                let limits = std::iter::once((&v.main, 1.0)).chain(v.also.iter().map(|l| (l, ALSO_WEIGHT)));
                for (l, weight) in limits {
                    let Some(step) = from_limit(l, dir, phase.phase, local, far, need.get(dir)) else { continue };
                    merge(&mut steps, step, weight * l.strength.max(0.1), dir);
                }
            }
        }
    }
    let has_buffer_step = |h: Host, steps: &BTreeMap<(Host, String), PlannedStep>| {
        steps.keys().any(|(host, c)| *host == h && (c == ids::RECEIVER_WINDOW || c == ids::SENDER_BUFFER))
    };
    for f in &local.findings {
        if f.id == "socket-buffers" && has_buffer_step(Host::Client, &steps) {
            continue;
        }
        if let Some(step) = from_local_finding(f, local) {
            let dirs = step.targets.clone();
            for d in dirs {
                merge(&mut steps, step.clone(), finding_weight(f.severity), d);
            }
        }
    }
    if let Some(h) = far {
        for f in &h.findings {
            if f.id == "socket-buffers" && has_buffer_step(Host::Server, &steps) {
                continue;
            }
            if let Some(step) = from_far_finding(f, &h.iface, need.upload.or(need.download)) {
                let weight = if f.serious() { 0.2 } else { 0.1 };
                for d in step.targets.clone() {
                    merge(&mut steps, step.clone(), weight, d);
                }
            }
        }
    }
    let mut out: Vec<PlannedStep> = steps.into_values().collect();
    // Steps wireperf applies first (they can be proven unattended), then by hand; within each
    // the strongest first.
    out.sort_by(|a, b| b.appliable().cmp(&a.appliable()).then(b.gain.total_cmp(&a.gain)));
    out
}

/// Adds `step` (or its weight, when the same cause on the same host is there already).
fn merge(steps: &mut BTreeMap<(Host, String), PlannedStep>, step: PlannedStep, weight: f64, dir: Direction) {
    let e = steps.entry((step.host, step.cause.clone())).or_insert_with(|| PlannedStep { gain: 0.0, ..step });
    e.gain += weight;
    if !e.targets.contains(&dir) {
        e.targets.push(dir);
        e.targets.sort();
    }
}

fn finding_weight(s: Severity) -> f64 {
    match s {
        Severity::Crit => 0.3,
        Severity::Warn => 0.2,
        Severity::Info => 0.1,
    }
}

/// The mean smoothed round trip of the client's own sending streams (TCP_INFO, the upload
/// phases of the counted rounds), seconds: the path's round trip under load.
pub fn upload_rtt_s(s: &SeriesResult) -> Option<f64> {
    let rtts: Vec<f64> = s
        .counted()
        .iter()
        .flat_map(|r| r.phases.iter().filter(|p| p.phase == Phase::Upload && p.error.is_none()))
        .flat_map(|p| p.report.end.streams.iter().filter_map(|st| st.sender.as_ref()))
        .filter_map(|snd| snd.mean_rtt.filter(|m| *m > 0))
        .map(|us| us as f64 / 1e6)
        .collect();
    (!rtts.is_empty()).then(|| rtts.iter().sum::<f64>() / rtts.len() as f64)
}

/// The bytes each direction had in flight: its mean rate × the senders' mean round trip.
#[derive(Debug, Clone, Copy, Default)]
struct NeedBytes {
    upload: Option<u64>,
    download: Option<u64>,
}

impl NeedBytes {
    fn of(s: &SeriesResult) -> Self {
        // The round trip of the client's own senders (TCP_INFO, the upload phase): a download's
        // sender is the server, whose round trip over the same path is about the same.
        let Some(rtt) = upload_rtt_s(s) else { return NeedBytes::default() };
        let need = |phase, dir: &str| {
            s.stats(phase, dir).map(|st| (st.throughput_bps.mean / 8.0 * rtt) as u64).filter(|b| *b > 0)
        };
        NeedBytes { upload: need(Phase::Upload, "upload"), download: need(Phase::Download, "download") }
    }

    fn get(self, d: Direction) -> Option<u64> {
        match d {
            Direction::Upload => self.upload,
            Direction::Download => self.download,
        }
    }
}

fn host_of(side: Side) -> Host {
    match side {
        Side::Client => Host::Client,
        Side::Server => Host::Server,
        Side::Path => Host::Path,
    }
}

/// The doctor's remedy for a receive or a send buffer.
type BufferRemedy = fn(Option<[u64; 3]>, Option<u64>) -> Option<Remedy>;

/// The step a verdict's limit points at, if it has one.
fn from_limit(
    l: &Limit,
    dir: Direction,
    phase: Phase,
    local: &LocalFacts,
    far: Option<&wireperf_doctor::share::SharedHost>,
    need: Option<u64>,
) -> Option<PlannedStep> {
    let host = host_of(l.side);
    let test = if phase.name() == dir.name() {
        format!("the {}'s", dir.name())
    } else {
        format!("the {} test's {}", phase.name(), dir.name())
    };
    let why = format!(
        "{test} bottleneck is {} on the {}: {}",
        l.limit,
        host.name(),
        l.evidence.first().map_or("", String::as_str)
    );
    let buffer = |cause: &str| -> Option<PlannedStep> {
        let (current, fix): (Option<[u64; 3]>, BufferRemedy) = match (cause, host) {
            (ids::RECEIVER_WINDOW, Host::Client) => (local.tcp_rmem, remedy::receive_buffer),
            (ids::SENDER_BUFFER, Host::Client) => (local.tcp_wmem, remedy::send_buffer),
            (ids::RECEIVER_WINDOW, _) => (far.and_then(|h| h.tcp_rmem), remedy::receive_buffer),
            _ => (None, remedy::send_buffer),
        };
        let r = fix(current, need)?;
        Some(match host {
            Host::Client => from_remedy(host, &r, why.clone(), dir, local_how(local, &r)),
            _ => from_remedy(host, &r, why.clone(), dir, How::Remote { need_bytes: need }),
        })
    };
    match l.limit.as_str() {
        ids::RECEIVER_WINDOW | ids::SENDER_BUFFER if host != Host::Path => buffer(l.limit.as_str()),
        ids::RECEIVER_CPU | ids::SENDER_CPU if l.findings_behind().contains(&"rps-off") => {
            // The doctor's rps-off finding on that host is the change (a step of its own below
            // when the doctor saw it); the verdict adds its weight.
            match host {
                Host::Client => local.findings.iter().find(|f| f.id == "rps-off").and_then(|f| {
                    from_local_finding(f, local).map(|s| PlannedStep { why: why.clone(), targets: vec![dir], ..s })
                }),
                Host::Server => {
                    far.and_then(|h| h.findings.iter().find(|f| f.id == "rps-off")).and_then(|f| {
                        from_far_finding(f, &far.map(|h| h.iface.clone()).unwrap_or_default(), need)
                            .map(|s| PlannedStep { why: why.clone(), targets: vec![dir], ..s })
                    })
                }
                Host::Path => None,
            }
        }
        // A CPU busy with the test's own work is the host's capacity, not a setting to change
        // (more streams or pinning are test flags); unknown names nothing to change.
        ids::UNKNOWN | ids::RECEIVER_CPU | ids::SENDER_CPU => None,
        // Everything else is lifted by hand: the verdict's own fix lines.
        _ if l.fix.is_empty() => None,
        _ => Some(PlannedStep {
            host,
            cause: l.limit.clone(),
            change: None,
            commands: l.fix.clone(),
            persist: Vec::new(),
            why,
            targets: vec![dir],
            gain: 0.0,
            kind: "by-hand",
            how: How::ByHand,
        }),
    }
}

fn local_how(local: &LocalFacts, r: &Remedy) -> How {
    How::Local { iface: local.iface.clone().unwrap_or_default(), actions: r.actions.clone() }
}

fn from_remedy(host: Host, r: &Remedy, why: String, dir: Direction, how: How) -> PlannedStep {
    PlannedStep {
        host,
        cause: r.cause.to_string(),
        change: Some(r.change.clone()),
        commands: r.commands.clone(),
        persist: r.persist.clone(),
        why,
        targets: vec![dir],
        gain: 0.0,
        kind: "apply",
        how,
    }
}

/// The directions a finding on `host` should lift.
fn finding_targets(id: &str, host: Host) -> Vec<Direction> {
    match id {
        "rps-off" | "small-rings" | "coalescing" => vec![Direction::received_by(host)],
        "txqueuelen" => vec![Direction::sent_by(host)],
        _ => {
            let mut both = vec![Direction::Upload, Direction::Download];
            both.sort();
            both
        }
    }
}

/// A step for one of this host's doctor findings: applied when it has actions, by hand
/// when it is at least a warning without any, else left out.
fn from_local_finding(f: &Finding, local: &LocalFacts) -> Option<PlannedStep> {
    let by_hand = f.apply.is_empty();
    if by_hand && f.severity == Severity::Info {
        return None;
    }
    let change = (!by_hand).then(|| f.apply.iter().map(describe_action).collect::<Vec<_>>().join("; "));
    Some(PlannedStep {
        host: Host::Client,
        cause: f.id.to_string(),
        change,
        commands: f.fix.commands.clone(),
        persist: f.fix.notes.iter().filter(|n| n.starts_with("Persist")).cloned().collect(),
        why: format!("the doctor on the client: {}", f.summary),
        targets: finding_targets(f.id, Host::Client),
        gain: 0.0,
        kind: if by_hand { "by-hand" } else { "apply" },
        how: if by_hand {
            How::ByHand
        } else {
            How::Local { iface: local.iface.clone().unwrap_or_default(), actions: f.apply.clone() }
        },
    })
}

/// A step for a far host's finding: one the server applies on request, or one by hand.
fn from_far_finding(f: &wireperf_doctor::share::SharedFinding, iface: &str, need: Option<u64>) -> Option<PlannedStep> {
    let remote = REMOTE_FINDINGS.contains(&f.id.as_str());
    if !remote && !f.serious() {
        return None;
    }
    Some(PlannedStep {
        host: Host::Server,
        cause: f.id.clone(),
        change: None,
        commands: f.fix.clone(),
        persist: Vec::new(),
        why: format!("the doctor on the server ({iface}): {}", f.summary),
        targets: finding_targets(&f.id, Host::Server),
        gain: 0.0,
        kind: if remote { "apply" } else { "by-hand" },
        how: if remote { How::Remote { need_bytes: need } } else { How::ByHand },
    })
}

/// An action as one line: `/sys/class/net/eth0/tx_queue_len → 1000`.
fn describe_action(a: &wireperf_doctor::rules::Action) -> String {
    match a {
        wireperf_doctor::rules::Action::WriteFile { path, value } => format!("/{path} → {}", value.replace('\t', " ")),
        wireperf_doctor::rules::Action::SetRxRing { iface, rx } => format!("{iface} rx ring → {rx}"),
    }
}

#[cfg(test)]
mod tests;
