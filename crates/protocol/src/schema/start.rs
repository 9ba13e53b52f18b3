//! The `start` object: connections, parameters, environment.

use serde::{Deserialize, Serialize};

/// One data connection.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Connected {
    /// The stream id iperf3 prints in brackets (a socket number there; wireperf numbers
    /// streams the same way so outputs look alike).
    pub socket: i32,
    /// Local address.
    pub local_host: String,
    /// Local port.
    pub local_port: u16,
    /// Remote address.
    pub remote_host: String,
    /// Remote port.
    pub remote_port: u16,
}

/// A host and port pair.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct HostPort {
    /// Host as typed by the user (client) or the peer's address (server).
    pub host: String,
    /// Port.
    pub port: u16,
}

/// When the test started.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Timestamp {
    /// RFC 1123 time in GMT, e.g. `Sun, 29 Nov 2026 18:00:41 GMT`.
    pub time: String,
    /// Unix seconds.
    pub timesecs: i64,
    /// Unix milliseconds (3.20+; absent in documents read from older peers).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timemillisecs: Option<i64>,
}

/// `start.test_start`: the parameters as the test ran them. The 3.20+ keys are options so
/// that a document read from an older peer is written back as it was.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TestStart {
    /// `TCP` or `UDP`.
    pub protocol: String,
    /// Streams per direction.
    pub num_streams: u32,
    /// Block size.
    pub blksize: u32,
    /// Omit seconds.
    pub omit: u32,
    /// Test seconds.
    pub duration: u32,
    /// `-n` bytes.
    pub bytes: u64,
    /// `-k` blocks.
    pub blocks: u64,
    /// 1 with `-R`.
    pub reverse: i32,
    /// TOS byte.
    pub tos: i32,
    /// Target rate, bit/s.
    pub target_bitrate: u64,
    /// 1 with `--bidir` (3.20+).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bidir: Option<i32>,
    /// `--fq-rate`, bit/s (3.20+).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fqrate: Option<u64>,
    /// Report interval, seconds (3.20+).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interval: Option<f64>,
    /// 1 with UDP GSO (3.21+).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gso: Option<i32>,
    /// 1 with UDP GRO (3.21+).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gro: Option<i32>,
}

/// The `start` object.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Start {
    /// Data connections in creation order.
    pub connected: Vec<Connected>,
    /// `iperf 3.12`-style version line (wireperf prints its own name and version).
    pub version: String,
    /// uname-style system line.
    pub system_info: String,
    /// Start time (absent in error documents).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<Timestamp>,
    /// Client: the server as the user named it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub connecting_to: Option<HostPort>,
    /// Server: the client's control connection.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub accepted_connection: Option<HostPort>,
    /// Session cookie.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cookie: Option<String>,
    /// TCP: the control connection's MSS when `-M` was not given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tcp_mss_default: Option<u32>,
    /// TCP: the `-M` value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tcp_mss: Option<u32>,
    /// Target rate, bit/s.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target_bitrate: Option<u64>,
    /// `--fq-rate`, bit/s (3.20+; 0 when unset).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fq_rate: Option<u64>,
    /// `-w` value (0 = not set).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sock_bufsize: Option<u64>,
    /// SO_SNDBUF as the kernel reports it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sndbuf_actual: Option<u64>,
    /// SO_RCVBUF as the kernel reports it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rcvbuf_actual: Option<u64>,
    /// Parameters.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub test_start: Option<TestStart>,
}
