//! The phases of a suite and how one runs.

use serde::Serialize;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use wireperf_bottleneck::Verdict;
use wireperf_bottleneck::engine_watch::{self as bottleneck, PeerWatch};
use wireperf_engine::{ClientConfig, EngineError, Observer, run_client};
use wireperf_latency::engine_probe::{LatencyConfig, LatencyProbe};
use wireperf_protocol::outcome::{Direction, Flow, Side, TestOutcome};
use wireperf_protocol::schema::TestReport;
use wireperf_protocol::{Protocol, TestParams};

/// One measurement of the suite.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    /// Client → server (`-c`).
    Upload,
    /// Server → client (`-R`).
    Download,
    /// Both at once (`--bidir`).
    Bidir,
    /// UDP client → server at a rate derived from the link.
    Udp,
    /// A real file (`--path`) sent client → server with iperf3's `-F` semantics.
    File,
}

impl Phase {
    /// The name printed and stored.
    pub fn name(self) -> &'static str {
        match self {
            Phase::Upload => "upload",
            Phase::Download => "download",
            Phase::Bidir => "bidir",
            Phase::Udp => "udp",
            Phase::File => "file",
        }
    }

    /// The wire parameters of this phase.
    pub fn params(self, time: u32, parallel: u32, udp_rate: u64) -> TestParams {
        let mut p = TestParams { time, parallel, ..Default::default() };
        match self {
            Phase::Upload | Phase::File => {}
            Phase::Download => p.reverse = true,
            Phase::Bidir => p.bidirectional = true,
            Phase::Udp => {
                p.protocol = Protocol::Udp;
                p.len = 1448;
                p.bandwidth = Some(udp_rate.max(1_000_000));
            }
        }
        p
    }
}

/// What one phase measured.
#[derive(Clone, Debug, Serialize)]
pub struct PhaseResult {
    /// Which phase.
    pub phase: Phase,
    /// Client → server goodput at the receiver, bit/s (0 when not measured).
    pub upload_bps: f64,
    /// Server → client goodput at the receiver, bit/s (0 when not measured).
    pub download_bps: f64,
    /// TCP retransmits of the senders in this phase (both directions together).
    pub retransmits: u64,
    /// TCP retransmits of the client → server direction.
    pub upload_retransmits: u64,
    /// TCP retransmits of the server → client direction.
    pub download_retransmits: u64,
    /// UDP: datagrams lost / sent, when the phase is UDP.
    pub udp_loss: Option<(i64, i64)>,
    /// The error, when the phase failed.
    pub error: Option<String>,
    /// The complete iperf3-schema report of the phase.
    pub report: TestReport,
    /// What held each direction back (one verdict per direction; empty when the phase was
    /// not watched: iperf 2 peers, or a failed phase).
    pub bottleneck: Vec<Verdict>,
    /// Round trips idle and under this phase's load (`--latency`), in the shape of
    /// [`wireperf_latency::LatencySummary::to_json`]; the probes themselves are in the
    /// report's `wireperf_latency` key. `None` when the phase was not probed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latency: Option<serde_json::Value>,
    /// Both hosts' per-CPU load over the phase (see [`bottleneck::cpu_load`]); kept for the
    /// history, not in the suite's JSON.
    #[serde(skip)]
    pub cpu_load: Option<serde_json::Value>,
    /// Why the phase has no bottleneck verdict although it ran (iperf 2 peers), said in the
    /// output rather than left as an empty list.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bottleneck_not_watched: Option<String>,
    /// What the server told of its host in this phase's watch reply (the suite keeps one copy,
    /// [`crate::SuiteResult::server_host`]).
    #[serde(skip)]
    pub far_host: FarHost,
}

/// What a server told of its host.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum FarHost {
    /// Nothing: a stock iperf3 server, an older wireperf, a failed phase.
    #[default]
    NotSeen,
    /// It runs with `--no-share-host`.
    Declined,
    /// Its doctor's findings and link facts.
    Shared(Box<wireperf_doctor::share::SharedHost>),
}

