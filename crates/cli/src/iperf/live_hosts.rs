//! The `--tui` view's [`HostProbe`]: this host read with the bottleneck finder's sampler at
//! each interval, the far host from the watch samples a wireperf server returns with its
//! results.
//!
//! The figures are those `--why` reads (the same samples, the same DSACK rule), so the view and
//! the verdict never disagree about how many retransmits were spurious.

use std::path::Path;
use std::time::Instant;

use serde_json::Value;
use wireperf_bottleneck::engine_watch as bottleneck;
use wireperf_bottleneck::{self as watch, Direction, Hosts, Sample, Series};
use wireperf_tui::{HostCpu, HostProbe, HostsNow, RetransmitSplit};

/// Samples of this host since the test started, and the far host's once they came.
pub struct LiveHosts {
    t0: Instant,
    /// The first sample (the DSACK counters count from it).
    base: Sample,
    /// The previous sample (the CPU share is over the last interval).
    prev: Sample,
    far: Option<Series>,
}

impl LiveHosts {
    /// Takes the baseline sample now.
    pub fn start() -> Self {
        let base = watch::host_sample::read_sample(Path::new("/"), None, 0.0);
        Self { t0: Instant::now(), prev: base.clone(), base, far: None }
    }
}

/// Two samples as a series, so the doctor's deltas apply.
fn span(a: &Sample, b: &Sample) -> Series {
    Series { hz: 100, samples: vec![a.clone(), b.clone()], ..Series::default() }
}

/// A host's CPU over `s`: all cores' busy share, and the wireperf process's.
fn cpu_of(s: &Series) -> Option<HostCpu> {
    let shares = s.cpu_shares();
    if shares.is_empty() {
        return None;
    }
    let busy = shares.iter().map(|c| c.busy).sum::<f64>() / shares.len() as f64;
    Some(HostCpu { busy_pct: 100.0 * busy, process_pct: s.own_cpu().map(|f| 100.0 * f) })
}

impl HostProbe for LiveHosts {
    fn sample(&mut self, retransmits: Option<u64>, client_sends: bool) -> HostsNow {
        let now = watch::host_sample::read_sample(Path::new("/"), None, self.t0.elapsed().as_secs_f64());
        let local = cpu_of(&span(&self.prev, &now)).map(|c| HostCpu { process_pct: None, ..c });
        let mine = span(&self.base, &now);
        let dir = Direction { client_sends, retransmits, ..Direction::default() };
        let hosts = Hosts { client: Some(&mine), server: self.far.as_ref() };
        let split =
            watch::retransmit_split(&dir, hosts).map(|s| RetransmitSplit { real: s.real, spurious: s.spurious });
        self.prev = now;
        HostsNow { local, split }
    }

    fn far(&mut self, reply: &Value) -> Option<HostCpu> {
        let series = bottleneck::parse_reply(reply)?.series;
        let cpu = cpu_of(&series);
        self.far = Some(series);
        cpu
    }
}
