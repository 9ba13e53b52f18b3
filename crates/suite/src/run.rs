//! The whole suite: phases in order, the link, the verdicts, the optional baselines.

use crate::disk::{self, DiskResult};
use crate::link::{self, LinkContext};
use crate::phase::{Phase, PhaseResult, run_phase, run_phase_probed};
use crate::verdict::{self, Grade, Verdict};
use serde::Serialize;
use std::net::ToSocketAddrs;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use wireperf_engine::event::NullObserver;
use wireperf_engine::{ClientConfig, EngineTuning, Event, Observer, Outcome, Server, ServerConfig, ServerHooks};
use wireperf_protocol::outcome::words::rate;

/// What to run.
#[derive(Clone, Debug)]
pub struct SuiteConfig {
    /// Server, port, family, bind, timeouts (its `params` are replaced per phase).
    pub base: ClientConfig,
    /// Seconds per phase.
    pub time: u32,
    /// Streams per direction.
    pub parallel: u32,
    /// Add a UDP phase.
    pub udp: bool,
    /// Measure the disk in this directory (`--path`).
    pub path: Option<PathBuf>,
    /// Size of the disk test file.
    pub disk_bytes: u64,
    /// Measure a loopback baseline when a verdict says slow.
    pub baseline: bool,
    /// Talk iperf 2's protocol (a stock `iperf -s`, port 5001 by default): TCP phases only.
    pub iperf2: bool,
    /// Probe round trips idle and under each TCP phase's load (on unless `--no-latency`).
    pub latency: Option<wireperf_latency::engine_probe::LatencyConfig>,
    /// The TCP congestion control both senders use (`-C`); `None`: each host's default. A
    /// verdict depends on it (a loss-based sender fills a router's queue, BBR keeps it short).
    pub congestion: Option<String>,
}

/// Receives progress while the suite runs (the CLI draws it).
pub trait Progress {
    /// A phase starts.
    fn phase_start(&mut self, _phase: Phase, _secs: u32) {}
    /// An interval of the running phase: seconds into the phase and bit/s (both directions).
    fn interval(&mut self, _phase: Phase, _elapsed: f64, _bps: f64) {}
    /// A phase ended.
    fn phase_end(&mut self, _r: &PhaseResult) {}
    /// A step that is not a phase (baseline, disk).
    fn note(&mut self, _msg: &str) {}
}

/// Everything the suite found.
#[derive(Clone, Debug, Serialize)]
pub struct SuiteResult {
    /// The server as given.
    pub server: String,
    /// Its port.
    pub port: u16,
    /// Seconds per phase.
    pub seconds: u32,
    /// Streams per direction.
    pub parallel: u32,
    /// The link toward the server.
    pub link: LinkContext,
    /// The phases.
    pub phases: Vec<PhaseResult>,
    /// Verdicts per phase and direction.
    pub verdicts: Vec<Verdict>,
    /// Further remarks: asymmetry, host vs network, disk vs network.
    pub remarks: Vec<String>,
    /// Loopback upload on this host, bit/s (measured when a verdict was slow).
    pub loopback_baseline_bps: Option<f64>,
    /// Disk figures (`--path`).
    pub disk: Option<DiskResult>,
    /// Why the disk check failed.
    pub disk_error: Option<String>,
    /// The server's host as its doctor saw it, when it shared it (a wireperf server).
    pub server_host: Option<wireperf_doctor::share::SharedHost>,
    /// Why the server's host is not there: a stock server, or one that shares nothing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_host_note: Option<String>,
    /// The two hosts compared (MTU, line rates, duplex, receive buffers against the BDP);
    /// empty when the server shared nothing of its host.
    pub both_ends: Vec<wireperf_doctor::ends::EndsFinding>,
}

impl SuiteResult {
    /// A result of these phases alone: no link context, verdicts, disk or far host. A client
    /// series (`-c --repeat`) makes one per test so the series' statistics read it as they
    /// read a suite round.
    pub fn of_phases(server: String, port: u16, seconds: u32, parallel: u32, phases: Vec<PhaseResult>) -> SuiteResult {
        SuiteResult {
            server,
            port,
            seconds,
            parallel,
            link: Default::default(),
            phases,
            verdicts: Vec::new(),
            remarks: Vec::new(),
            loopback_baseline_bps: None,
            disk: None,
            disk_error: None,
            server_host: None,
            server_host_note: None,
            both_ends: Vec::new(),
        }
    }