impl PhaseResult {
    /// Reads the phase's figures from its report's [`TestOutcome`]. A direction's rate is its
    /// receiver's goodput; an iperf 2 peer reports no receiver's count of a TCP upload, so
    /// there it is the sender's rate ([`Flow::best`] says whose count it is).
    pub fn from_report(phase: Phase, report: TestReport, error: Option<String>) -> Self {
        let o = TestOutcome::new(&report, Side::Client);
        let flow = |d| o.flow(d);
        let rate = |d| flow(d).and_then(Flow::best).map_or(0.0, |t| t.bits_per_second);
        let retr = |d| flow(d).and_then(|f| f.retransmits).unwrap_or(0);
        let (upload_retransmits, download_retransmits) = (retr(Direction::Upload), retr(Direction::Download));
        let udp_loss = (phase == Phase::Udp)
            .then(|| flow(Direction::Upload).and_then(|f| f.udp))
            .flatten()
            .map(|u| (u.lost_packets.unwrap_or(0), u.packets.unwrap_or(0)));
        Self {
            phase,
            upload_bps: rate(Direction::Upload),
            download_bps: rate(Direction::Download),
            retransmits: upload_retransmits + download_retransmits,
            upload_retransmits,
            download_retransmits,
            udp_loss,
            error,
            latency: report
                .wireperf_latency
                .as_ref()
                .and_then(wireperf_latency::LatencySummary::from_json)
                .map(|l| l.to_json()),
            report,
            bottleneck: Vec::new(),
            cpu_load: None,
            bottleneck_not_watched: None,
            far_host: FarHost::NotSeen,
        }
    }
}

/// Runs one phase against the server in `base` (host, port, family, bind are taken from it).
pub fn run_phase(
    base: &ClientConfig,
    phase: Phase,
    params: TestParams,
    obs: &mut dyn Observer,
    interrupt: &AtomicBool,
) -> PhaseResult {
    run_phase_probed(base, phase, params, obs, interrupt, None)
}

/// The loaded phase of a suite phase for the latency probes: its TCP load phases only (a UDP
/// phase runs at a rate below the link's, a file phase is about the disk).
pub fn latency_phase(phase: Phase) -> Option<wireperf_latency::Phase> {
    match phase {
        Phase::Upload => Some(wireperf_latency::Phase::Upload),
        Phase::Download => Some(wireperf_latency::Phase::Download),
        Phase::Bidir => Some(wireperf_latency::Phase::Bidir),
        Phase::Udp | Phase::File => None,
    }
}

/// [`run_phase`] with latency probes beside it when `latency` is given (and the phase is one
/// of the TCP load phases).
pub fn run_phase_probed(
    base: &ClientConfig,
    phase: Phase,
    params: TestParams,
    obs: &mut dyn Observer,
    interrupt: &AtomicBool,
    latency: Option<LatencyConfig>,
) -> PhaseResult {
    let mut cfg = base.clone();
    cfg.params = params;
    // The watch: this host's samples, and the server's when it is wireperf.
    cfg.params.wireperf_watch = true;
    let interval = cfg.interval.unwrap_or(Duration::from_secs(1));
    let watch = bottleneck::start_watch(bottleneck::peer_ip(&cfg.host, cfg.port), interval);
    let mut peer = PeerWatch::new(obs);
    let probed = latency_phase(phase).zip(latency);
    // Probes through a wireperf server's echo when it offers one (a stock server ignores it).
    cfg.params.wireperf_latency = probed.is_some();
    let mut obs = LatencyProbe::new(&mut peer, &cfg.host, cfg.port, probed);
    let mut attempt = 0;
    loop {
        let mut out = run_client(&cfg, &mut obs, interrupt);
        // A stock iperf3 server re-opens its listener after each test and answers "busy"
        // while it finishes the last one: back-to-back phases can hit that window, so a
        // refused or busy start is retried for a moment before it counts as a failure.
        let retry = matches!(out.error, Some(EngineError::Connect(_)) | Some(EngineError::AccessDenied));
        if retry && attempt < RETRIES && !interrupt.load(Ordering::Relaxed) {
            attempt += 1;
            std::thread::sleep(RETRY_PAUSE);
            continue;
        }
        let local = watch.map(wireperf_bottleneck::Watch::stop);
        if let Some(l) = obs.finish(&out.report) {
            out.report.wireperf_latency = Some(l.to_json_full());
        }
        let mut r = PhaseResult::from_report(phase, out.report, out.error.map(|e| e.to_string()));
        if r.error.is_none() {
            let far = peer.far();
            r.bottleneck = bottleneck::verdicts(&r.report, local.as_ref(), far.as_ref());
            r.cpu_load = Some(bottleneck::cpu_load(local.as_ref(), far.as_ref()));
            r.far_host = match far.and_then(|f| f.host) {
                Some(h) => FarHost::Shared(Box::new(h)),
                None if peer.declined() => FarHost::Declined,
                None => FarHost::NotSeen,
            };
            if peer.declined() {
                bottleneck::note_declined(&mut r.bottleneck);
            }
        }
        return r;
    }
}

