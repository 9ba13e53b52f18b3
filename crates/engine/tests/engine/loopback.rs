//! The engine in one process: a wireperf client against a wireperf server over 127.0.0.1,
//! for each way a test can move data (TCP up, `-R`, `--bidir`, `-P 4` on threads of their own
//! and on shared workers, UDP), ended by time (`-t 1`) or by a budget (`-n`, `-k`).
//!
//! Every test asserts exact counts (support/check.rs): what the senders counted is what the
//! receivers counted, per stream and per direction, in the client's report and in the
//! server's, and a budget is spent to the byte its rule gives. The binary's tests
//! (crates/cli/tests) see the same numbers only through a printed document; here a wrong
//! count fails next to the engine that made it.

use crate::support::check::{tcp_exact, udp_exact, whole_blocks_for};
use crate::support::flags::Flags;
use crate::support::run::run;
use wireperf_engine::{EngineTuning, StreamWorkers};
use wireperf_protocol::params::DEFAULT_TCP_BLKSIZE;

/// The TCP block without `-l` (128 KiB).
const BLOCK: u64 = DEFAULT_TCP_BLKSIZE as u64;

/// A `-n` budget that is not a whole number of blocks, so the budget's rounding up to the
/// block is what is tested (1000000 bytes: 8 blocks, 1048576 bytes).
const BUDGET: u64 = 1_000_000;

/// 100 Mbit/s: far below what loopback carries, so a datagram is lost only if a receiver is
/// kept off the CPU (the accounting is exact either way).
const UDP_RATE: u64 = 100_000_000;

/// A datagram of one 1500-byte frame with its IPv4 and UDP headers.
const UDP_LEN: u32 = 1400;

/// Both ends with the tuning the cli gives them when no `WIREPERF_*` variable is set.
fn defaults() -> EngineTuning {
    EngineTuning::default()
}

/// Both ends with TCP streams on `workers`, whatever this host's CPU count (by default a
/// direction with more streams than CPUs shares one worker per CPU).
fn on(workers: StreamWorkers) -> EngineTuning {
    EngineTuning { stream_workers: workers, ..EngineTuning::default() }
}

#[test]
fn tcp_upload_every_byte_written_is_read() {
    let totals = tcp_exact(&run("-t 1", &Flags::tcp().time(1), defaults()));
    assert!(totals.reverse.is_none());
}

#[test]
fn tcp_upload_spends_a_byte_budget_in_whole_blocks() {
    let totals = tcp_exact(&run("-n 1000000", &Flags::tcp().bytes(BUDGET), defaults()));
    assert_eq!(totals.forward, whole_blocks_for(BUDGET, BLOCK), "-n 1000000 with 128 KiB blocks");
}

#[test]
fn tcp_reverse_every_byte_the_server_wrote_is_read() {
    let totals = tcp_exact(&run("-R -t 1", &Flags::tcp().time(1).reverse(), defaults()));
    assert!(totals.reverse.is_none());
}

#[test]
fn tcp_reverse_the_server_spends_the_byte_budget_in_whole_blocks() {
    // The server holds the send budget and the client the receive budget: the client ends
    // the test when its reads reach the budget, and the server has stopped at the last block.
    let totals = tcp_exact(&run("-R -n 1000000", &Flags::tcp().bytes(BUDGET).reverse(), defaults()));
    assert_eq!(totals.forward, whole_blocks_for(BUDGET, BLOCK), "-R -n 1000000 with 128 KiB blocks");
}

#[test]
fn bidir_both_directions_are_exact() {
    let totals = tcp_exact(&run("--bidir -t 1", &Flags::tcp().time(1).bidir(), defaults()));
    assert!(totals.reverse.is_some_and(|b| b > 0), "{totals:?}");
}

#[test]
fn four_streams_on_threads_of_their_own_are_each_exact() {
    tcp_exact(&run("-P 4 -t 1, a thread per stream", &Flags::tcp().time(1).parallel(4), on(StreamWorkers::Off)));
}

#[test]
fn four_streams_on_two_shared_workers_are_each_exact() {
    tcp_exact(&run("-P 4 -t 1, two shared workers", &Flags::tcp().time(1).parallel(4), on(StreamWorkers::Fixed(2))));
}

/// `-P 4 -n`: one budget for the direction, so the four streams together write whole blocks up
/// to it, however the blocks fell to them (a stream may get none).
fn four_streams_share_one_byte_budget(what: &str, workers: StreamWorkers) {
    let n = 10 * BUDGET;
    let totals = tcp_exact(&run(what, &Flags::tcp().bytes(n).parallel(4), on(workers)));
    assert_eq!(totals.forward, whole_blocks_for(n, BLOCK), "{what}: 128 KiB blocks");
}

#[test]
fn four_streams_on_threads_of_their_own_share_one_byte_budget() {
    four_streams_share_one_byte_budget("-P 4 -n 10000000, a thread per stream", StreamWorkers::Off);
}

/// Found by this test: on the shared workers the total sometimes ended short of the budget's
/// whole blocks, mid-block (about 1 run in 25 on a 2-core host: 10066184 and 10027008 bytes
/// where the rule gives 10092544). The first stream to find the budget spent ended the test
/// while others still held blocks they had claimed, and stopped, a worker's stream finished at
/// most the block in progress. Now the budget counts the blocks claimed and not yet written,
/// and only the stream that finds it spent with none left out ends the test (`stream/budget.rs`).
#[test]
fn four_streams_on_two_shared_workers_share_one_byte_budget() {
    four_streams_share_one_byte_budget("-P 4 -n 10000000, two shared workers", StreamWorkers::Fixed(2));
}

#[test]
fn udp_every_datagram_is_received_or_counted_lost() {
    let flags = Flags::udp().bitrate(UDP_RATE).len(UDP_LEN).time(1);
    let totals = udp_exact(&run("-u -b 100M -l 1400 -t 1", &flags, defaults()), u64::from(UDP_LEN));
    assert!(totals.received > 0, "{totals:?}");
}

#[test]
fn udp_spends_a_block_budget_datagram_by_datagram() {
    // Each datagram is claimed from the -k budget before it is sent (stream/udp.rs); one the
    // kernel refused used its claim but no sequence number, so it is a sender drop, not loss.
    let k = 2000;
    let flags = Flags::udp().bitrate(UDP_RATE).len(UDP_LEN).blocks(k);
    let totals = udp_exact(&run("-u -b 100M -l 1400 -k 2000", &flags, defaults()), u64::from(UDP_LEN));
    assert_eq!(totals.sent + totals.sender_drops, k, "{totals:?}");
}
