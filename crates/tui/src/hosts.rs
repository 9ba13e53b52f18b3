//! Figures about the two hosts that the engine's events do not carry: each host's CPU and the
//! retransmits split into real and spurious.
//!
//! The view does not read the hosts itself: a [`HostProbe`] (the binary's, built on the
//! bottleneck finder's watch) is asked once per interval and once at the end. The far host's
//! figures exist only when the server is a wireperf that returned its watch samples with the
//! results, so they arrive at the end of the test; a stock iperf3 server sends none
//! ([`FarHost::NotSeen`]).

use serde_json::Value;

/// A host's CPU over a span of time.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct HostCpu {
    /// The whole host (every process, interrupts included), percent of all its cores.
    pub busy_pct: f64,
    /// The wireperf process on it, percent of one core (`None`: not read).
    pub process_pct: Option<f64>,
}

/// What is known of the far host.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum FarHost {
    /// The test is still running: a wireperf server sends its samples with the results.
    #[default]
    Waiting,
    /// A wireperf server's whole-test figures.
    Seen(HostCpu),
    /// The results came without samples: not a wireperf server (or it could not watch).
    NotSeen,
}

/// Retransmits split by the DSACK counters: segments the receiver got twice were spurious.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RetransmitSplit {
    /// Really lost (retransmits minus spurious).
    pub real: u64,
    /// Reported back as duplicates: reordering or an early timer, not loss.
    pub spurious: u64,
}

/// One reading of the hosts.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct HostsNow {
    /// This host over the interval that just ended.
    pub local: Option<HostCpu>,
    /// The retransmits so far, split (`None`: no DSACK counter seen on either host).
    pub split: Option<RetransmitSplit>,
}

/// Reads the hosts for the view.
pub trait HostProbe: Send {
    /// At the end of an interval (and of the test): this host since the last call, and the
    /// split of `retransmits` (the sender's count so far; `client_sends`: which host sends).
    fn sample(&mut self, retransmits: Option<u64>, client_sends: bool) -> HostsNow;
    /// The server's `wireperf_watch` reply, before the test's end; `None` when it is not one.
    fn far(&mut self, watch: &Value) -> Option<HostCpu>;
}