    /// True when every phase completed.
    pub fn all_ok(&self) -> bool {
        self.phases.iter().all(|p| p.error.is_none())
    }
}

/// Forwards interval events to a [`Progress`].
struct ProgressObserver<'a> {
    phase: Phase,
    progress: &'a mut dyn Progress,
}

impl Observer for ProgressObserver<'_> {
    fn event(&mut self, ev: Event<'_>) {
        if let Event::Interval(i) = ev {
            let bps = i.sum.bits_per_second + i.sum_bidir_reverse.as_ref().map_or(0.0, |s| s.bits_per_second);
            self.progress.interval(self.phase, i.sum.end, bps);
        }
    }
}

/// Server hooks that stay silent (the in-process baseline server).
struct Quiet;

impl ServerHooks for Quiet {
    fn listening(&mut self, _port: u16, _test_no: u64) {}
    fn new_test(&mut self, _test_no: u64) -> Box<dyn Observer + Send> {
        wireperf_bottleneck::engine_watch::server_observer(Box::new(NullObserver), Default::default())
    }
    fn test_done(&mut self, _test_no: u64, _outcome: &Outcome) {}
    fn log(&mut self, _line: &str) {}
}

/// Upload over loopback to a server in this process: what the host itself can move.
/// Both ends use `tuning`, the suite's own (the engine's settings from the environment).
pub fn loopback_baseline(secs: u32, parallel: u32, tuning: &EngineTuning) -> Result<f64, String> {
    let cfg = ServerConfig {
        port: 0,
        bind: Some([127, 0, 0, 1].into()),
        interval: None,
        tuning: *tuning,
        ..Default::default()
    };
    let server = Server::bind(cfg).map_err(|e| e.to_string())?;
    let port = server.local_addr().map_err(|e| e.to_string())?.port();
    let stop = Arc::new(AtomicBool::new(false));
    let s2 = Arc::clone(&stop);
    let t = std::thread::spawn(move || {
        let _ = server.run(&mut Quiet, &s2);
    });
    let mut c = ClientConfig::new("127.0.0.1", Default::default());
    c.port = port;
    c.interval = None;
    c.tuning = *tuning;
    let r = run_phase(
        &c,
        Phase::Upload,
        Phase::Upload.params(secs, parallel, 0),
        &mut NullObserver,
        &AtomicBool::new(false),
    );
    stop.store(true, Ordering::Relaxed);
    let _ = t.join();
    match r.error {
        Some(e) => Err(e),
        None => Ok(r.upload_bps),
    }
}

