//! What the test thread gives a stream thread: [`StreamSpec`], derived the same way by both
//! ends from the test's parameters, with the UDP part in [`UdpSpec`].
//!
//! A leaf of `stream`: the loops (`tcp`, `udp`, `file`, `send_path`, `worker`) read it and it reads none
//! of them.

use crate::config::{EngineTuning, SendMode, StreamWorkers, TestHooks};
use std::net::IpAddr;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

/// What a stream thread needs to run.
#[derive(Clone, Debug)]
pub(crate) struct StreamSpec {
    /// Block size (`-l`): the unit of `-k`, of pacing, and of the receiver's low-water mark.
    pub len: usize,
    /// Unpaced TCP: bytes one write or read call may move, a whole number of blocks
    /// (see [`call_bytes`]).
    pub call_bytes: usize,
    /// Random or `0123456789…` payload.
    pub repeating_payload: bool,
    /// Target rate in bit/s (0 = unlimited).
    pub rate: u64,
    /// Fail when nothing arrives for this long while the test runs (receivers).
    pub rcv_timeout: Duration,
    /// Pin the thread to this CPU.
    pub affinity: Option<usize>,
    /// UDP settings (ignored by TCP streams).
    pub udp: UdpSpec,
    /// TCP senders: write, sendfile (`-Z`) or MSG_ZEROCOPY (`--zerocopy=z`).
    pub send_mode: SendMode,
    /// TCP receivers: discard with `MSG_TRUNC` (`--skip-rx-copy`).
    pub skip_rx_copy: bool,
    /// `-F`: send this file / write what arrives into it (TCP).
    pub file: Option<std::path::PathBuf>,
    /// TCP senders: the short unsent queue to keep on host-local paths (`notsent`), from
    /// [`EngineTuning::notsent_lowat`] for this test's streams and this process's CPUs; `None`
    /// when it is turned off.
    pub notsent_mark: Option<usize>,
    /// TCP senders: the root qdiscs of local devices, looked up once per test (`notsent`).
    pub local_qdiscs: LocalQdiscs,
    /// The shared workers a direction may use (`schedule`), from [`EngineTuning`].
    pub workers: StreamWorkers,
    /// The test hooks armed for this test (none in a build without feature `test-hooks`).
    pub hooks: TestHooks,
}

impl StreamSpec {
    /// The spec both ends derive from the test's parameters; what is local to this side comes
    /// as arguments: its receive timeout and affinity, the zero-copy path it uses when the
    /// parameters ask for `-Z`, its `-F` file, and its data path's tuning.
    pub(crate) fn from_params(
        p: &wireperf_protocol::TestParams,
        rcv_timeout: Duration,
        affinity: Option<usize>,
        zerocopy: SendMode,
        file: Option<std::path::PathBuf>,
        tuning: &EngineTuning,
    ) -> Self {
        let len = p.len as usize;
        StreamSpec {
            len,
            call_bytes: call_bytes(len, p.total_streams() as usize),
            repeating_payload: p.repeating_payload,
            rate: p.bandwidth.unwrap_or(0),
            rcv_timeout,
            affinity,
            udp: UdpSpec {
                counters_64bit: p.udp_counters_64bit,
                burst: p.burst.unwrap_or(0),
                offload: tuning.udp_offload,
            },
            send_mode: if p.zerocopy { zerocopy } else { SendMode::Write },
            skip_rx_copy: p.skip_rx_copy,
            file,
            notsent_mark: tuning
                .notsent_lowat
                .for_test(p.total_streams() as usize, std::thread::available_parallelism().map_or(1, |n| n.get())),
            local_qdiscs: LocalQdiscs::default(),
            workers: tuning.stream_workers,
            hooks: tuning.hooks,
        }
    }
}

/// UDP settings of a stream.
#[derive(Clone, Debug, Default)]
pub(crate) struct UdpSpec {
    /// 64-bit sequence numbers.
    pub counters_64bit: bool,
    /// Datagrams per pacing slot (`-b RATE/BURST`); 0 or 1 = one.
    pub burst: u32,
    /// Use GSO/GRO when the kernel offers them ([`EngineTuning::udp_offload`]).
    pub offload: bool,
}

