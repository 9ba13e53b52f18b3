//! The `end` object: per-stream and summed totals, CPU, congestion control.

use serde::{Deserialize, Serialize};

/// Totals for one side of one stream, or a sum (the same keys; absent ones are `None`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Summary {
    /// Stream id (absent in sums).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub socket: Option<i32>,
    /// Always 0.
    pub start: f64,
    /// Elapsed seconds of this side.
    pub end: f64,
    /// Elapsed seconds of the local stream.
    pub seconds: f64,
    /// Bytes.
    pub bytes: u64,
    /// Rate.
    pub bits_per_second: f64,
    /// TCP sender: retransmits.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retransmits: Option<u64>,
    /// TCP sender (3.20+): reordering events the kernel saw (`tcpi_reord_seen`) at the end.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reorder: Option<u64>,
    /// TCP sender: largest congestion window seen, bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_snd_cwnd: Option<u64>,
    /// TCP sender: largest send window seen, bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_snd_wnd: Option<u64>,
    /// TCP sender: largest RTT, microseconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_rtt: Option<u64>,
    /// TCP sender: smallest RTT, microseconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_rtt: Option<u64>,
    /// TCP sender: mean RTT, microseconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mean_rtt: Option<u64>,
    /// UDP: jitter, ms.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub jitter_ms: Option<f64>,
    /// UDP: lost datagrams.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lost_packets: Option<i64>,
    /// UDP: datagrams.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub packets: Option<i64>,
    /// UDP: loss percentage.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lost_percent: Option<f64>,
    /// UDP: datagrams out of order.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub out_of_order: Option<i64>,
    /// wireperf: UDP datagrams dropped by the receiving socket (SO_RXQ_OVFL).
    #[serde(
        rename = "wireperf_receiver_socket_drops",
        alias = "receiver_socket_drops",
        skip_serializing_if = "Option::is_none"
    )]
    pub receiver_socket_drops: Option<u64>,
    /// wireperf: what one `wireperf_receiver_socket_drops` counts. With UDP GRO on, the
    /// receiving socket queues a coalesced packet whole and the kernel counts a dropped one once,
    /// however many datagrams it held: the figure is then packets, a lower bound on the datagrams
    /// the socket dropped (the loss itself is still counted per datagram).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wireperf_receiver_socket_drops_unit: Option<DropUnit>,
    /// wireperf: UDP duplicate datagrams.
    #[serde(rename = "wireperf_duplicates", alias = "duplicates", skip_serializing_if = "Option::is_none")]
    pub duplicates: Option<u64>,
    /// wireperf: UDP datagrams the sender could not send (ENOBUFS).
    #[serde(rename = "wireperf_sender_drops", alias = "sender_drops", skip_serializing_if = "Option::is_none")]
    pub sender_drops: Option<u64>,
    /// wireperf: UDP datagrams that arrived GRO-coalesced, without a receive time of their own,
    /// so the jitter beside it was measured on the other datagrams only (0: on every datagram).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wireperf_jitter_untimed: Option<u64>,
    /// wireperf: TCP sender, of its `retransmits`, those the receiver reported back as
    /// received twice (TCP_INFO `dsack_dups`): spurious (reordering, an early timer), not loss.
    /// Absent when the kernel does not report it (before Linux 4.19).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wireperf_spurious_retransmits: Option<u64>,
    /// wireperf: TCP sender, time with data in flight (TCP_INFO `busy_time`), µs.
    #[serde(rename = "wireperf_busy_time_us", alias = "busy_time_us", skip_serializing_if = "Option::is_none")]
    pub busy_time_us: Option<u64>,
    /// wireperf: TCP sender, time stalled by the receiver's window (`rwnd_limited`), µs.
    #[serde(rename = "wireperf_rwnd_limited_us", alias = "rwnd_limited_us", skip_serializing_if = "Option::is_none")]
    pub rwnd_limited_us: Option<u64>,
    /// wireperf: TCP sender, time stalled by its own send buffer (`sndbuf_limited`), µs.
    #[serde(
        rename = "wireperf_sndbuf_limited_us",
        alias = "sndbuf_limited_us",
        skip_serializing_if = "Option::is_none"
    )]
    pub sndbuf_limited_us: Option<u64>,
    /// wireperf: TCP sender, last delivery rate estimate (`delivery_rate`), bytes/s.
    #[serde(rename = "wireperf_delivery_rate", alias = "delivery_rate", skip_serializing_if = "Option::is_none")]
    pub delivery_rate: Option<u64>,
    /// The summarised direction is this host's sending direction.
    pub sender: bool,
}

/// What a receiving socket's drop counter counts (`wireperf_receiver_socket_drops_unit`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DropUnit {
    /// One per datagram: the socket had GRO off, so every datagram was queued on its own.
    Datagrams,
    /// One per queued packet: the socket had GRO on, and a dropped GRO-coalesced packet
    /// counts once for all its datagrams.
    Packets,
}

