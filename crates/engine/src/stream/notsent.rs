//! A short unsent queue (`TCP_NOTSENT_LOWAT`) for TCP senders on host-local paths.
//!
//! Why: on loopback, or a veth pair between two namespaces, there is no wire; the link is the
//! host's CPUs, and what they spend per byte is the two copies and the TCP work around them.
//! A socket that may queue its whole send buffer (4 MiB by default, per stream) unsent keeps
//! megabytes of packet memory in flight: the copies into and out of it miss the caches. With
//! the unsent queue held short, the data the sender copies in is sent and read while it is
//! still in cache. Measured on the 2-core VM (bench/run, medians of 5 pairs): 1.27x the bytes
//! per CPU-second at `-P 4` on loopback, 1.47x across a veth, 1.2x at `-P 8`
//! (docs/performance.md, "A short unsent queue on host-local paths").
//!
//! How short ([`crate::config::NotsentMark::Auto`]): 32 KiB when the test's senders and
//! receivers share CPUs, 64 KiB (one full GSO packet) when each has a CPU of its own. A sender
//! blocked on the mark wakes when the unsent queue falls below half of it; with 32 KiB that
//! is twice per 64 KiB packet, and when the receiver runs on the other CPU every wake-up is a
//! cross-CPU one. Where they share a CPU the wake-ups are cheap and the shorter queue keeps
//! the copies in that CPU's cache. Measured: one stream on two CPUs 1.8x (loopback) and 1.3x
//! (veth) the throughput with 64 KiB; `-P 2`/`-P 4` across a veth on two CPUs and one stream
//! on one CPU 1.5-2x with 32 KiB (docs/performance.md, "Two marks").
//!
//! Why only there: where a device with a queue of its own is the bottleneck (a NIC, or a
//! shaped virtual device), the unsent data is what keeps the link busy while the sending
//! thread waits for a CPU. Measured through a 2 Gbit/s tbf with both cores busy, a 32 KiB
//! mark lost 4-5 % of the rate. So a sender takes the mark only when both say host-local:
//! its smallest round trip is at most [`HOST_LOCAL_RTT_US`] (loopback and veth measure 5-6 µs;
//! a round trip through two NICs takes tens of microseconds and more), and the device that
//! holds its local address has no queue (`noqueue`: loopback and an unshaped veth; NICs get
//! `mq`/`fq_codel`/`pfifo_fast`, and `tc` shaping replaces `noqueue`). It looks 50 ms into the
//! stream and then every 100 ms until both hold (the round trip is known only once data flows);
//! paced streams (`-b`) and `-k` streams (whose blocks a stock receiver counts per `read`)
//! never take it. `EngineTuning::notsent_lowat` (the cli's `WIREPERF_NOTSENT_LOWAT`) turns
//! it off or sets another mark (for measuring; copied per test into the stream spec, with the
//! test's table of local qdiscs, `spec::LocalQdiscs`); `wireperf_io.notsent_lowat_bytes` in
//! `-J` says it was set.

use super::io_report::IoReport;
use super::spec::{LocalQdiscs, StreamSpec};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// The largest smallest-round-trip (µs) of a host-local path.
pub(crate) const HOST_LOCAL_RTT_US: u32 = 20;
/// The first look: by then the stream has round trips of data behind it.
const FIRST_LOOK: Duration = Duration::from_millis(50);
/// Later looks, until the path qualifies.
const LOOK_EVERY: Duration = Duration::from_millis(100);

/// Whether a path is host-local: no wire (round trip within [`HOST_LOCAL_RTT_US`]) and no queue
/// of its own on the local device. An unknown round trip (0) or qdisc is not host-local.
pub(crate) fn host_local(min_rtt_us: u32, root_qdisc: Option<&str>) -> bool {
    (1..=HOST_LOCAL_RTT_US).contains(&min_rtt_us) && root_qdisc == Some("noqueue")
}

/// One sender's look at its path, carried with the stream (on its thread or a worker).
#[derive(Debug)]
pub(crate) struct NotsentGate {
    /// The mark to set; `None` once there is nothing left to do.
    mark: Option<usize>,
    next: Instant,
    /// The test's table of local devices' qdiscs (shared with its other senders).
    qdiscs: LocalQdiscs,
    /// The local device's root qdisc, once looked up (the first look).
    qdisc: Option<String>,
}