/// Buffer memory all the TCP streams of one test may use for their system calls together.
const CALL_BUDGET: usize = 4 * 1024 * 1024;
/// The most one stream moves in one call.
const CALL_MAX: usize = 1024 * 1024;

/// Bytes per write/read call for each of `streams` unpaced TCP streams with `len`-byte blocks.
///
/// iperf3 makes one system call per block (128 KiB by default). On a fast path the
/// per-call cost (syscall, wake-ups, socket lock) is what limits one stream, so wireperf moves
/// whole blocks, up to 1 MiB, per call: a single loopback stream went from about 20 to 40
/// Gbit/s on the 2-vCPU VM (BENCHMARKS.md). Blocks stay the unit of `-k` and pacing; with
/// more than four streams the size shrinks so the buffers stay under 4 MiB in all (never below
/// one block): the buffers are most of a process's memory, and with several streams the
/// per-call cost is spread over them anyway.
fn call_bytes(len: usize, streams: usize) -> usize {
    let len = len.max(1);
    let per_stream = (CALL_BUDGET / streams.max(1)).min(CALL_MAX);
    (per_stream / len).max(1) * len
}

/// Local addresses and the root qdisc kind of the device holding each (`None`: unknown).
type QdiscTable = Vec<(IpAddr, Option<String>)>;

/// The root qdiscs of the local devices a test's senders send from, looked up once per address
/// and test, and shared by every clone of the test's spec: a `-P 128` test makes two netlink
/// dumps per local address instead of two per stream. Per test, not per process: a
/// long-running server must see a qdisc that changed between two tests.
#[derive(Clone, Debug, Default)]
pub(crate) struct LocalQdiscs(Arc<Mutex<QdiscTable>>);

impl LocalQdiscs {
    /// The root qdisc kind of the device holding local address `ip`, as first looked up.
    pub(crate) fn of(&self, ip: IpAddr) -> Option<String> {
        // A poisoned lock only means another sender panicked mid-lookup: the table is whole.
        let mut known = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((_, kind)) = known.iter().find(|(a, _)| *a == ip) {
            return kind.clone();
        }
        let kind = wireperf_sys::netdev::device_of_address(ip)
            .ok()
            .flatten()
            .and_then(|dev| wireperf_sys::netdev::root_qdisc_kind(dev).ok().flatten());
        known.push((ip, kind.clone()));
        kind
    }

    /// How many addresses were looked up.
    #[cfg(test)]
    pub(crate) fn looked_up(&self) -> usize {
        self.0.lock().map_or(0, |k| k.len())
    }
}

#[cfg(test)]
mod tests {
    use super::{LocalQdiscs, call_bytes};

    #[test]
    fn a_test_looks_up_each_local_address_once() {
        let qdiscs = LocalQdiscs::default();
        let shared = qdiscs.clone();
        let lo = "127.0.0.1".parse().expect("ip");
        assert_eq!(qdiscs.of(lo).as_deref(), Some("noqueue"));
        assert_eq!(shared.of(lo).as_deref(), Some("noqueue"), "a clone shares the table");
        assert_eq!(qdiscs.looked_up(), 1);
        // Not an address of this host: unknown, and remembered as such.
        let far = "192.0.2.1".parse().expect("ip");
        assert_eq!(qdiscs.of(far), None);
        assert_eq!(shared.looked_up(), 2);
    }

    #[test]
    fn calls_move_whole_blocks_within_the_memory_budget() {
        const K: usize = 1024;
        assert_eq!(call_bytes(128 * K, 1), 1024 * K, "8 default blocks per call");
        assert_eq!(call_bytes(128 * K, 4), 1024 * K, "four streams keep 1 MiB each");
        assert_eq!(call_bytes(128 * K, 8), 512 * K, "4 MiB shared by 8 streams");
        assert_eq!(call_bytes(128 * K, 64), 128 * K, "one block each for 64 streams");
        assert_eq!(call_bytes(128 * K, 1000), 128 * K, "never less than one block");
        assert_eq!(call_bytes(3000, 1), 349 * 3000, "whole blocks only");
        assert_eq!(call_bytes(4096 * K, 1), 4096 * K, "a block above 1 MiB is one call");
        assert_eq!(call_bytes(0, 0), 1024 * K, "degenerate input does not panic");
    }
}
