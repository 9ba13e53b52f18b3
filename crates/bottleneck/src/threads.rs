//! The test's own threads: on which CPU each one ran, and how long it sat runnable waiting for
//! that CPU (`/proc/self/task/TID/schedstat`: time on the CPU and time on its run queue, ns).
//!
//! Why: a busy CPU alone cannot tell "the reader was slow because another process held its
//! CPU" from "the reader was idle, waiting for data". The run-queue wait of the test's own
//! threads on the CPU they were on can: a starved reader waits on its run queue most of the
//! time, an idle one does not wait at all.
//!
//! Each sample attributes a thread's time since the previous sample to the CPU it was on when
//! sampled (`/proc/self/task/TID/stat` field 39). Between two samples a thread may move, so the
//! split over CPUs is an estimate; a pinned test (`-A`, `taskset`) is attributed exactly.

use std::collections::HashMap;
use std::path::Path;

/// Cumulative per-CPU figures of the process's threads since the watch started.
#[derive(Debug, Default)]
pub struct ThreadTracker {
    /// The last values seen per thread id: (ns on a CPU, ns waiting for one).
    prev: HashMap<u32, (u64, u64)>,
    run: Vec<u64>,
    wait: Vec<u64>,
    started: bool,
    /// The run-queue wait was readable (schedstat present) at every sample so far.
    wait_known: bool,
}

/// One thread's figures at one moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct ThreadNow {
    cpu: usize,
    run_ns: u64,
    wait_ns: Option<u64>,
}

impl ThreadTracker {
    /// A tracker whose first [`sample`](Self::sample) is the baseline.
    pub fn new() -> Self {
        Self { wait_known: true, ..Default::default() }
    }

    /// Reads the threads below `base` (`proc/self/task`) and returns the cumulative (run, wait)
    /// ns per CPU; `wait` is empty when the kernel does not report run-queue waits. A thread
    /// born after the baseline counts from its start; one that ended between two samples
    /// keeps what was counted until its last sample.
    pub fn sample(&mut self, base: &Path, hz: u64) -> (Vec<u64>, Vec<u64>) {
        let dir = base.join("proc/self/task");
        let mut seen = HashMap::new();
        for tid in std::fs::read_dir(&dir).into_iter().flatten().filter_map(|e| e.ok()?.file_name().into_string().ok())
        {
            let Ok(id) = tid.parse::<u32>() else { continue };
            let stat = std::fs::read_to_string(dir.join(&tid).join("stat")).ok();
            let sched = std::fs::read_to_string(dir.join(&tid).join("schedstat")).ok();
            let Some(now) = stat.as_deref().and_then(|s| thread_now(s, sched.as_deref(), hz)) else { continue };
            self.wait_known &= now.wait_ns.is_some();
            let (run0, wait0) = self.prev.get(&id).copied().unwrap_or((0, 0));
            let wait_now = now.wait_ns.unwrap_or(0);
            if self.started {
                if self.run.len() <= now.cpu {
                    self.run.resize(now.cpu + 1, 0);
                    self.wait.resize(now.cpu + 1, 0);
                }
                self.run[now.cpu] += now.run_ns.saturating_sub(run0);
                self.wait[now.cpu] += wait_now.saturating_sub(wait0);
            }
            seen.insert(id, (now.run_ns, wait_now));
        }
        self.prev = seen;
        self.started = true;
        let wait = if self.wait_known { self.wait.clone() } else { Vec::new() };
        (self.run.clone(), wait)
    }
}