impl NotsentGate {
    /// A gate for a stream of the test `spec` starting at `start`. Paced streams never set the
    /// mark, nor do streams under a `-k` budget: iperf3's receivers count a block per `read`
    /// that returned data, and with the unsent queue held short a block more often arrives in
    /// pieces, so a stock 3.12 client of a `-R -k 10 -l 64K` test ended after 10 reads holding
    /// 9.45 blocks.
    pub(crate) fn new(spec: &StreamSpec, budget: Option<&super::Budget>, start: Instant) -> Self {
        let skip = spec.rate > 0 || budget.is_some_and(super::Budget::counts_blocks);
        let mark = if skip { None } else { spec.notsent_mark };
        NotsentGate { mark, next: start + FIRST_LOOK, qdiscs: spec.local_qdiscs.clone(), qdisc: None }
    }

    /// Called after each send: looks at the path when a look is due.
    #[inline]
    pub(crate) fn poll(&mut self, sock: &TcpStream, io: &IoReport) {
        if self.mark.is_none() {
            return;
        }
        let now = Instant::now();
        if now >= self.next {
            self.next = now + LOOK_EVERY;
            self.look(sock, io);
        }
    }

    fn look(&mut self, sock: &TcpStream, io: &IoReport) {
        let Some(mark) = self.mark else { return };
        if self.qdisc.is_none() {
            self.qdisc = sock.local_addr().ok().and_then(|a| self.qdiscs.of(a.ip()));
            if self.qdisc.as_deref() != Some("noqueue") {
                // A queue of its own (or an unknown device) does not go away during a test.
                self.mark = None;
                return;
            }
        }
        let Ok(info) = wireperf_sys::tcp_info(sock) else { return };
        if host_local(info.min_rtt_us, self.qdisc.as_deref()) {
            if wireperf_sys::sockopt::set_notsent_lowat(sock, mark).is_ok() {
                io.note_notsent_lowat(mark);
            }
            self.mark = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::HOST_LOCAL_NOTSENT;

    #[test]
    fn only_a_short_round_trip_through_a_device_without_a_queue_is_host_local() {
        assert!(host_local(5, Some("noqueue")));
        assert!(host_local(HOST_LOCAL_RTT_US, Some("noqueue")));
        assert!(!host_local(HOST_LOCAL_RTT_US + 1, Some("noqueue")), "a round trip through NICs");
        assert!(!host_local(0, Some("noqueue")), "no round trip measured yet");
        for shaped in ["tbf", "htb", "fq_codel", "mq", "pfifo_fast", "cake"] {
            assert!(!host_local(5, Some(shaped)), "{shaped}: a queue of its own");
        }
        assert!(!host_local(5, None), "unknown device");
    }

    #[test]
    fn paced_block_budget_and_switched_off_streams_never_look() {
        let spec = super::super::send_path::tests::spec(crate::config::SendMode::Write);
        let paced = StreamSpec { rate: 1_000_000, ..spec.clone() };
        assert_eq!(NotsentGate::new(&paced, None, Instant::now()).mark, None);
        let blocks = super::super::Budget::new(0, 10, true);
        assert_eq!(NotsentGate::new(&spec, Some(&blocks), Instant::now()).mark, None, "-k");
        let bytes = super::super::Budget::new(1 << 20, 0, true);
        assert!(NotsentGate::new(&spec, Some(&bytes), Instant::now()).mark.is_some(), "-n");
        let off = StreamSpec { notsent_mark: None, ..spec };
        assert_eq!(NotsentGate::new(&off, None, Instant::now()).mark, None, "switched off");
    }

    #[test]
    fn a_loopback_sender_takes_the_mark_once_data_has_flowed() {
        use std::io::{Read, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let tx = TcpStream::connect(listener.local_addr().expect("addr")).expect("connect");
        let (mut rx, _) = listener.accept().expect("accept");
        let reader = std::thread::spawn(move || {
            let mut buf = vec![0u8; 1 << 16];
            while rx.read(&mut buf).is_ok_and(|n| n > 0) {}
        });
        let io = IoReport::default();
        let start = Instant::now();
        let spec = super::super::send_path::tests::spec(crate::config::SendMode::Write);
        let mut gate = NotsentGate::new(&spec, None, start);
        let block = vec![0u8; 1 << 16];
        let mut w = &tx;
        // Bounded: a second of loopback writes at most.
        while gate.mark.is_some() && start.elapsed() < Duration::from_secs(1) {
            w.write_all(&block).expect("write");
            gate.poll(&tx, &io);
        }
        assert_eq!(gate.qdisc.as_deref(), Some("noqueue"));
        assert_eq!(io.notsent_lowat(), Some(HOST_LOCAL_NOTSENT as u64));
        // The lookup went into the test's table, where its other senders find it.
        assert_eq!(spec.local_qdiscs.looked_up(), 1);
        drop(tx);
        reader.join().expect("reader");
    }
}