/// Why iperf 2 phases carry no bottleneck verdict.
pub const IPERF2_NOT_WATCHED: &str = "not watched: iperf 2 has no results exchange, so neither the server's samples nor the receiver's count of an upload reach this host";

/// How often a phase start is retried (see [`run_phase`]).
const RETRIES: u32 = 10;
/// Pause between retries.
const RETRY_PAUSE: Duration = Duration::from_millis(200);

/// Runs one phase against a stock iperf 2 server (`suite --iperf2`). iperf 2 has no results
/// exchange for TCP, so each direction's rate is what this host measured for it: the sender's
/// count for the upload, the receiver's for the download (the outcome marks which).
pub fn run_phase_iperf2(base: &ClientConfig, phase: Phase, time: u32, parallel: u32) -> PhaseResult {
    use wireperf_iperf2::config::{ClientConfig as Iperf2Config, Mode, Proto, Stop};
    let mode = match phase {
        Phase::Download => Mode::Reverse,
        Phase::Bidir => Mode::FullDuplex,
        _ => Mode::Normal,
    };
    let cfg = Iperf2Config {
        host: base.host.clone(),
        port: base.port,
        listen_port: None,
        proto: Proto::Tcp,
        mode,
        threads: parallel,
        stop: Stop::Time(Duration::from_secs(u64::from(time))),
        interval: None,
        len: None,
        rate: 0,
        window: None,
        enhanced: false,
    };
    let (report, error) = wireperf_iperf2::run::client_report(&cfg);
    let mut p = PhaseResult::from_report(phase, report, error);
    // iperf 2 has no results exchange: a server that closes (or dies) at once leaves a clean
    // end of stream and zero bytes. A direction that moved nothing is a failed phase, not 0 bit/s.
    if p.error.is_none() {
        p.error = silent_iperf2_phase(phase, p.upload_bps, p.download_bps);
    }
    p.bottleneck_not_watched = Some(IPERF2_NOT_WATCHED.to_string());
    p
}