/// A thread's CPU (field 39 of its `stat` line), its time on a CPU (schedstat's first field,
/// else `utime + stime` in ticks of `hz`) and its run-queue wait (schedstat's second field).
fn thread_now(stat: &str, schedstat: Option<&str>, hz: u64) -> Option<ThreadNow> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    // After ")": state is field 3 of the line, index 0 here; processor is field 39.
    let cpu: usize = f.get(36)?.parse().ok()?;
    if cpu > 4096 {
        return None;
    }
    let sched: Vec<u64> =
        schedstat.map(|s| s.split_whitespace().map_while(|w| w.parse().ok()).collect()).unwrap_or_default();
    let run_ns = match sched.first() {
        Some(r) => *r,
        None => {
            let ticks: u64 = f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?;
            ticks.saturating_mul(1_000_000_000 / hz.max(1))
        }
    };
    Some(ThreadNow { cpu, run_ns, wait_ns: sched.get(1).copied() })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `stat` line with `cpu` as field 39 and `ut`/`st` ticks.
    fn stat(cpu: usize, ut: u64, st: u64) -> String {
        let mut f = vec!["0".to_string(); 50];
        f[0] = "R".into();
        f[11] = ut.to_string();
        f[12] = st.to_string();
        f[36] = cpu.to_string();
        format!("77 (wireperf srv) {}", f.join(" "))
    }

    fn write_thread(base: &Path, tid: u32, stat_line: &str, sched: Option<&str>) {
        let d = base.join(format!("proc/self/task/{tid}"));
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("stat"), stat_line).unwrap();
        if let Some(s) = sched {
            std::fs::write(d.join("schedstat"), s).unwrap();
        }
    }

    #[test]
    fn parses_cpu_run_and_wait() {
        let t = thread_now(&stat(3, 1, 2), Some("500 900 4\n"), 100).unwrap();
        assert_eq!(t, ThreadNow { cpu: 3, run_ns: 500, wait_ns: Some(900) });
        // Without schedstat: ticks of 10 ms, wait unknown.
        let t = thread_now(&stat(1, 1, 2), None, 100).unwrap();
        assert_eq!(t, ThreadNow { cpu: 1, run_ns: 30_000_000, wait_ns: None });
        assert_eq!(thread_now("garbage", None, 100), None);
    }

    #[test]
    fn attributes_deltas_to_the_cpu_each_thread_is_on() {
        let d = tempfile::tempdir().unwrap();
        let b = d.path();
        write_thread(b, 10, &stat(1, 0, 0), Some("100 200 1"));
        let mut t = ThreadTracker::new();
        assert_eq!(t.sample(b, 100), (vec![], vec![]), "the baseline counts nothing");
        write_thread(b, 10, &stat(1, 0, 0), Some("150 1200 2"));
        // Born after the baseline: counts from its start.
        write_thread(b, 11, &stat(0, 0, 0), Some("40 5 1"));
        assert_eq!(t.sample(b, 100), (vec![40, 50], vec![5, 1000]));
        // Thread 11 ended: what it had stays counted.
        std::fs::remove_dir_all(b.join("proc/self/task/11")).unwrap();
        write_thread(b, 10, &stat(1, 0, 0), Some("160 1300 3"));
        assert_eq!(t.sample(b, 100), (vec![40, 60], vec![5, 1100]));
    }

    #[test]
    fn no_schedstat_means_no_wait_figures() {
        let d = tempfile::tempdir().unwrap();
        write_thread(d.path(), 5, &stat(0, 1, 1), None);
        let mut t = ThreadTracker::new();
        t.sample(d.path(), 100);
        write_thread(d.path(), 5, &stat(0, 3, 1), None);
        assert_eq!(t.sample(d.path(), 100), (vec![20_000_000], vec![]));
    }

    #[test]
    fn reads_this_process() {
        // Spin until 10 ms of CPU time show up (on a loaded host 30 ms of wall time may hold
        // far less CPU), for at most 10 s.
        let mut t = ThreadTracker::new();
        t.sample(Path::new("/"), 100);
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        loop {
            let spin = std::time::Instant::now();
            while spin.elapsed() < std::time::Duration::from_millis(20) {
                std::hint::black_box(0u64);
            }
            let (run, _) = t.sample(Path::new("/"), 100);
            if run.iter().sum::<u64>() >= 10_000_000 {
                break;
            }
            assert!(std::time::Instant::now() < deadline, "no CPU time of this process seen in 10 s: {run:?}");
        }
    }
}
