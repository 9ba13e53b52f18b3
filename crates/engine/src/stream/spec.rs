//! What the test thread gives a stream thread: [`StreamSpec`], derived the same way by both
//! ends from the test's parameters, with the UDP part in [`UdpSpec`].
//!
//! A leaf of `stream`: the loops (`tcp`, `udp`, `file`, `zerocopy`) read it and it reads none
//! of them.

use crate::config::SendMode;
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
}

impl StreamSpec {
    /// The spec both ends derive from the test's parameters; what is local to this side comes
    /// as arguments: its receive timeout and affinity, the zero-copy path it uses when the
    /// parameters ask for `-Z`, and its `-F` file.
    pub(crate) fn from_params(
        p: &wireperf_protocol::TestParams,
        rcv_timeout: Duration,
        affinity: Option<usize>,
        zerocopy: SendMode,
        file: Option<std::path::PathBuf>,
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
                offload: offload_from_env(),
            },
            send_mode: if p.zerocopy { zerocopy } else { SendMode::Write },
            skip_rx_copy: p.skip_rx_copy,
            file,
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
    /// Use GSO/GRO when the kernel offers them.
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

/// The environment setting that turns UDP GSO and GRO off, for diagnosis: with
/// `WIREPERF_UDP_OFFLOAD=off` a sender uses `sendmmsg` and a receiver `recvmmsg`, so every
/// datagram is its own packet in the stack and has its own receive time. Read by whichever side
/// runs the stream (set it on the server too for `-R`).
pub(crate) const OFFLOAD_ENV: &str = "WIREPERF_UDP_OFFLOAD";

/// Whether GSO/GRO may be used: anything but `off`/`0`/`no` in [`OFFLOAD_ENV`] allows them.
pub(crate) fn offload_from_env() -> bool {
    offload_allowed(std::env::var(OFFLOAD_ENV).ok().as_deref())
}

fn offload_allowed(setting: Option<&str>) -> bool {
    !matches!(setting.map(str::trim), Some("off" | "0" | "no" | "false"))
}

#[cfg(test)]
mod tests {
    use super::{call_bytes, offload_allowed};

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

    #[test]
    fn offload_is_on_unless_the_environment_turns_it_off() {
        assert!(offload_allowed(None));
        assert!(offload_allowed(Some("on")));
        assert!(offload_allowed(Some("")));
        for off in ["off", "0", "no", "false", " off "] {
            assert!(!offload_allowed(Some(off)), "{off:?}");
        }
    }
}
