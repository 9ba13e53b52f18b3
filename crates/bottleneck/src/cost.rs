//! What watching a host costs: the CPU time the watch itself used, measured (not estimated)
//! on the threads that did the work.
//!
//! Two parts, because they land at different moments:
//! - **during the test**: the sampler thread's CPU time (user + system, its
//!   `CLOCK_THREAD_CPUTIME_ID`) from its start until it was told to stop: every periodic sample,
//!   the kernel log drains and its wake-ups. (Not `getrusage(RUSAGE_THREAD)`: it books a running
//!   thread's time only at scheduler ticks and switches, so a sub-millisecond sample reads 0.) This is the part that competes with the test; [`WatchCost::core_share`] is it
//!   over the watch's wall time.
//! - **at the edges**: the baseline and the final sample, the NIC driver counters and the host
//!   facts (which run `ethtool`, `tc` and `ip`: their CPU is counted too, from
//!   `RUSAGE_CHILDREN`). They run before the test starts or after it ended.
//!
//! `RUSAGE_CHILDREN` is process-wide: a command's cost is exact while no other thread of the
//! process reaps a child at the same moment (wireperf runs no other commands during a test).

use serde::{Deserialize, Serialize};
use std::time::Duration;

use wireperf_sys::{CpuTimes, children_cpu_times, thread_cpu_clock};

/// The CPU time a watch used, ns.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct WatchCost {
    /// Wall seconds from the baseline sample to the stop.
    pub seconds: f64,
    /// CPU ns the sampler used while the test ran.
    pub during_ns: u64,
    /// Periodic samples taken while the test ran.
    pub samples: u32,
    /// CPU ns of the one-off reads before and after the test, with the commands they ran.
    pub edges_ns: u64,
}

impl WatchCost {
    /// The sampler's share of one core while the test ran (0–1); `None` for a zero-length watch.
    pub fn core_share(&self) -> Option<f64> {
        (self.seconds > 0.0).then(|| self.during_ns as f64 / 1e9 / self.seconds)
    }

    /// Adds one-off work measured by a [`Meter`].
    pub fn charge_edges(&mut self, ns: u64) {
        self.edges_ns = self.edges_ns.saturating_add(ns);
    }

    /// The figures as `-J` shows them (ms, %).
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "seconds": round(self.seconds, 3),
            "cpu_ms": round(self.during_ns as f64 / 1e6, 3),
            "core_percent": self.core_share().map(|s| round(100.0 * s, 4)),
            "samples": self.samples,
            "edges_cpu_ms": round(self.edges_ns as f64 / 1e6, 3),
        })
    }

    /// One line: `sampling used 3.1 ms CPU in 10.0 s (0.031 % of one core, 10 samples); 21.0 ms
    /// before and after the test (facts, driver counters, first and last sample)`.
    pub fn text(&self) -> String {
        let share = self.core_share().map_or_else(|| "n/a".to_string(), |s| format!("{:.3} %", 100.0 * s));
        format!(
            "sampling used {:.1} ms CPU in {:.1} s ({share} of one core, {} samples); {:.1} ms before and after the test (facts, driver counters, first and last sample)",
            self.during_ns as f64 / 1e6,
            self.seconds,
            self.samples,
            self.edges_ns as f64 / 1e6,
        )
    }
}

fn round(v: f64, digits: i32) -> f64 {
    let f = 10f64.powi(digits);
    (v * f).round() / f
}

/// A start mark of this thread's and the process's children's CPU time; [`Meter::ns`] is what
/// was spent since, on this thread and in commands reaped meanwhile.
#[derive(Debug, Clone, Copy)]
pub struct Meter {
    thread: Option<Duration>,
    children: Option<CpuTimes>,
}

impl Meter {
    /// Marks now (call on the thread that does the work).
    pub fn start() -> Self {
        Self { thread: thread_cpu_clock().ok(), children: children_cpu_times().ok() }
    }

