//! The verdict's shape, and what the rules are given: one direction's figures from the test's
//! outcome, and each host's series (with its static facts).
//!
//! The JSON form is the contract the suite, the client's `-J` and the docs show:
//! `{"limit": id, "side": "client"|"server"|"path", "evidence": [...], "fix": [...], "also": [...]}`.

use serde::{Deserialize, Serialize};

use crate::host_sample::Series;

/// Stable ids of the limits (documented in docs/bottleneck.md; never renamed).
pub mod ids {
    /// A NIC's negotiated line rate.
    pub const LINK: &str = "link";
    /// A qdisc's rate (tbf, htb).
    pub const SHAPER: &str = "shaper";
    /// The USB bus under an adapter.
    pub const USB_BUS: &str = "usb-bus";
    /// Real retransmits or UDP loss on the path, with no queue filling on it.
    pub const PATH_LOSS: &str = "path-loss";
    /// A box between the hosts (a router, a switch, a modem) is the ceiling: no host limited
    /// the test, the rate held flat and round trips rose as its queue filled.
    pub const PATH_BOTTLENECK: &str = "path-bottleneck";
    /// The sender waited for the receiver's TCP window.
    pub const RECEIVER_WINDOW: &str = "receiver-window";
    /// The sender waited for its own send buffer.
    pub const SENDER_BUFFER: &str = "sender-buffer";
    /// A CPU of the receiver was saturated.
    pub const RECEIVER_CPU: &str = "receiver-cpu";
    /// A CPU of the sender was saturated.
    pub const SENDER_CPU: &str = "sender-cpu";
    /// The receiving socket dropped data (UDP buffer, TCP receive queue).
    pub const RECEIVER_SOCKET: &str = "receiver-socket";
    /// The NIC, its ring or the backlog dropped frames.
    pub const NIC_DROPS: &str = "nic-drops";
    /// The disk of a file phase.
    pub const DISK: &str = "disk";
    /// Nothing measured explains the rate.
    pub const UNKNOWN: &str = "unknown";
}

/// Where a limit sits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Side {
    /// The host running the client.
    Client,
    /// The host running the server.
    Server,
    /// Between them.
    Path,
}

/// One limit with the samples that show it and the change that would lift it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Limit {
    /// A stable id from [`ids`].
    pub limit: String,
    /// Where it sits.
    pub side: Side,
    /// What was measured, with figures.
    pub evidence: Vec<String>,
    /// Commands or settings that lift it, and how to verify.
    pub fix: Vec<String>,
    /// Ordering key (0–1): how completely this limit explains the rate. Not shown in text.
    #[serde(skip)]
    pub strength: f64,
}

impl Limit {
    /// The doctor's static findings that can explain this limit, so a verdict cites a finding
    /// only when the test's own evidence points at it: `rps-off` behind a CPU saturated by the
    /// network stack (not behind a CPU busy with the test's own copies), a USB or duplex finding
    /// behind a link or bus ceiling, the socket-buffer finding behind a window. A limit of the
    /// path, a shaper or the disk is explained by no finding of either host.
    pub fn findings_behind(&self) -> &'static [&'static str] {
        // The CPU rule says "RPS is off" only when the network stack's softirq held that CPU.
        let rps = self.evidence.iter().any(|e| e.starts_with("RPS is off"));
        match self.limit.as_str() {
            ids::SENDER_CPU | ids::RECEIVER_CPU if rps => &["rps-off"],
            ids::LINK => &["half-duplex", "speed-below-capability", "generic-usb-driver", "usb2-link", "high-speed"],
            ids::USB_BUS => &["usb2-link", "high-speed", "usb-bus-limit", "generic-usb-driver", "usb-protocol-errors"],
            ids::RECEIVER_WINDOW | ids::SENDER_BUFFER | ids::RECEIVER_SOCKET => &["socket-buffers"],
            ids::NIC_DROPS => &["small-rings", "rps-off", "firmware-missing", "usb-protocol-errors", "tx-timeouts"],
            ids::PATH_LOSS => &["link-flaps", "half-duplex", "usb-protocol-errors", "tx-timeouts", "firmware-missing"],
            _ => &[],
        }
    }
}

/// Retransmits split by what the DSACK counters say about them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RetransmitSplit {
    /// The sender's retransmits.
    pub total: u64,
    /// Of those, later reported by the receiver as duplicates (spurious: reordering or an
    /// early timer, not loss).
    pub spurious: u64,
    /// `total - spurious`: segments that were really lost.
    pub real: u64,
}

/// The verdict of one direction.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    /// `client→server` or `server→client`.
    pub direction: String,
    /// The strongest limit.
    #[serde(flatten)]
    pub main: Limit,
    /// Other limits that competed, strongest first.
    pub also: Vec<Limit>,
    /// Retransmits, real vs spurious (TCP senders only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retransmits: Option<RetransmitSplit>,
    /// Whether the far host's samples were seen (a wireperf server sends them; stock iperf3
    /// does not).
    pub far_side_seen: bool,
    /// What could not be checked, and why.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub not_checked: Vec<String>,
}

impl Verdict {
    /// A verdict of `main` alone for `direction`, with the far host seen and nothing else to
    /// say: what a recorded or made-up verdict starts from (tests, fixtures).
    pub fn of(direction: &str, main: Limit) -> Verdict {
        Verdict {
            direction: direction.into(),
            main,
            also: Vec::new(),
            retransmits: None,
            far_side_seen: true,
            not_checked: Vec::new(),
        }
    }
}

