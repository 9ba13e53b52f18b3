//! Deltas over a [`Series`]: what changed between the first (baseline) and the last sample.
//! The rules read only these, so every figure a verdict cites comes from one place.

use serde::{Deserialize, Serialize};

use crate::host_sample::Series;
use crate::parse::CpuTimes;

/// One CPU's shares of its time over the watch (0–1).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CpuShare {
    /// CPU number.
    pub cpu: usize,
    /// Not idle.
    pub busy: f64,
    /// Soft interrupts.
    pub softirq: f64,
    /// Hard interrupts.
    pub irq: f64,
    /// User (+nice).
    pub user: f64,
    /// System.
    pub system: f64,
}

/// One host's per-CPU load over a watch, interval by interval: what the HTML report draws.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CpuLoad {
    /// End of each interval, seconds since the watch started.
    pub t: Vec<f64>,
    /// Per CPU, its busy percent in each interval (`cpus[cpu][i]` belongs to `t[i]`).
    pub cpus: Vec<Vec<f64>>,
    /// Per CPU, the softirq part of it, percent.
    pub softirq: Vec<Vec<f64>>,
}

/// The test's own threads on one CPU over the watch.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OwnOnCpu {
    /// CPU number.
    pub cpu: usize,
    /// Seconds the threads ran there.
    pub run_s: f64,
    /// Seconds they sat runnable waiting for it (`None`: the kernel does not say).
    pub wait_s: Option<f64>,
}

impl Series {
    /// Seconds between the first and the last sample.
    pub fn elapsed(&self) -> f64 {
        match (self.samples.first(), self.samples.last()) {
            (Some(a), Some(b)) => (b.t - a.t).max(0.0),
            _ => 0.0,
        }
    }

    /// Whether there are two samples to compare.
    pub fn usable(&self) -> bool {
        self.samples.len() >= 2 && self.elapsed() > 0.0
    }

    fn ends(&self) -> Option<(&crate::host_sample::Sample, &crate::host_sample::Sample)> {
        if !self.usable() {
            return None;
        }
        Some((self.samples.first()?, self.samples.last()?))
    }

    /// Change of a MIB counter, when both ends have it.
    pub fn mib_delta(&self, key: &str) -> Option<u64> {
        let (a, b) = self.ends()?;
        Some(b.mib.get(key)?.saturating_sub(*a.mib.get(key)?))
    }

    /// Change of a NIC counter, when both ends have it.
    pub fn nic_delta(&self, key: &str) -> Option<u64> {
        let (a, b) = self.ends()?;
        Some(b.nic.get(key)?.saturating_sub(*a.nic.get(key)?))
    }

    /// Changes of the NIC driver's counters (`ethtool -S`) over the watch, those that rose.
    pub fn driver_deltas(&self) -> Vec<(String, u64)> {
        let Some((a, b)) = self.ends() else { return Vec::new() };
        b.driver
            .iter()
            .filter_map(|(k, v)| Some((k.clone(), v.saturating_sub(*a.driver.get(k)?))))
            .filter(|(_, d)| *d > 0)
            .collect()
    }

    /// Per-CPU shares over the watch.
    pub fn cpu_shares(&self) -> Vec<CpuShare> {
        let Some((a, b)) = self.ends() else { return Vec::new() };
        b.cpus
            .iter()
            .enumerate()
            .filter_map(|(cpu, end)| {
                let d = end.since(a.cpus.get(cpu).unwrap_or(&CpuTimes::default()));
                let total = d.total() as f64;
                (total > 0.0).then(|| CpuShare {
                    cpu,
                    busy: d.busy() as f64 / total,
                    softirq: d.softirq as f64 / total,
                    irq: d.irq as f64 / total,
                    user: d.user as f64 / total,
                    system: d.system as f64 / total,
                })
            })
            .collect()
    }

