//! The plan from made-up baselines: what each verdict and finding turns into, and the order.

use super::*;
use wireperf_bottleneck::diagnosis::Verdict;
use wireperf_doctor::share::{SharedFinding, SharedHost};
use wireperf_protocol::schema::{EndStream, Summary as Sum};
use wireperf_suite::series::{RepeatConfig, statistics};
use wireperf_suite::{PhaseResult, SuiteResult};

fn limit(id: &str, side: Side, strength: f64) -> Limit {
    Limit { limit: id.into(), side, evidence: vec![format!("{id} evidence")], fix: vec![format!("fix {id}")], strength }
}

fn verdict(direction: &str, main: Limit) -> Verdict {
    Verdict::of(direction, main)
}

fn phase(p: Phase, up: f64, down: f64, verdicts: Vec<Verdict>) -> PhaseResult {
    let mut r = PhaseResult::from_report(p, Default::default(), None);
    r.upload_bps = up;
    r.download_bps = down;
    r.bottleneck = verdicts;
    if p == Phase::Upload {
        // 100 µs round trips on the client's sending stream.
        let snd = Sum { sender: true, mean_rtt: Some(100), ..Default::default() };
        r.report.end.streams = vec![EndStream { sender: Some(snd), ..Default::default() }];
    }
    r
}

fn series(up_verdict: Limit, far: Option<SharedHost>) -> SeriesResult {
    let rounds: Vec<SuiteResult> = (0..3)
        .map(|i| {
            let up = 1e9 + f64::from(i) * 1e7;
            let phases = vec![
                phase(Phase::Upload, up, 0.0, vec![verdict("client→server", up_verdict.clone())]),
                phase(Phase::Download, 0.0, 9e9, vec![verdict("server→client", limit(ids::UNKNOWN, Side::Path, 0.0))]),
            ];
            let mut r = SuiteResult::of_phases("10.0.0.2".into(), 5201, 1, 1, phases);
            r.server_host.clone_from(&far);
            r
        })
        .collect();
    let cfg = RepeatConfig { rounds: 3, warmup: 0, level: 95.0, width_pct: None };
    SeriesResult { statistics: statistics(&rounds, cfg.level), rounds, warmup: 0, confidence: None, interrupted: false }
}

fn far_host(rmem: [u64; 3], findings: Vec<SharedFinding>) -> SharedHost {
    SharedHost { iface: "veth1".into(), findings, tcp_rmem: Some(rmem), ..Default::default() }
}

#[test]
fn a_servers_receive_window_is_the_servers_remedy_sized_from_the_measured_flight() {
    let far = far_host([4096, 8192, 8192], Vec::new());
    let s = series(limit(ids::RECEIVER_WINDOW, Side::Server, 0.9), Some(far));
    let p = plan(&s, &LocalFacts::default());
    assert_eq!(p.len(), 1, "{p:?}");
    let step = &p[0];
    assert_eq!((step.host, step.cause.as_str(), step.kind), (Host::Server, "receiver-window", "apply"));
    assert_eq!(step.targets, vec![Direction::Upload]);
    // 1.01 Gbit/s × 100 µs ≈ 12.6 kB in flight: the kernel's default maximum is the floor.
    let want = remedy::receive_buffer(Some([4096, 8192, 8192]), Some(12_625)).unwrap_or_else(|| panic!("no remedy"));
    assert_eq!(step.change.as_deref(), Some(want.change.as_str()));
    assert_eq!(step.commands, want.commands);
    let How::Remote { need_bytes: Some(need) } = step.how else { panic!("{:?}", step.how) };
    assert!((12_000..13_000).contains(&need), "{need}");
    assert!(step.why.contains("the upload's bottleneck is receiver-window on the server"), "{}", step.why);
}

#[test]
fn a_clients_send_buffer_is_applied_here_with_the_doctors_actions() {
    let s = series(limit(ids::SENDER_BUFFER, Side::Client, 0.8), None);
    let local = LocalFacts { iface: Some("veth0".into()), tcp_wmem: Some([4096, 8192, 8192]), ..Default::default() };
    let p = plan(&s, &local);
    let step = &p[0];
    assert_eq!((step.host, step.cause.as_str()), (Host::Client, "sender-buffer"));
    let want = remedy::send_buffer(Some([4096, 8192, 8192]), None).unwrap_or_else(|| panic!("no remedy"));
    let How::Local { iface, actions } = &step.how else { panic!("{:?}", step.how) };
    assert_eq!((iface.as_str(), actions), ("veth0", &want.actions));
}

#[test]
fn verdict_steps_come_before_doctor_steps_and_by_hand_steps_last() {
    let far = far_host(
        [4096, 8192, 8192],
        vec![
            SharedFinding { id: "txqueuelen".into(), severity: "info".into(), ..Default::default() },
            SharedFinding {
                id: "generic-usb-driver".into(),
                severity: "crit".into(),
                fix: vec!["modprobe r8152".into()],
                ..Default::default()
            },
            SharedFinding { id: "vendor-driver".into(), severity: "info".into(), ..Default::default() },
        ],
    );
    let s = series(limit(ids::RECEIVER_WINDOW, Side::Server, 0.9), Some(far));
    let p = plan(&s, &LocalFacts::default());
    let order: Vec<(&str, &str)> = p.iter().map(|s| (s.cause.as_str(), s.kind)).collect();
    assert_eq!(
        order,
        [("receiver-window", "apply"), ("txqueuelen", "apply"), ("generic-usb-driver", "by-hand")],
        "an info finding with no change is left out"
    );
    assert_eq!(p[1].targets, vec![Direction::Download], "the server's transmit queue carries the download");
}

#[test]
fn a_shaper_on_the_path_is_a_step_by_hand_and_unknown_is_nothing() {
    let s = series(limit(ids::PATH_BOTTLENECK, Side::Path, 0.7), None);
    let p = plan(&s, &LocalFacts::default());
    assert_eq!(p.len(), 1, "{p:?}");
    assert_eq!(
        (p[0].host, p[0].kind, p[0].commands.clone()),
        (Host::Path, "by-hand", vec!["fix path-bottleneck".to_string()])
    );
}
