//! The `intervals` array: per-stream and summed figures every `-i` seconds.

use serde::{Deserialize, Serialize};

/// One stream in one interval.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct IntervalStream {
    /// Stream id.
    pub socket: i32,
    /// Seconds since the stream started (or since omit ended).
    pub start: f64,
    /// End of the interval.
    pub end: f64,
    /// Length of the interval.
    pub seconds: f64,
    /// Bytes moved in the interval.
    pub bytes: u64,
    /// Rate in the interval.
    pub bits_per_second: f64,
    /// TCP sender: retransmits in the interval.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retransmits: Option<u64>,
    /// TCP sender: congestion window, bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub snd_cwnd: Option<u64>,
    /// TCP sender: peer's receive window, bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub snd_wnd: Option<u64>,
    /// TCP sender: smoothed RTT, microseconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rtt: Option<u64>,
    /// TCP sender: RTT variance, microseconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rttvar: Option<u64>,
    /// TCP sender: path MTU.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pmtu: Option<u64>,
    /// TCP sender (3.20+): reordering events seen so far (`tcpi_reord_seen`, cumulative as
    /// in iperf3).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reorder: Option<u64>,
    /// UDP receiver: jitter, ms.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub jitter_ms: Option<f64>,
    /// UDP receiver: datagrams lost.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lost_packets: Option<i64>,
    /// UDP: datagrams sent / expected.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub packets: Option<i64>,
    /// UDP receiver: loss percentage.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lost_percent: Option<f64>,
    /// wireperf UDP receiver: datagrams of this interval that arrived GRO-coalesced without a
    /// receive time of their own, so `jitter_ms` was measured without them (0: all timed).
    /// Absent from stock iperf3, which never says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wireperf_jitter_untimed: Option<u64>,
    /// Inside the `-O` period.
    pub omitted: bool,
    /// This host sends on this stream.
    pub sender: bool,
}

/// The sum over streams of one direction in one interval (same keys minus the per-stream
/// TCP_INFO figures).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct IntervalSum {
    /// Start.
    pub start: f64,
    /// End.
    pub end: f64,
    /// Length.
    pub seconds: f64,
    /// Bytes.
    pub bytes: u64,
    /// Rate.
    pub bits_per_second: f64,
    /// TCP sender: retransmits.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retransmits: Option<u64>,
    /// UDP receiver: mean jitter, ms.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub jitter_ms: Option<f64>,
    /// UDP receiver: lost.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lost_packets: Option<i64>,
    /// UDP: datagrams.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub packets: Option<i64>,
    /// UDP receiver: loss percentage.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lost_percent: Option<f64>,
    /// wireperf UDP receiver: the streams' untimed datagrams in this interval, summed (see
    /// [`IntervalStream::wireperf_jitter_untimed`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wireperf_jitter_untimed: Option<u64>,
    /// Inside the `-O` period.
    pub omitted: bool,
    /// The summed direction is this host's sending direction.
    pub sender: bool,
}

/// One reporting interval.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Interval {
    /// Every stream (bidir: local sending streams first on the client).
    pub streams: Vec<IntervalStream>,
    /// Sum of the streams of the first direction.
    pub sum: IntervalSum,
    /// `--bidir`: sum of the other direction.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sum_bidir_reverse: Option<IntervalSum>,
}

impl IntervalStream {
    /// True when nothing is known beyond the defaults (used to skip empty trailing intervals).
    pub fn is_empty(&self) -> bool {
        self.bytes == 0
    }
}
