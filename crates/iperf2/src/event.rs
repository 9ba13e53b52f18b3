//! What the engine reports while it runs. Stream threads send these to the one output thread,
//! which renders text, CSV or JSON; numbers are computed once, in the stream, and every
//! renderer prints the same values.

use crate::wire::ServerReport;
use std::net::SocketAddr;

/// Direction of a stream as seen from this host.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dir {
    /// This host writes.
    Send,
    /// This host reads.
    Recv,
}

/// How a connection came about, for the `(reverse)`/`(full-duplex)` tags and `[ *1]` ids.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tag {
    /// A plain stream.
    Plain,
    /// Data flows against the connection's direction (server sends), or a `-d`/`-r`
    /// connect-back.
    Reverse,
    /// Both directions on one socket.
    FullDuplex,
}

/// A new data connection.
#[derive(Clone, Debug)]
pub struct ConnInfo {
    /// Stream number, as iperf 2 prints it in brackets.
    pub id: u32,
    /// This end.
    pub local: SocketAddr,
    /// The other end.
    pub peer: SocketAddr,
    /// How it came about.
    pub tag: Tag,
    /// The peer's version, when its header or ack told us.
    pub peer_version: Option<String>,
    /// UDP or TCP.
    pub udp: bool,
}

/// Sum groups: samples with the same key are summed into a `[SUM]` line once `size` finals
/// have arrived (size 1 prints no sum).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Group {
    /// Identity of the group.
    pub key: u64,
    /// Members.
    pub size: u32,
}

/// TCP_INFO figures of a sending socket.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TcpSnap {
    /// Retransmits in this interval.
    pub retrans: u64,
    /// Congestion window, bytes.
    pub cwnd: u64,
    /// Smoothed RTT, µs.
    pub rtt_us: u64,
    /// RTT variance, µs.
    pub rttvar_us: u64,
}

/// Receiver-side UDP figures.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct UdpFigures {
    /// Jitter, ms.
    pub jitter_ms: f64,
    /// Lost datagrams.
    pub lost: i64,
    /// Expected datagrams.
    pub total: i64,
    /// Out of order.
    pub out_of_order: i64,
    /// Datagrams received.
    pub received: u64,
    /// One-way latency avg/min/max/stdev, ms (meaningful only with synced clocks).
    pub latency_ms: Option<[f64; 4]>,
}

/// Figures for one stream over one interval, or its whole run when `is_final`.
#[derive(Clone, Debug)]
pub struct Sample {
    /// Stream.
    pub id: u32,
    /// Direction.
    pub dir: Dir,
    /// Tag of the stream (for the id column).
    pub tag: Tag,
    /// Sum group.
    pub group: Group,
    /// Seconds since the stream started.
    pub start: f64,
    /// End of the span.
    pub end: f64,
    /// Bytes moved.
    pub bytes: u64,
    /// Writes or reads.
    pub ops: u64,
    /// Failed writes.
    pub errs: u64,
    /// Reads by size in eight bins of `len/8` (iperf 2's `Reads=Dist`).
    pub hist: [u64; 8],
    /// Sender TCP_INFO.
    pub tcp: Option<TcpSnap>,
    /// Receiver UDP figures.
    pub udp: Option<UdpFigures>,
    /// The whole run rather than an interval.
    pub is_final: bool,
}

/// Something to render.
#[derive(Clone, Debug)]
pub enum Event {
    /// A data connection is up.
    Connected(ConnInfo),
    /// Figures.
    Sample(Sample),
    /// UDP client: datagrams sent, after its final line.
    UdpSent {
        /// Stream.
        id: u32,
        /// Count, including the FIN.
        datagrams: u64,
    },
    /// UDP client: the server's report arrived.
    ServerReport {
        /// Stream.
        id: u32,
        /// The report.
        report: ServerReport,
    },
    /// Something the user should know (printed to stderr in text mode).
    Warning(String),
}
