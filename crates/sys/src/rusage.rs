//! CPU time of the process and of single threads, and iperf3's CPU-utilisation numbers.
//!
//! iperf3 reports `cpu_util_total`, `cpu_util_user` and `cpu_util_system` for each side
//! (`iperf_util.c: cpu_util`). It takes a start mark (wall clock, `clock()`, `getrusage`) and at
//! the end computes, with `wall` the elapsed wall time:
//!
//! - total  = (Δ`clock()`) / wall × 100, where glibc's `clock()` reads
//!   `CLOCK_PROCESS_CPUTIME_ID` (user + system CPU of all threads of the process);
//! - user   = Δ`ru_utime` / wall × 100;
//! - system = Δ`ru_stime` / wall × 100.
//!
//! [`CpuSampler`] does exactly that. With several busy threads the numbers can exceed 100.
//!
//! Children are never counted: `RUSAGE_SELF` and `CLOCK_PROCESS_CPUTIME_ID` cover only this
//! process's own threads, not waited-for child processes (`RUSAGE_CHILDREN`), matching iperf3,
//! which spawns none during a test.
//!
//! [`thread_cpu_times`] (`RUSAGE_THREAD`) gives per-stream CPU cost, since the engine runs one
//! OS thread per stream. It misses softirq work the kernel does on other CPUs (e.g. in
//! ksoftirqd) on behalf of the stream.

use std::io;
use std::mem::MaybeUninit;
use std::time::{Duration, Instant};

/// User and system CPU time consumed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct CpuTimes {
    /// Time spent executing in user mode (`ru_utime`).
    pub user: Duration,
    /// Time spent executing in the kernel on our behalf (`ru_stime`).
    pub system: Duration,
}

impl CpuTimes {
    /// `user + system`.
    pub fn total(&self) -> Duration {
        self.user.saturating_add(self.system)
    }

    /// Component-wise `self - earlier`, clamped at zero (the kernel's split between user and
    /// system time is re-estimated on each call, so one component can step back slightly).
    pub fn saturating_sub(&self, earlier: &CpuTimes) -> CpuTimes {
        CpuTimes { user: self.user.saturating_sub(earlier.user), system: self.system.saturating_sub(earlier.system) }
    }
}

/// CPU time of the whole process (all threads, no children): `getrusage(RUSAGE_SELF)`.
pub fn process_cpu_times() -> io::Result<CpuTimes> {
    getrusage(libc::RUSAGE_SELF)
}

/// CPU time of the calling thread only: `getrusage(RUSAGE_THREAD)` (Linux ≥ 2.6.26).
pub fn thread_cpu_times() -> io::Result<CpuTimes> {
    getrusage(libc::RUSAGE_THREAD)
}

/// CPU time of this process's terminated and waited-for children: `getrusage(RUSAGE_CHILDREN)`.
/// Process-wide, so a delta around one command is that command's cost only while no other
/// thread reaps a child meanwhile.
pub fn children_cpu_times() -> io::Result<CpuTimes> {
    getrusage(libc::RUSAGE_CHILDREN)
}

