//! The phases of a suite and how one runs.

use serde::Serialize;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use wireperf_engine::{ClientConfig, EngineError, Observer, run_client};
use wireperf_protocol::schema::{Summary, TestReport};
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
}

fn bps(s: Option<&Summary>) -> f64 {
    s.map_or(0.0, |s| s.bits_per_second)
}

fn retr(s: Option<&Summary>) -> u64 {
    s.and_then(|s| s.retransmits).unwrap_or(0)
}

impl PhaseResult {
    /// Reads the phase's figures from its report.
    pub fn from_report(phase: Phase, report: TestReport, error: Option<String>) -> Self {
        let e = &report.end;
        let (upload_bps, download_bps, upload_retransmits, download_retransmits) = match phase {
            Phase::Upload | Phase::Udp | Phase::File => {
                (bps(e.sum_received.as_ref()), 0.0, retr(e.sum_sent.as_ref()), 0)
            }
            Phase::Download => (0.0, bps(e.sum_received.as_ref()), 0, retr(e.sum_sent.as_ref())),
            Phase::Bidir => (
                bps(e.sum_received.as_ref()),
                bps(e.sum_received_bidir_reverse.as_ref()),
                retr(e.sum_sent.as_ref()),
                retr(e.sum_sent_bidir_reverse.as_ref()),
            ),
        };
        let retransmits = upload_retransmits + download_retransmits;
        let udp_loss = (phase == Phase::Udp)
            .then(|| e.sum.as_ref().map(|s| (s.lost_packets.unwrap_or(0), s.packets.unwrap_or(0))))
            .flatten();
        Self {
            phase,
            upload_bps,
            download_bps,
            retransmits,
            upload_retransmits,
            download_retransmits,
            udp_loss,
            error,
            report,
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
    let mut cfg = base.clone();
    cfg.params = params;
    let mut attempt = 0;
    loop {
        let out = run_client(&cfg, obs, interrupt);
        // A stock iperf3 server re-opens its listener after each test and answers "busy"
        // while it finishes the last one: back-to-back phases can hit that window, so a
        // refused or busy start is retried for a moment before it counts as a failure.
        let retry = matches!(out.error, Some(EngineError::Connect(_)) | Some(EngineError::AccessDenied));
        if retry && attempt < RETRIES && !interrupt.load(Ordering::Relaxed) {
            attempt += 1;
            std::thread::sleep(RETRY_PAUSE);
            continue;
        }
        return PhaseResult::from_report(phase, out.report, out.error.map(|e| e.to_string()));
    }
}

/// How often a phase start is retried (see [`run_phase`]).
const RETRIES: u32 = 10;
/// Pause between retries.
const RETRY_PAUSE: Duration = Duration::from_millis(200);

/// Runs one phase against a stock iperf 2 server (`suite --iperf2`). iperf 2 has no results
/// exchange for TCP, so each direction's rate is what this host measured for it: sent bytes
/// for the upload, received bytes for the download.
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
    let (report, mut error) = wireperf_iperf2::run::client_report(&cfg);
    let e = &report.end;
    let (upload_bps, download_bps) = match phase {
        Phase::Download => (0.0, bps(e.sum_received.as_ref())),
        Phase::Bidir => (bps(e.sum_sent.as_ref()), bps(e.sum_received.as_ref())),
        _ => (bps(e.sum_sent.as_ref()), 0.0),
    };
    // iperf 2 has no results exchange: a server that closes (or dies) at once leaves a clean
    // end of stream and zero bytes. A direction that moved nothing is a failed phase, not 0 bit/s.
    let silent = match phase {
        Phase::Download => download_bps <= 0.0,
        Phase::Bidir => upload_bps <= 0.0 || download_bps <= 0.0,
        _ => upload_bps <= 0.0,
    };
    if error.is_none() && silent {
        error = Some("no data moved in this phase: the iperf 2 server closed the connection".to_string());
    }
    PhaseResult {
        phase,
        upload_bps,
        download_bps,
        retransmits: 0,
        upload_retransmits: 0,
        download_retransmits: 0,
        udp_loss: None,
        error,
        report,
    }
}
