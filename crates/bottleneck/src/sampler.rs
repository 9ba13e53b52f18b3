//! The watcher: a background thread that samples the host at the interval rate while a test
//! runs, plus the kernel log lines that appear meanwhile.
//!
//! Cost: one sample is a handful of procfs/sysfs reads (no commands, no netlink), once per
//! interval, on its own thread; nothing touches the data path. What it used is measured and
//! kept in the series ([`WatchCost`], see `cost.rs`). The series is bounded ([`MAX_SAMPLES`]);
//! past that the last sample is overwritten so the end of the test is kept.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::cost::{self, Meter, WatchCost};
use crate::host_sample::{HostFacts, Sample, Series, read_driver_counters, read_rps, read_sample};
use crate::threads::ThreadTracker;

/// Samples kept per watch (10 minutes at 1 s, about 1 MB of JSON for a 2-CPU host: the
/// results exchange must stay small). The rules read the first and the last sample.
pub const MAX_SAMPLES: usize = 600;
/// Kernel log lines kept per watch.
pub const MAX_KERNEL_LINES: usize = 20;

/// What to watch.
#[derive(Debug, Clone)]
pub struct WatchConfig {
    /// Read below this directory (`/` live).
    pub base: PathBuf,
    /// The interface the test uses (NIC counters, its IRQs, its RPS masks).
    pub iface: Option<String>,
    /// Sampling period (the test's reporting interval; 0 means 1 s).
    pub interval: Duration,
    /// Read new kernel log lines from `/dev/kmsg` (needs root; off for fixtures).
    pub kernel_log: bool,
    /// Read the NIC driver's counters (`ethtool -S`) at the start and the end (off for fixtures).
    pub driver_counters: bool,
    /// The host's static facts, copied into the series.
    pub facts: HostFacts,
    /// CPU ns already spent for this watch before it started (reading `facts`; see
    /// [`cost::measured`]), counted in its cost.
    pub setup_ns: u64,
}

impl WatchConfig {
    /// The live host, watching `iface`, every `interval`.
    pub fn live(iface: Option<String>, interval: Duration) -> Self {
        Self {
            base: PathBuf::from("/"),
            iface,
            interval,
            kernel_log: true,
            driver_counters: true,
            facts: HostFacts::default(),
            setup_ns: 0,
        }
    }
}

/// A running watch; [`Watch::stop`] ends it and returns the series.
#[derive(Debug)]
pub struct Watch {
    stop: Sender<()>,
    thread: JoinHandle<Series>,
}

impl Watch {
    /// Takes the baseline sample now and keeps sampling on a background thread.
    pub fn start(cfg: WatchConfig) -> std::io::Result<Watch> {
        let baseline = Meter::start();
        let (stop, rx) = mpsc::channel();
        let period = if cfg.interval.is_zero() { Duration::from_secs(1) } else { cfg.interval };
        let kmsg = if cfg.kernel_log { open_kmsg() } else { None };
        let t0 = Instant::now();
        let iface = cfg.iface.clone();
        let mut series = Series {
            rps_cpus: iface.as_deref().map(|i| read_rps(&cfg.base, i)).unwrap_or_default(),
            iface: iface.clone(),
            hz: 100,
            facts: cfg.facts.clone(),
            ..Default::default()
        };
        let mut threads = ThreadTracker::new();
        let want_driver = cfg.driver_counters;
        let driver = move |iface: Option<&str>| iface.filter(|_| want_driver).map(read_driver_counters);
        let setup_ns = cfg.setup_ns;
        let sample = move |t: f64, threads: &mut ThreadTracker| -> Sample {
            let mut s = read_sample(&cfg.base, iface.as_deref(), t);
            (s.own_run_ns, s.own_wait_ns) = threads.sample(&cfg.base, 100);
            s
        };
        let mut first = sample(0.0, &mut threads);
        first.driver = driver(series.iface.as_deref()).unwrap_or_default();
        series.samples.push(first);
        let mut cost = WatchCost { edges_ns: setup_ns, ..Default::default() };
        cost.charge_edges(baseline.ns());
        let iface_end = series.iface.clone();
        let thread = std::thread::Builder::new().name("wireperf-watch".into()).spawn(move || {
            let mut kmsg = kmsg;
            loop {
                let stopped = match rx.recv_timeout(period) {
                    Ok(()) | Err(RecvTimeoutError::Disconnected) => true,
                    Err(RecvTimeoutError::Timeout) => false,
                };
                // Everything this thread did until now ran while the test did.
                let last = stopped.then(|| {
                    cost.during_ns = cost::thread_total_ns();
                    cost.seconds = t0.elapsed().as_secs_f64();
                    Meter::start()
                });
                let mut s = sample(t0.elapsed().as_secs_f64(), &mut threads);
                if stopped {
                    s.driver = driver(iface_end.as_deref()).unwrap_or_default();
                } else {
                    cost.samples += 1;
                }
                if series.samples.len() >= MAX_SAMPLES {
                    series.samples.pop();
                }
                series.samples.push(s);
                if let Some(k) = kmsg.as_mut() {
                    drain_kmsg(k, &mut series.kernel_lines);
                }
                if let Some(m) = last {
                    cost.charge_edges(m.ns());
                    series.cost = Some(cost);
                    return series;
                }
            }
        })?;
        Ok(Watch { stop, thread })
    }