/// Runs the suite.
pub fn run_suite(cfg: &SuiteConfig, progress: &mut dyn Progress, interrupt: &AtomicBool) -> SuiteResult {
    let peer = (cfg.base.host.trim_matches(|c| c == '[' || c == ']'), cfg.base.port)
        .to_socket_addrs()
        .ok()
        .and_then(|mut a| a.next())
        .map(|a| a.ip());
    let link = match peer {
        Some(ip) => link::for_peer(ip),
        None => LinkContext { note: Some(format!("cannot resolve {}", cfg.base.host)), ..Default::default() },
    };
    let udp_rate = link.ceiling.as_ref().map_or(100_000_000, |c| c.udp_bps / 100 * 95);
    let mut phases = vec![Phase::Upload, Phase::Download, Phase::Bidir];
    if cfg.udp && !cfg.iperf2 {
        phases.push(Phase::Udp);
    }
    let mut results = Vec::new();
    for phase in phases {
        if interrupt.load(Ordering::Relaxed) {
            break;
        }
        progress.phase_start(phase, cfg.time);
        let mut params = phase.params(cfg.time, cfg.parallel, udp_rate);
        if phase != Phase::Udp {
            params.congestion = cfg.congestion.clone();
        }
        let r = if cfg.iperf2 {
            crate::phase::run_phase_iperf2(&cfg.base, phase, cfg.time, cfg.parallel)
        } else {
            let mut obs = ProgressObserver { phase, progress: &mut *progress };
            run_phase_probed(&cfg.base, phase, params, &mut obs, interrupt, cfg.latency)
        };
        progress.phase_end(&r);
        results.push(r);
    }
    let verdicts = verdict::judge_all(&results, &link);
    let mut remarks: Vec<String> = match &link.shaper {
        // An egress shaper explains an upload slower than the download; say that instead.
        Some(s) => vec![format!(
            "uploads leave through a {} shaper limited to {}; downloads are not shaped by this host",
            s.kind,
            rate(s.rate_bps as f64)
        )],
        None => verdict::asymmetry(&results).into_iter().collect(),
    };
    let mut loopback_baseline_bps = None;
    let slowest = results
        .iter()
        .filter(|p| p.error.is_none())
        .map(|p| p.upload_bps.max(p.download_bps))
        .fold(f64::INFINITY, f64::min);
    if cfg.baseline && verdicts.iter().any(|v| v.grade == Grade::Slow) && !interrupt.load(Ordering::Relaxed) {
        progress.note("a direction is slow: measuring this host over loopback");
        match loopback_baseline(cfg.time.clamp(1, 3), cfg.parallel, &cfg.base.tuning) {
            Ok(bps) => {
                loopback_baseline_bps = Some(bps);
                remarks.push(if bps > 2.0 * slowest {
                    format!(
                        "this host moves {} over loopback, so the host is not what limits the link",
                        rate(bps)
                    )
                } else {
                    format!(
                        "this host itself only moves {} over loopback: CPU or the network stack of this host limits the result",
                        rate(bps)
                    )
                });
            }
            Err(e) => remarks.push(format!("loopback baseline failed: {e}")),
        }
    }
    let (mut disk, mut disk_error) = (None, None);
    if let Some(dir) = cfg.path.as_ref().filter(|_| !cfg.iperf2) {
        progress.note(&format!("measuring sequential disk speed in {}", dir.display()));
        match disk::measure(dir, cfg.disk_bytes) {
            Ok(d) => {
                let best = results.iter().map(|p| p.upload_bps.max(p.download_bps)).fold(0.0, f64::max);
                remarks.extend(disk::compare_with_network(&d, best));
                disk = Some(d);
                if !interrupt.load(Ordering::Relaxed) {
                    progress.note("sending a real file from the disk (-F)");
                    match send_file(cfg, dir, interrupt) {
                        Ok(r) => {
                            if r.error.is_none() && best > 0.0 {
                                remarks.push(format!(
                                    "a {} MiB file read from {} went over the network at {} (memory to network: {})",
                                    cfg.disk_bytes / (1024 * 1024),
                                    dir.display(),
                                    rate(r.upload_bps),
                                    rate(best)
                                ));
                            }
                            results.push(r);
                        }
                        Err(e) => disk_error = Some(e),
                    }
                }
            }
            Err(e) => disk_error = Some(e.to_string()),
        }
    }
    let server_host = verdict::server_host(&results).cloned();
    let server_host_note = match server_host {
        Some(_) => None,
        None if results.iter().any(|p| p.far_host == crate::phase::FarHost::Declined) => {
            Some(wireperf_bottleneck::engine_watch::DECLINED.to_string())
        }
        None => {
            Some("the server's host was not seen (a stock iperf3 server, or an older wireperf, shares none)".into())
        }
    };
    let both_ends = crate::ends::both_ends(&link, server_host.as_ref(), &results);
    SuiteResult {
        both_ends,
        server_host,
        server_host_note,
        server: cfg.base.host.clone(),
        port: cfg.base.port,
        seconds: cfg.time,
        parallel: cfg.parallel,
        link,
        phases: results,
        verdicts,
        remarks,
        loopback_baseline_bps,
        disk,
        disk_error,
    }
}

/// Writes a test file in `dir`, sends it to the server with `-F` semantics (the test ends when
/// the file is sent), and removes it.
fn send_file(cfg: &SuiteConfig, dir: &std::path::Path, interrupt: &AtomicBool) -> Result<PhaseResult, String> {
    let path = dir.join(format!(".wireperf-file-test-{}", std::process::id()));
    let chunk: Vec<u8> = (0..1024 * 1024u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 11) as u8).collect();
    let write = || -> std::io::Result<()> {
        use std::io::Write;
        let mut f = std::fs::File::create(&path)?;
        for _ in 0..cfg.disk_bytes.div_ceil(chunk.len() as u64).max(1) {
            f.write_all(&chunk)?;
        }
        f.sync_all()
    };
    if let Err(e) = write() {
        let _ = std::fs::remove_file(&path);
        return Err(format!("cannot write the test file in {}: {e}", dir.display()));
    }
    let size = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    let mut base = cfg.base.clone();
    base.file = Some(path.clone());
    let mut params = Phase::File.params(0, 1, 0);
    params.num = size;
    let r = run_phase(&base, Phase::File, params, &mut NullObserver, interrupt);
    let _ = std::fs::remove_file(&path);
    Ok(r)
}