    /// ns spent since [`Meter::start`] (a clock that cannot be read counts nothing).
    pub fn ns(&self) -> u64 {
        let thread = match (self.thread, thread_cpu_clock()) {
            (Some(a), Ok(b)) => ns(b.saturating_sub(a)),
            _ => 0,
        };
        let children = match (self.children, children_cpu_times()) {
            (Some(a), Ok(b)) => ns(b.saturating_sub(&a).total()),
            _ => 0,
        };
        thread.saturating_add(children)
    }
}

fn ns(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// This thread's CPU time since it started, ns (the sampler thread does nothing else).
pub fn thread_total_ns() -> u64 {
    thread_cpu_clock().map_or(0, ns)
}

/// Runs `f` and returns its result with the CPU ns it cost (see [`Meter`]).
pub fn measured<T>(f: impl FnOnce() -> T) -> (T, u64) {
    let m = Meter::start();
    let out = f();
    (out, m.ns())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn share_is_the_sampler_time_over_the_wall_time() {
        let c = WatchCost { seconds: 10.0, during_ns: 5_000_000, samples: 10, edges_ns: 30_000_000 };
        assert_eq!(c.core_share(), Some(0.0005));
        let j = c.to_json();
        assert_eq!(j["cpu_ms"], 5.0);
        assert_eq!(j["core_percent"], 0.05);
        assert_eq!(j["edges_cpu_ms"], 30.0);
        assert_eq!(j["samples"], 10);
        assert_eq!(
            c.text(),
            "sampling used 5.0 ms CPU in 10.0 s (0.050 % of one core, 10 samples); 30.0 ms before and after the test (facts, driver counters, first and last sample)"
        );
        let zero = WatchCost::default();
        assert_eq!(zero.core_share(), None);
        assert!(zero.to_json()["core_percent"].is_null());
        assert!(zero.text().contains("(n/a of one core"));
    }

    #[test]
    fn charging_edges_adds_and_saturates() {
        let mut c = WatchCost::default();
        c.charge_edges(7);
        c.charge_edges(3);
        assert_eq!(c.edges_ns, 10);
        c.charge_edges(u64::MAX);
        assert_eq!(c.edges_ns, u64::MAX);
    }

    /// Burns this thread's CPU until `ns` of it were used (bounded by 10 s of wall time).
    fn burn(ns: u64) {
        let m = Meter::start();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        let mut x = 0u64;
        while m.ns() < ns && std::time::Instant::now() < deadline {
            for i in 0..10_000u64 {
                x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(i));
            }
        }
    }

    #[test]
    fn a_meter_counts_this_threads_work_and_not_another_threads() {
        let (_, ns) = measured(|| burn(20_000_000));
        assert!(ns >= 20_000_000, "{ns} ns");
        // Another thread's work does not show on this thread's meter (a sleeping thread uses
        // next to nothing: allow 5 ms for the spawn and join).
        let (_, idle) = measured(|| std::thread::spawn(|| burn(50_000_000)).join().unwrap());
        assert!(idle < 5_000_000, "{idle} ns");
    }

    #[test]
    fn a_meter_counts_the_commands_it_waited_for() {
        let script = "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done";
        let m = Meter::start();
        let (t0, c0) = (thread_cpu_clock().unwrap(), children_cpu_times().unwrap());
        let st = std::process::Command::new("sh").args(["-c", script]).status().unwrap();
        assert!(st.success());
        let own = thread_cpu_clock().unwrap().saturating_sub(t0);
        let child = children_cpu_times().unwrap().saturating_sub(&c0).total();
        assert!(child > std::time::Duration::ZERO, "the shell loop's CPU was not seen");
        // The meter holds both this thread's part (fork, wait) and the child's.
        let ns = m.ns();
        assert!(ns as u128 >= (own + child).as_nanos(), "{ns} ns < {own:?} + {child:?}");
    }
}
