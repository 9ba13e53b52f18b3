//! The stock iperf3 versions every interop test runs against, and what differs between them
//! that a test must know: how exactly a stock sender counts what it sent.

use crate::support::harness::{iperf3, stock_iperf3};
use std::path::PathBuf;

/// A stock iperf3 peer: Debian 12's 3.12, trixie's 3.18 or sid's 3.22.
#[derive(Clone, Debug)]
pub struct Peer {
    pub version: &'static str,
    pub bin: PathBuf,
}

impl Peer {
    pub fn new(version: &'static str) -> Self {
        let bin = if version == "3.12" { iperf3() } else { stock_iperf3(version) };
        Peer { version, bin }
    }

    fn minor(&self) -> u32 {
        self.version.split('.').nth(1).and_then(|m| m.parse().ok()).unwrap_or(0)
    }

    /// 3.16+ send from one thread per stream and end them with `pthread_cancel` (asynchronous
    /// until 3.20, at the next cancellation point from 3.21). A write the kernel took just
    /// before the cancel, or the first part of a block whose rest was still being written,
    /// is never added to the stream's total. So such a sender reports up to one block per
    /// stream less than it put on the wire; 3.12's single thread counts every write.
    pub fn sender_undercount_limit(&self, streams: u64, blksize: u64) -> u64 {
        if self.minor() >= 16 { streams * blksize } else { 0 }
    }

    /// Asserts what a wireperf receiver's count must be against this peer as sender: every
    /// byte that arrived, which is the sender's figure for 3.12 and between it and one block
    /// per stream more for 3.16+.
    pub fn assert_receiver_count(&self, received: u64, sent: u64, streams: u64, blksize: u64, what: &str) {
        let slack = self.sender_undercount_limit(streams, blksize);
        assert!(
            received >= sent && received - sent <= slack,
            "{what} vs iperf3 {}: wireperf received {received}, the stock sender reported {sent} \
             (allowed: up to {slack} more)",
            self.version
        );
    }
}

/// Turns each named `fn name(peer: &Peer)` into one test per stock version, in modules
/// `iperf3_3_12`, `iperf3_3_18` and `iperf3_3_22` (so `-E 'test(/3_22/)'` picks a version).
macro_rules! per_peer {
    ($($name:ident),* $(,)?) => {
        mod iperf3_3_12 { $( #[test] fn $name() { super::$name(&crate::support::peers::Peer::new("3.12")) } )* }
        mod iperf3_3_18 { $( #[test] fn $name() { super::$name(&crate::support::peers::Peer::new("3.18")) } )* }
        mod iperf3_3_22 { $( #[test] fn $name() { super::$name(&crate::support::peers::Peer::new("3.22")) } )* }
    };
}
pub(crate) use per_peer;