/// `-F` file transfer figures.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct DiskFile {
    /// Bytes sent from the file.
    pub sent: u64,
    /// Bytes written to the file.
    pub received: u64,
    /// File size.
    pub size: u64,
    /// Percent sent.
    pub percent_sent: u64,
    /// Percent received.
    pub percent_received: u64,
    /// File name.
    pub filename: String,
}

/// One entry of `end.streams`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct EndStream {
    /// TCP: the sending side.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sender: Option<Summary>,
    /// TCP: the receiving side.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub receiver: Option<Summary>,
    /// UDP: both sides in one object.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub udp: Option<Summary>,
    /// `-F`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diskfile: Option<DiskFile>,
    /// wireperf: UDP, the receiving side of this stream (`end` = receiver's elapsed time,
    /// `bytes` received, `packets` as the receiver counted them, its jitter and loss).
    /// iperf3's single `udp` object carries the sender's bytes and time, but the text
    /// `receiver` line prints the receiver's, so the text renderer needs this.
    #[serde(rename = "wireperf_udp_receiver", alias = "udp_receiver", skip_serializing_if = "Option::is_none")]
    pub udp_receiver: Option<Summary>,
    /// wireperf: CPU time of this stream's own thread (`RUSAGE_THREAD`), local side only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wireperf_cpu: Option<StreamCpu>,
    /// wireperf: how this stream moved its bytes (write/sendfile/MSG_ZEROCOPY, read/MSG_TRUNC)
    /// and why a requested zero-copy path was not used, local side only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wireperf_io: Option<StreamIo>,
}

/// wireperf's per-stream CPU cost: the stream thread's own user and system time, or, for a
/// stream on a shared worker, its share (by bytes moved) of that worker thread's time. Misses
/// softirq work the kernel does for the stream in other contexts (ksoftirqd, other CPUs).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct StreamCpu {
    /// User-mode CPU seconds of the stream thread.
    pub user_seconds: f64,
    /// Kernel CPU seconds of the stream thread.
    pub system_seconds: f64,
    /// Bytes this stream moved (whole run, omit included) per CPU second of its thread.
    pub bytes_per_cpu_second: f64,
    /// The stream ran on a shared worker, dealt to one with this many streams (itself
    /// included): the times above are its share of the time of the worker threads it ran on,
    /// period by period in proportion to the bytes each stream moved. Absent for a thread of
    /// its own.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shared_by: Option<u32>,
    /// On a shared worker: how often the stream was handed to another worker of its direction
    /// to even out their load (0: it stayed where it was dealt). Absent for a thread of its own.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub worker_moves: Option<u32>,
}

/// wireperf's per-stream I/O path.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct StreamIo {
    /// `send` or `receive`.
    pub direction: String,
    /// The path asked for: `write`, `sendfile`, `msg_zerocopy`, `read`, `msg_trunc`.
    pub requested: String,
    /// The path used at the end of the stream (differs after a fallback).
    pub used: String,
    /// Why the requested path was abandoned.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fallback: Option<String>,
    /// `MSG_ZEROCOPY`: sends whose completion was reaped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub zerocopy_completed: Option<u64>,
    /// `MSG_ZEROCOPY`: of those, sends the kernel copied anyway.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub zerocopy_copied: Option<u64>,
    /// Receive side: the `SO_RCVLOWAT` the loop set while the stream was fast (absent if the
    /// stream never was), so a reader can tell whole-block wake-ups were used.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub low_water_bytes: Option<u64>,
    /// Send side: the `TCP_NOTSENT_LOWAT` the sender set because the path is host-local
    /// (loopback or an unshaped veth; absent otherwise): its unsent queue was held that short.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub notsent_lowat_bytes: Option<u64>,
}

/// CPU use of both hosts over the test, percent.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CpuUtilization {
    /// Local user + system.
    pub host_total: f64,
    /// Local user.
    pub host_user: f64,
    /// Local system.
    pub host_system: f64,
    /// Remote user + system.
    pub remote_total: f64,
    /// Remote user.
    pub remote_user: f64,
    /// Remote system.
    pub remote_system: f64,
}

/// The `end` object.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct End {
    /// Per-stream totals.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub streams: Vec<EndStream>,
    /// UDP only: mixed sender/receiver sum.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sum: Option<Summary>,
    /// Sum of the sending side (first direction).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sum_sent: Option<Summary>,
    /// Sum of the receiving side (first direction).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sum_received: Option<Summary>,
    /// `--bidir` UDP: mixed sum of the reverse direction.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sum_bidir_reverse: Option<Summary>,
    /// `--bidir`: sending side of the reverse direction.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sum_sent_bidir_reverse: Option<Summary>,
    /// `--bidir`: receiving side of the reverse direction.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sum_received_bidir_reverse: Option<Summary>,
    /// CPU use.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_utilization_percent: Option<CpuUtilization>,
    /// Congestion control of the sender.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sender_tcp_congestion: Option<String>,
    /// Congestion control of the receiver.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub receiver_tcp_congestion: Option<String>,
}
