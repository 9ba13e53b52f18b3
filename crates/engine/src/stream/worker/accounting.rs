//! A worker's accounting: its thread's CPU time shared out among its streams by the bytes each
//! moved, and every period the figures it reports to the balancer (`balance`, through the
//! crew), with the streams it is told to hand to another worker.

use super::poll::{PERIOD, Worker};
use super::slot::tcp;
use crate::error::EngineError;
use crate::stream::balance::Observation;
use mio::Token;
use mio::unix::SourceFd;
use std::os::fd::AsRawFd;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// The calling thread's CPU time so far (user, system); zero when the kernel cannot say.
pub(super) fn thread_cpu() -> (Duration, Duration) {
    wireperf_sys::thread_cpu_times().map_or((Duration::ZERO, Duration::ZERO), |t| (t.user, t.system))
}

impl<S> Worker<S> {
    /// Shares the thread's CPU time since the last call out among its streams, by the bytes
    /// each moved since then (evenly when none moved any).
    pub(super) fn share_cpu(&mut self) {
        let now = thread_cpu();
        let (user, system) = (now.0.saturating_sub(self.cpu_mark.0), now.1.saturating_sub(self.cpu_mark.1));
        self.cpu_mark = now;
        let moved: Vec<u64> = self.slots.iter().map(|s| s.m.counters.bytes().saturating_sub(s.cpu_mark)).collect();
        let all: u64 = moved.iter().sum();
        let n = self.slots.len();
        for (s, b) in self.slots.iter_mut().zip(moved) {
            let share = if all > 0 { b as f64 / all as f64 } else { 1.0 / n as f64 };
            s.cpu_us.0 += user.as_micros() as f64 * share;
            s.cpu_us.1 += system.as_micros() as f64 * share;
            s.cpu_mark += b;
        }
    }

    /// At the end of a period: reports the period's figures and hands over the streams the
    /// balancer moves away from this worker.
    pub(super) fn report_if_due(&mut self) {
        let now = Instant::now();
        let period = now.saturating_duration_since(self.period_start);
        if period < PERIOD {
            return;
        }
        self.share_cpu();
        let cpu = (self.cpu_mark.0 + self.cpu_mark.1).saturating_sub(self.period_cpu.0 + self.period_cpu.1);
        // Each stream's bytes this period, read once: the same reading starts the next period.
        let streams = self
            .slots
            .iter_mut()
            .map(|s| {
                let bytes = s.m.counters.bytes();
                let moved = bytes.saturating_sub(s.period_mark);
                s.period_mark = bytes;
                (s.id, moved)
            })
            .collect();
        let obs = Observation { period, waited: self.waited, cpu, streams };
        self.period_start = now;
        self.period_cpu = self.cpu_mark;
        self.waited = Duration::ZERO;
        for (id, to) in self.group.crew.publish(self.index, obs) {
            self.give(id, to);
        }
    }

    /// Hands stream `id` (if it is still here) with its whole state to worker `to`.
    fn give(&mut self, id: usize, to: usize) {
        let Some(i) = self.slots.iter().position(|s| s.id == id && s.end.is_none()) else { return };
        // Its CPU share up to here stays its own (share_cpu ran at this report).
        let Some(sock) = tcp(&self.slots[i].m) else { return };
        let fd = sock.as_raw_fd();
        if self.poll.registry().deregister(&mut SourceFd(&fd)).is_err() {
            return;
        }
        let mut s = self.slots.remove(i);
        s.m.counters.worker_moves.fetch_add(1, Ordering::Relaxed);
        if let Err(back) = self.group.hand(to, s) {
            // The target is gone: the stream stays.
            s = back;
            s.m.counters.worker_moves.fetch_sub(1, Ordering::Relaxed);
            match self.poll.registry().register(&mut SourceFd(&fd), Token(s.id), self.interest) {
                Ok(()) => {
                    s.ready = true;
                    self.slots.push(s);
                }
                Err(err) => {
                    s.end = Some(Err(EngineError::Stream { op: "watch", err }));
                    self.slots.push(s);
                    self.finish_ended();
                }
            }
        }
    }
}