fn getrusage(who: libc::c_int) -> io::Result<CpuTimes> {
    let mut ru = MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: `ru` is a valid, writable `rusage`; `who` is one of the RUSAGE_* constants.
    let rc = unsafe { libc::getrusage(who, ru.as_mut_ptr()) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: getrusage succeeded and filled the struct (and it started zeroed; all-integer).
    let ru = unsafe { ru.assume_init() };
    Ok(CpuTimes { user: timeval_to_duration(ru.ru_utime), system: timeval_to_duration(ru.ru_stime) })
}

fn timeval_to_duration(tv: libc::timeval) -> Duration {
    let secs = u64::try_from(tv.tv_sec).unwrap_or(0);
    let micros = u32::try_from(tv.tv_usec).unwrap_or(0).min(999_999);
    Duration::new(secs, micros * 1000)
}

/// Process CPU time (user + system, all threads) from `CLOCK_PROCESS_CPUTIME_ID`: the clock
/// glibc's `clock()` reads, and so what iperf3's `cpu_util_total` is based on. It is more
/// precise than `getrusage`, whose user/system split is sampled.
pub fn process_cpu_clock() -> io::Result<Duration> {
    cpu_clock(libc::CLOCK_PROCESS_CPUTIME_ID)
}

/// The calling thread's CPU time (user + system) from `CLOCK_THREAD_CPUTIME_ID`. Unlike
/// `getrusage(RUSAGE_THREAD)`, which only sees the runtime the scheduler booked at its last
/// tick or switch, this clock adds the running stretch up to now: exact for work shorter than
/// a tick (one sample of the bottleneck watch takes well under a millisecond).
pub fn thread_cpu_clock() -> io::Result<Duration> {
    cpu_clock(libc::CLOCK_THREAD_CPUTIME_ID)
}

fn cpu_clock(clock: libc::clockid_t) -> io::Result<Duration> {
    let mut ts = MaybeUninit::<libc::timespec>::zeroed();
    // SAFETY: `ts` is a valid, writable timespec; the clock id is a constant the kernel knows.
    let rc = unsafe { libc::clock_gettime(clock, ts.as_mut_ptr()) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: clock_gettime succeeded and filled the struct.
    let ts = unsafe { ts.assume_init() };
    let secs = u64::try_from(ts.tv_sec).unwrap_or(0);
    let nanos = u32::try_from(ts.tv_nsec).unwrap_or(0).min(999_999_999);
    Ok(Duration::new(secs, nanos))
}

/// CPU utilisation in percent of one CPU over a wall-clock span, as iperf3 reports it.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CpuUtil {
    /// `cpu_util_total`: process CPU (user + system) / wall × 100.
    pub total_pct: f64,
    /// `cpu_util_user`: user CPU / wall × 100.
    pub user_pct: f64,
    /// `cpu_util_system`: system CPU / wall × 100.
    pub system_pct: f64,
}

impl CpuUtil {
    /// Computes the percentages from deltas. A zero `wall` gives all zeros rather than iperf3's
    /// NaN/inf, so the values are always valid JSON numbers.
    pub fn from_deltas(wall: Duration, process_clock: Duration, rusage: CpuTimes) -> Self {
        let wall = wall.as_secs_f64();
        if wall <= 0.0 {
            return CpuUtil::default();
        }
        let pct = |d: Duration| d.as_secs_f64() / wall * 100.0;
        CpuUtil { total_pct: pct(process_clock), user_pct: pct(rusage.user), system_pct: pct(rusage.system) }
    }
}

/// A start mark for measuring process CPU utilisation over a test, like iperf3's
/// `cpu_util(NULL)` call at the start and `cpu_util(pcpu)` at the end.
///
/// iperf3 marks the start on the client right after the control connection is up, and on the
/// server just before sending `TEST_START`; the end is at `TEST_END`.
#[derive(Debug, Clone, Copy)]
pub struct CpuSampler {
    wall: Instant,
    clock: Duration,
    rusage: CpuTimes,
}

impl CpuSampler {
    /// Takes the start mark now.
    pub fn start() -> io::Result<Self> {
        Ok(CpuSampler { wall: Instant::now(), clock: process_cpu_clock()?, rusage: process_cpu_times()? })
    }

    /// Utilisation from the start mark until now. May be called repeatedly (e.g. per interval
    /// for a live view); the start mark does not move.
    pub fn sample(&self) -> io::Result<CpuUtil> {
        let wall = self.wall.elapsed();
        let clock = process_cpu_clock()?.saturating_sub(self.clock);
        let rusage = process_cpu_times()?.saturating_sub(&self.rusage);
        Ok(CpuUtil::from_deltas(wall, clock, rusage))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Burns user CPU for at least `d` of this thread's CPU time.
    fn burn(d: Duration) -> u64 {
        let start = thread_cpu_times().unwrap().total();
        let mut x = 0u64;
        while thread_cpu_times().unwrap().total().saturating_sub(start) < d {
            for i in 0..10_000u64 {
                x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(i));
            }
        }
        x
    }

    #[test]
    fn from_deltas_matches_iperf3_formula() {
        let u = CpuUtil::from_deltas(
            Duration::from_secs(2),
            Duration::from_millis(1500),
            CpuTimes { user: Duration::from_millis(500), system: Duration::from_millis(1000) },
        );
        assert_eq!(u.total_pct, 75.0);
        assert_eq!(u.user_pct, 25.0);
        assert_eq!(u.system_pct, 50.0);
    }

    #[test]
    fn zero_wall_is_zero_not_nan() {
        let u = CpuUtil::from_deltas(Duration::ZERO, Duration::from_secs(1), CpuTimes::default());
        assert_eq!(u, CpuUtil::default());
    }

    #[test]
    fn saturating_sub_never_goes_negative() {
        let a = CpuTimes { user: Duration::from_millis(5), system: Duration::from_millis(10) };
        let b = CpuTimes { user: Duration::from_millis(7), system: Duration::from_millis(3) };
        let d = a.saturating_sub(&b);
        assert_eq!(d.user, Duration::ZERO);
        assert_eq!(d.system, Duration::from_millis(7));
        assert_eq!(a.total(), Duration::from_millis(15));
    }

    #[test]
    fn thread_times_grow_with_work_and_stay_below_process_times() {
        std::thread::spawn(|| {
            let before = thread_cpu_times().unwrap();
            burn(Duration::from_millis(30));
            let after = thread_cpu_times().unwrap();
            assert!(after.total() >= before.total() + Duration::from_millis(30));
            let process = process_cpu_times().unwrap();
            // rusage rounds to microseconds and re-splits user/system; allow a tick of slack.
            assert!(process.total() + Duration::from_millis(10) >= after.total());
        })
        .join()
        .unwrap();
    }

    #[test]
    fn thread_clock_sees_work_shorter_than_a_tick() {
        // 200 µs of work: below a scheduler tick, so only a clock that adds the running
        // stretch shows it (bounded: at most 10 s of wall time).
        let t0 = thread_cpu_clock().unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        let spin = Instant::now();
        while spin.elapsed() < Duration::from_micros(200) && Instant::now() < deadline {
            std::hint::black_box(0u64);
        }
        let t1 = thread_cpu_clock().unwrap();
        assert!(t1 > t0, "{t0:?} -> {t1:?}");
        assert!(t1 - t0 <= spin.elapsed() + Duration::from_millis(1), "more CPU than wall time: {:?}", t1 - t0);
    }

    #[test]
    fn children_times_grow_once_a_busy_child_is_reaped() {
        let before = children_cpu_times().unwrap();
        // A child that burns a few ms of CPU in a loop of fixed length.
        let script = "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done";
        let st = std::process::Command::new("sh").args(["-c", script]).status().unwrap();
        assert!(st.success());
        let after = children_cpu_times().unwrap();
        assert!(after.total() > before.total(), "{before:?} -> {after:?}");
    }

    #[test]
    fn process_clock_is_monotonic_and_advances() {
        let a = process_cpu_clock().unwrap();
        burn(Duration::from_millis(10));
        let b = process_cpu_clock().unwrap();
        assert!(b > a);
    }

    #[test]
    fn sampler_reports_busy_process() {
        let s = CpuSampler::start().unwrap();
        burn(Duration::from_millis(40));
        let u = s.sample().unwrap();
        assert!(u.total_pct.is_finite() && u.total_pct > 0.0, "{u:?}");
        assert!(u.user_pct >= 0.0 && u.system_pct >= 0.0);
        // Other tests run in parallel threads, so only a loose upper bound holds:
        // at most every CPU of the machine busy, plus rounding.
        let cpus = std::thread::available_parallelism().map_or(64, |n| n.get()) as f64;
        assert!(u.total_pct <= cpus * 100.0 + 5.0, "{u:?}");
    }
}
