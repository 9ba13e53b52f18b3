//! The clock iperf3 stamps UDP datagrams with, and the thread's timer slack.
//!
//! iperf3 writes the sender's `CLOCK_MONOTONIC` time (seconds, microseconds) into every UDP
//! datagram, and its receiver subtracts its own `CLOCK_MONOTONIC` time to compute jitter. std's
//! [`std::time::Instant`] reads the same clock but hides the absolute value, which the wire
//! format needs; [`monotonic`] exposes it.
//!
//! [`set_timer_slack`] shrinks the calling thread's timer slack (50 µs by default on Linux), so a
//! pacing sender that sleeps until the next datagram is due wakes close to that moment.

use std::io;
use std::time::Duration;

/// The current `CLOCK_MONOTONIC` time (time since an arbitrary point, usually boot).
///
/// Never fails on Linux; should the call fail anyway, returns zero rather than panicking (a
/// wrong timestamp only spoils jitter, never the test).
pub fn monotonic() -> Duration {
    read(libc::CLOCK_MONOTONIC)
}

/// `CLOCK_REALTIME`: the clock the kernel's receive timestamps (`SO_TIMESTAMPNS`) are in.
pub fn realtime() -> Duration {
    read(libc::CLOCK_REALTIME)
}

/// How far `CLOCK_REALTIME` is ahead of `CLOCK_MONOTONIC` now: subtract it from a kernel
/// receive timestamp (`SO_TIMESTAMPNS`, realtime) to put it on the monotonic scale iperf3's
/// send times use. It moves only when the wall clock is stepped or slewed, which shifts every
/// transit time alike and so leaves jitter alone.
pub fn realtime_offset() -> Duration {
    realtime().saturating_sub(monotonic())
}

fn read(clock: libc::clockid_t) -> Duration {
    // SAFETY: an all-zero timespec is a valid value for clock_gettime to overwrite.
    let mut ts: libc::timespec = unsafe { std::mem::zeroed() };
    // SAFETY: `ts` is a live, aligned, writable timespec for the duration of the call.
    let rc = unsafe { libc::clock_gettime(clock, &mut ts) };
    if rc != 0 {
        return Duration::ZERO;
    }
    let secs = u64::try_from(ts.tv_sec).unwrap_or(0);
    let nanos = u32::try_from(ts.tv_nsec).unwrap_or(0).min(999_999_999);
    Duration::new(secs, nanos)
}

/// Sets the calling thread's timer slack in nanoseconds (`prctl(PR_SET_TIMERSLACK)`); 0 restores
/// the default. Sleeps may end up to this much later than asked.
pub fn set_timer_slack(nanos: u64) -> io::Result<()> {
    let v = libc::c_ulong::try_from(nanos)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "timer slack too large"))?;
    // SAFETY: PR_SET_TIMERSLACK takes one unsigned long by value and touches no memory.
    let rc =
        unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, v, 0 as libc::c_ulong, 0 as libc::c_ulong, 0 as libc::c_ulong) };
    if rc == 0 { Ok(()) } else { Err(io::Error::last_os_error()) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    #[test]
    fn monotonic_advances_like_instant() {
        let (a, i) = (monotonic(), Instant::now());
        std::thread::sleep(Duration::from_millis(20));
        let (b, j) = (monotonic(), Instant::now());
        let ours = b - a;
        let std = j - i;
        assert!(ours >= Duration::from_millis(20));
        let diff = ours.abs_diff(std);
        assert!(diff < Duration::from_millis(5), "{ours:?} vs {std:?}");
        assert!(a > Duration::ZERO);
    }

    #[test]
    fn timer_slack_can_be_set() {
        std::thread::spawn(|| {
            set_timer_slack(1_000).unwrap();
            set_timer_slack(0).unwrap();
        })
        .join()
        .unwrap();
    }
}