/// The error of an iperf 2 phase in which a direction it tests moved nothing, naming it.
///
/// Debian's 2.1.8 server may stall on a full-duplex test (it stops reading after what the
/// socket buffers hold, sends nothing, and later crashes) as well as close, so the message
/// names both.
fn silent_iperf2_phase(phase: Phase, upload_bps: f64, download_bps: f64) -> Option<String> {
    let (up, down) = (upload_bps <= 0.0, download_bps <= 0.0);
    let way = match phase {
        Phase::Download => down.then_some("from the server"),
        Phase::Bidir if up && down => Some("either way"),
        Phase::Bidir if down => Some("from the server"),
        _ => up.then_some("to the server"),
    }?;
    Some(format!("no data moved {way} in this phase: the iperf 2 server closed the connection or stopped answering"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use wireperf_protocol::outcome::IPERF2_MODE;
    use wireperf_protocol::schema::{End, Interval, Summary, TestStart};

    fn sum(bytes: u64, bps: f64, retransmits: Option<u64>) -> Option<Summary> {
        Some(Summary { end: 1.0, seconds: 1.0, bytes, bits_per_second: bps, retransmits, ..Default::default() })
    }

    fn report(protocol: &str, end: End) -> TestReport {
        let mut r = TestReport { end, ..Default::default() };
        r.start.test_start = Some(TestStart { protocol: protocol.into(), ..Default::default() });
        r
    }

    #[test]
    fn bidir_reads_each_direction_from_its_receiver() {
        let end = End {
            sum_sent: sum(10, 100.0, Some(1)),
            sum_received: sum(9, 90.0, None),
            sum_sent_bidir_reverse: sum(20, 200.0, Some(2)),
            sum_received_bidir_reverse: sum(19, 190.0, None),
            ..Default::default()
        };
        let p = PhaseResult::from_report(Phase::Bidir, report("TCP", end), None);
        assert_eq!((p.upload_bps, p.download_bps), (90.0, 190.0));
        assert_eq!((p.upload_retransmits, p.download_retransmits, p.retransmits), (1, 2, 3));
        assert_eq!(p.udp_loss, None);
    }

    #[test]
    fn udp_loss_is_the_receivers_against_what_was_sent() {
        let loss = Summary { jitter_ms: Some(0.1), lost_packets: Some(3), packets: Some(300), ..Default::default() };
        let end = End {
            sum: Some(Summary { bytes: 10, ..loss.clone() }),
            sum_sent: sum(10, 100.0, None),
            sum_received: Some(Summary { packets: Some(297), bits_per_second: 99.0, ..loss }),
            ..Default::default()
        };
        let p = PhaseResult::from_report(Phase::Udp, report("UDP", end), None);
        assert_eq!((p.upload_bps, p.udp_loss, p.retransmits), (99.0, Some((3, 300)), 0));
    }

    /// The iperf 2 path reads the same outcome: its full-duplex sums are the two directions,
    /// each as this host counted it (sent for the upload, received for the download).
    #[test]
    fn iperf2_full_duplex_takes_each_direction_from_this_hosts_count() {
        let end = End { sum_sent: sum(10, 100.0, None), sum_received: sum(20, 200.0, None), ..Default::default() };
        let mut r = report("TCP", end);
        r.start.version = format!("wireperf 0.1.0 {IPERF2_MODE}");
        r.intervals.push(Interval { sum_bidir_reverse: Some(Default::default()), ..Default::default() });
        let p = PhaseResult::from_report(Phase::Bidir, r, None);
        assert_eq!((p.upload_bps, p.download_bps, p.retransmits), (100.0, 200.0, 0));
    }

    #[test]
    fn an_iperf2_phase_that_moved_nothing_one_way_names_that_way() {
        let msg = |phase, up, down| silent_iperf2_phase(phase, up, down);
        assert_eq!(msg(Phase::Upload, 1e9, 0.0), None);
        assert_eq!(msg(Phase::Download, 0.0, 1e9), None);
        assert_eq!(msg(Phase::Bidir, 1e9, 1e9), None);
        assert!(msg(Phase::Upload, 0.0, 0.0).is_some_and(|m| m.starts_with("no data moved to the server")));
        assert!(msg(Phase::Download, 1e9, 0.0).is_some_and(|m| m.starts_with("no data moved from the server")));
        // The stall seen with Debian's 2.1.8 server: 4 MB up, nothing down.
        assert!(msg(Phase::Bidir, 3.2e7, 0.0).is_some_and(|m| m.starts_with("no data moved from the server")));
        assert!(msg(Phase::Bidir, 0.0, 1e9).is_some_and(|m| m.starts_with("no data moved to the server")));
        assert!(
            msg(Phase::Bidir, 0.0, 0.0).is_some_and(|m| m.contains("either way") && m.contains("stopped answering"))
        );
    }
}