/// One direction of a finished test, as the outcome reports it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Direction {
    /// The client sends in this direction.
    pub client_sends: bool,
    /// UDP (else TCP).
    pub udp: bool,
    /// Seconds of the test.
    pub seconds: f64,
    /// Bytes the receiver got.
    pub received_bytes: u64,
    /// Receiver's rate, bit/s.
    pub bits_per_second: f64,
    /// TCP: the sender's retransmits.
    pub retransmits: Option<u64>,
    /// TCP: of `retransmits`, those the sender's own streams saw reported back as duplicates
    /// (TCP_INFO `dsack_dups`, summed): spurious. `None` when not reported.
    pub spurious_retransmits: Option<u64>,
    /// TCP sender's TCP_INFO: time with data in flight, µs (summed over streams).
    pub busy_us: Option<u64>,
    /// … time limited by the receiver's window, µs.
    pub rwnd_limited_us: Option<u64>,
    /// … time limited by its send buffer, µs.
    pub sndbuf_limited_us: Option<u64>,
    /// UDP: datagrams lost, as the receiver counts them.
    pub udp_lost: Option<u64>,
    /// UDP: datagrams the sender sent.
    pub udp_packets: Option<u64>,
    /// UDP: datagrams the receiving socket dropped (SO_RXQ_OVFL), when the receiver reports it.
    pub socket_drops: Option<u64>,
    /// UDP: the receiving socket had GRO on (`wireperf_receiver_socket_drops_unit` "packets"), so
    /// `socket_drops` (and `Udp.RcvbufErrors`) count coalesced packets: a lower bound on the
    /// datagrams the socket dropped, and the path's share of the loss only an upper bound.
    pub socket_drops_are_packets: bool,
    /// A file phase: the disk's own rate for this direction (read or write), bit/s.
    pub disk_bps: Option<f64>,
    /// The receiver's rate in each reporting interval, bit/s, in order (omitted ones left
    /// out): whether the rate held flat.
    pub interval_bps: Vec<f64>,
    /// Round trips idle and under this direction's load: whether a queue filled.
    pub round_trips: RoundTrips,
}

/// Round trips without and with the test's load, from the two sources that see them.
///
/// The latency probes (`--latency`, the suite) measure a separate flow's round trip before
/// the test and beside it: a queue the test fills delays them. The sender's TCP_INFO has the
/// flow's own minimum (the path's base) and its smoothed round trip sampled each interval: a
/// queue shows as the mean well above the minimum, even under BBR, whose short queue the
/// probes' medians can miss.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct RoundTrips {
    /// Probes before the load: median, ms.
    pub probe_idle_ms: Option<f64>,
    /// Probes under the load: median, ms.
    pub probe_loaded_ms: Option<f64>,
    /// Probes under the load: 99th percentile, ms.
    pub probe_loaded_p99_ms: Option<f64>,
    /// The delay the load added in this direction alone, ms (echo probes' server timestamps
    /// split the round trip; the clocks' offset cancels in loaded − idle).
    pub one_way_added_ms: Option<f64>,
    /// The round trips also crossed the other direction's load (a bidir test): without the
    /// one-way split neither they nor the sender's own round trip (its ACKs queue behind the
    /// other direction's data) say which direction's queue rose.
    pub shared_with_other_direction: bool,
    /// The sender's TCP_INFO: the smallest round trip its streams saw, µs.
    pub tcp_min_rtt_us: Option<u64>,
    /// The sender's TCP_INFO: the mean of its streams' smoothed round trips, µs.
    pub tcp_mean_rtt_us: Option<u64>,
}

impl Direction {
    /// `client→server` or `server→client`.
    pub fn label(&self) -> &'static str {
        if self.client_sends { "client→server" } else { "server→client" }
    }

    /// The sending and receiving sides.
    pub fn sender_receiver(&self) -> (Side, Side) {
        if self.client_sends { (Side::Client, Side::Server) } else { (Side::Server, Side::Client) }
    }
}

/// Both hosts' series; `None` when that host was not watched (a stock iperf3 peer).
#[derive(Debug, Clone, Copy, Default)]
pub struct Hosts<'a> {
    /// The client host.
    pub client: Option<&'a Series>,
    /// The server host.
    pub server: Option<&'a Series>,
}

impl<'a> Hosts<'a> {
    /// The series of `side` (`Path` has none).
    pub fn of(&self, side: Side) -> Option<&'a Series> {
        match side {
            Side::Client => self.client,
            Side::Server => self.server,
            Side::Path => None,
        }
    }
}

impl Side {
    /// `client`, `server`, `path`.
    pub fn as_str(self) -> &'static str {
        match self {
            Side::Client => "client",
            Side::Server => "server",
            Side::Path => "path",
        }
    }
}

/// A share as a whole percent in evidence lines (`0.42` → `42%`).
pub(crate) fn pct(x: f64) -> String {
    format!("{:.0}%", x * 100.0)
}

/// A found limit; the rules (`live_rules.rs`, `path_rule.rs`) build theirs with it.
pub(crate) fn limit(id: &str, side: Side, strength: f64, evidence: Vec<String>, fix: Vec<String>) -> Limit {
    Limit { limit: id.to_string(), side, evidence, fix, strength }
}