    /// Takes the final sample and returns the series.
    pub fn stop(self) -> Series {
        let _ = self.stop.send(());
        self.thread.join().unwrap_or_default()
    }
}

/// `/dev/kmsg`, non-blocking, positioned after the last record (only new lines are read).
fn open_kmsg() -> Option<File> {
    let mut f = std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK).open("/dev/kmsg").ok()?;
    f.seek(SeekFrom::End(0)).ok()?;
    Some(f)
}

/// Reads the records that arrived since the last call (each `read` returns one record:
/// `prio,seq,usec,flags;message`), keeping the message text.
fn drain_kmsg(f: &mut File, out: &mut Vec<String>) {
    let mut buf = vec![0u8; 8192];
    // Bounded: at most 1000 records per sample.
    for _ in 0..1000 {
        match f.read(&mut buf) {
            Ok(0) => return,
            Ok(n) => {
                let rec = String::from_utf8_lossy(&buf[..n]);
                let msg = rec.split_once(';').map_or(rec.as_ref(), |(_, m)| m).lines().next().unwrap_or("").trim();
                if out.len() < MAX_KERNEL_LINES && !msg.is_empty() {
                    out.push(msg.to_string());
                }
            }
            // EPIPE: records were overwritten before we read them; the next read goes on.
            Err(e) if e.raw_os_error() == Some(libc::EPIPE) => continue,
            Err(_) => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_a_fixture_until_stopped() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join("proc")).unwrap();
        std::fs::write(d.path().join("proc/stat"), "cpu0 1 0 1 10 0 0 0 0\n").unwrap();
        let cfg = WatchConfig {
            base: d.path().to_path_buf(),
            iface: None,
            interval: Duration::from_millis(20),
            kernel_log: false,
            driver_counters: false,
            facts: HostFacts::default(),
            setup_ns: 7,
        };
        let w = Watch::start(cfg).unwrap();
        std::thread::sleep(Duration::from_millis(110));
        let s = w.stop();
        // Baseline, several ticks, and the final sample.
        assert!(s.samples.len() >= 3, "{} samples", s.samples.len());
        assert!(s.samples.windows(2).all(|w| w[0].t <= w[1].t));
        assert_eq!(s.samples[0].cpus.len(), 1);
        // The cost: the periodic samples (all but the baseline and the final one), their CPU
        // time, and the setup charged to the edges.
        let c = s.cost.expect("a finished watch reports its cost");
        assert_eq!(c.samples as usize, s.samples.len() - 2);
        assert!(c.during_ns > 0 && c.edges_ns > 7, "{c:?}");
        assert!(c.seconds >= 0.1 && c.seconds <= s.samples.last().unwrap().t + 1e-9, "{c:?}");
    }
}