    /// The process's own CPU (all threads) as a fraction of one CPU.
    pub fn own_cpu(&self) -> Option<f64> {
        let (a, b) = self.ends()?;
        let ((au, as_), (bu, bs)) = (a.own_cpu?, b.own_cpu?);
        let ticks = (bu + bs).saturating_sub(au + as_) as f64;
        Some(ticks / self.hz.max(1) as f64 / self.elapsed())
    }

    /// Each CPU's part of the host's `NET_RX` softirqs over the watch (0–1).
    pub fn net_rx_split(&self) -> Vec<f64> {
        let Some((a, b)) = self.ends() else { return Vec::new() };
        let d: Vec<u64> =
            b.net_rx.iter().enumerate().map(|(i, v)| v.saturating_sub(*a.net_rx.get(i).unwrap_or(&0))).collect();
        let sum: u64 = d.iter().sum();
        if sum == 0 {
            return Vec::new();
        }
        d.iter().map(|v| *v as f64 / sum as f64).collect()
    }

    /// Softnet backlog drops and time squeezes over the watch (all CPUs).
    pub fn softnet_delta(&self) -> Option<(u64, u64)> {
        let (a, b) = self.ends()?;
        if b.softnet.is_empty() {
            return None;
        }
        let sum = |s: &crate::host_sample::Sample| {
            s.softnet.iter().fold((0u64, 0u64), |(d, q), r| (d + r.dropped, q + r.time_squeeze))
        };
        let ((ad, aq), (bd, bq)) = (sum(a), sum(b));
        Some((bd.saturating_sub(ad), bq.saturating_sub(aq)))
    }

    /// Whether RPS is off on every receive queue of the interface (unknown → `None`).
    pub fn rps_off(&self) -> Option<bool> {
        if self.rps_cpus.is_empty() {
            return None;
        }
        Some(self.rps_cpus.iter().all(|m| wireperf_doctor::read::procfs::mask_is_zero(m)))
    }

    /// Per CPU, how long the test's threads ran there and waited for it over the watch.
    pub fn own_on_cpus(&self) -> Vec<OwnOnCpu> {
        let Some((a, b)) = self.ends() else { return Vec::new() };
        let at = |v: &[u64], i: usize| v.get(i).copied().unwrap_or(0);
        let waits = !b.own_wait_ns.is_empty();
        (0..b.own_run_ns.len())
            .map(|cpu| OwnOnCpu {
                cpu,
                run_s: at(&b.own_run_ns, cpu).saturating_sub(at(&a.own_run_ns, cpu)) as f64 / 1e9,
                wait_s: waits.then(|| at(&b.own_wait_ns, cpu).saturating_sub(at(&a.own_wait_ns, cpu)) as f64 / 1e9),
            })
            .collect()
    }

    /// The CPU the test's threads wanted most (ran there plus waited for it): where its reader
    /// or writer did its work. `None` when no thread figures were sampled.
    pub fn own_main_cpu(&self) -> Option<OwnOnCpu> {
        let demand = |c: &OwnOnCpu| c.run_s + c.wait_s.unwrap_or(0.0);
        self.own_on_cpus().into_iter().filter(|c| demand(c) > 0.0).max_by(|a, b| demand(a).total_cmp(&demand(b)))
    }

    /// Busy and softirq percent of every CPU between consecutive samples.
    pub fn cpu_load(&self) -> CpuLoad {
        let n = self.samples.iter().map(|s| s.cpus.len()).max().unwrap_or(0);
        let mut out = CpuLoad { t: Vec::new(), cpus: vec![Vec::new(); n], softirq: vec![Vec::new(); n] };
        for w in self.samples.windows(2) {
            out.t.push(w[1].t);
            for cpu in 0..n {
                let end = w[1].cpus.get(cpu).copied().unwrap_or_default();
                let d = end.since(w[0].cpus.get(cpu).unwrap_or(&CpuTimes::default()));
                let total = d.total() as f64;
                let share = |x: u64| if total > 0.0 { (x as f64 / total * 1000.0).round() / 10.0 } else { 0.0 };
                out.cpus[cpu].push(share(d.busy()));
                out.softirq[cpu].push(share(d.softirq));
            }
        }
        out
    }
}
