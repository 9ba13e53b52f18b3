//! The test parameters the client sends after PARAM_EXCHANGE.
//!
//! Stock servers test flag keys for *presence* (3.18+: presence of a boolean), so a flag is
//! emitted only when it is on, never as `false`. Keys are emitted in the order iperf3 3.22
//! emits them (3.12's order with the newer keys in their places), and unknown keys are ignored
//! on input, as every stock server does.
//!
//! Reading follows 3.22's `get_parameters`: every key has a JSON type (`tcp`, `reverse`, …
//! booleans; `get_server_output`, `zerocopy`, … numbers; `title`, … strings) and a value of
//! another type is ignored, as 3.18+ ignore it (with a warning), so a sender must get the types
//! right or silently lose the setting. Each range check answers with 3.22's `i_errno`.
//!
//! The types and limits are here; writing is in `encode`, reading in `decode`.

use crate::IperfErrno;

mod decode;
mod encode;

/// The transport under test.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Protocol {
    /// TCP (iperf3's default).
    #[default]
    Tcp,
    /// UDP (`-u`).
    Udp,
}

impl Protocol {
    /// The name iperf3 prints (`TCP`, `UDP`).
    pub fn name(self) -> &'static str {
        match self {
            Protocol::Tcp => "TCP",
            Protocol::Udp => "UDP",
        }
    }
}

/// Default TCP block size (`-l`): 128 KiB.
pub const DEFAULT_TCP_BLKSIZE: u32 = 128 * 1024;
/// Default UDP target rate when `-b` is absent: 1 Mbit/s as iperf3 defines it (1024 * 1024).
pub const DEFAULT_UDP_RATE: u64 = 1024 * 1024;
/// iperf3's UDP datagram size when neither `-l` nor the MSS gives one (`DEFAULT_UDP_BLKSIZE`).
pub const DEFAULT_UDP_DATAGRAM: u32 = 1460;

/// Every parameter a client can send, typed.
#[derive(Clone, Debug, PartialEq)]
pub struct TestParams {
    /// TCP or UDP.
    pub protocol: Protocol,
    /// Seconds to omit at the start (`-O`).
    pub omit: u32,
    /// Test length in seconds (`-t`); 0 when `-n`/`-k` end the test.
    pub time: u32,
    /// Bytes to send (`-n`), 0 = unset.
    pub num: u64,
    /// Blocks to send (`-k`), 0 = unset.
    pub blockcount: u64,
    /// TCP MSS (`-M`).
    pub mss: Option<u32>,
    /// TCP_NODELAY (`-N`).
    pub nodelay: bool,
    /// Streams per direction (`-P`).
    pub parallel: u32,
    /// Server sends (`-R`).
    pub reverse: bool,
    /// Both directions (`--bidir`).
    pub bidirectional: bool,
    /// Socket buffer size (`-w`).
    pub window: Option<u32>,
    /// Block / datagram size (`-l`).
    pub len: u32,
    /// Target rate in bit/s per stream (`-b`), `None` or 0 = unlimited.
    pub bandwidth: Option<u64>,
    /// Fair-queue pacing rate in bit/s (`--fq-rate`).
    pub fqrate: Option<u64>,
    /// Pacing timer in microseconds (iperf3 always sends 1000).
    pub pacing_timer: Option<u32>,
    /// Datagrams per pacing burst (`-b rate/burst`).
    pub burst: Option<u32>,
    /// IP TOS byte (`-S`, `--dscp`).
    pub tos: Option<i32>,
    /// IPv6 flow label (`-L`).
    pub flowlabel: Option<i32>,
    /// The CPU the server pins the test to (`-A N,M`: M), 0..=1024; sent only when given.
    pub server_affinity: Option<u32>,
    /// Title (`-T`).
    pub title: Option<String>,
    /// Extra data (`--extra-data`).
    pub extra_data: Option<String>,
    /// Congestion control algorithm (`-C`).
    pub congestion: Option<String>,
    /// Congestion control in use, when known.
    pub congestion_used: Option<String>,
    /// The client wants the server's output (`--get-server-output`).
    pub get_server_output: bool,
    /// 64-bit UDP sequence numbers (`--udp-counters-64bit`).
    pub udp_counters_64bit: bool,
    /// Payload is `0123456789...` rather than random (`--repeating-payload`).
    pub repeating_payload: bool,
    /// Zero-copy send (`-Z`).
    pub zerocopy: bool,
    /// Don't fragment (`--dont-fragment`).
    pub dont_fragment: bool,
    /// Authentication token (`--username` + RSA key).
    pub authtoken: Option<String>,
    /// Receiver discards payload without copying (`--skip-rx-copy`, 3.19+).
    pub skip_rx_copy: bool,
    /// Multipath TCP sockets (`-m`, 3.19+).
    pub mptcp: bool,
    /// UDP GSO/GRO (`--gsro`, 3.21+): sent with every UDP test by 3.21+ clients.
    pub offload: UdpOffload,
    /// The client's version string.
    pub client_version: String,
    /// wireperf extension (`wireperf_watch`): the client asks a wireperf server to watch its
    /// host during the test and return the samples with its results (`--why`). Stock servers
    /// ignore the key.
    pub wireperf_watch: bool,
    /// wireperf extension (`wireperf_latency`): the client asks a wireperf server for latency
    /// echo ports (`--latency`); the server answers with a `LatencyOffer` before
    /// CREATE_STREAMS. Stock servers ignore the key.
    pub wireperf_latency: bool,
}

impl Default for TestParams {
    fn default() -> Self {
        Self {
            protocol: Protocol::Tcp,
            omit: 0,
            time: 10,
            num: 0,
            blockcount: 0,
            mss: None,
            nodelay: false,
            parallel: 1,
            reverse: false,
            bidirectional: false,
            window: None,
            len: DEFAULT_TCP_BLKSIZE,
            bandwidth: None,
            fqrate: None,
            pacing_timer: Some(1000),
            burst: None,
            tos: None,
            flowlabel: None,
            server_affinity: None,
            title: None,
            extra_data: None,
            congestion: None,
            congestion_used: None,
            get_server_output: false,
            udp_counters_64bit: false,
            repeating_payload: false,
            zerocopy: false,
            dont_fragment: false,
            wireperf_watch: false,
            wireperf_latency: false,
            authtoken: None,
            skip_rx_copy: false,
            mptcp: false,
            offload: UdpOffload::default(),
            client_version: crate::IPERF_COMPAT_VERSION.to_string(),
        }
    }
}

/// The UDP segmentation/receive-offload keys (3.21+). Off is `gso 0, gso_dg_size 0,
/// gso_bf_size 65507, gro 0, gro_bf_size 65507`, exactly what a 3.22 client sends without
/// `--gsro`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UdpOffload {
    /// The sender uses UDP GSO.
    pub gso: bool,
    /// Datagram size within a GSO buffer.
    pub gso_dg_size: u32,
    /// GSO buffer size (a whole number of datagrams).
    pub gso_bf_size: u32,
    /// The receiver uses UDP GRO.
    pub gro: bool,
    /// GRO buffer size.
    pub gro_bf_size: u32,
}

impl Default for UdpOffload {
    fn default() -> Self {
        Self {
            gso: false,
            gso_dg_size: 0,
            gso_bf_size: limits::MAX_UDP_BLOCK,
            gro: false,
            gro_bf_size: limits::MAX_UDP_BLOCK,
        }
    }
}

impl UdpOffload {
    /// What a 3.22 client sends with `--gsro` for `-l len` (0: not given, the size is picked
    /// later from the MSS; 3.22 then names its 1460-byte default and keeps the whole buffer).
    pub fn requested(len: u32) -> Self {
        if len == 0 {
            Self { gso_dg_size: DEFAULT_UDP_DATAGRAM, ..Self::on(limits::MAX_UDP_BLOCK) }
        } else {
            Self::on(len)
        }
    }

    /// What a 3.22 client sends with `--gsro` for datagrams of `len` bytes.
    pub fn on(len: u32) -> Self {
        let len = len.max(1);
        let buf = (limits::MAX_UDP_BLOCK / len).max(1) * len;
        Self { gso: true, gso_dg_size: len, gso_bf_size: buf, gro: true, gro_bf_size: limits::MAX_UDP_BLOCK }
    }
}

/// Why a parameters message was refused.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ParamsError {
    /// The message is not a JSON object, or names no protocol. Every client names one; 3.22
    /// would run such a document as TCP with its own defaults, wireperf refuses it.
    #[error("parameters name no supported protocol (need \"tcp\" or \"udp\")")]
    NoProtocol,
    /// The client asked for SCTP, which wireperf does not implement.
    #[error("the client asked for SCTP, which this server does not support")]
    Sctp,
    /// A value is outside the range 3.22 accepts.
    #[error("parameter {key} out of range: {value}")]
    OutOfRange {
        /// The key.
        key: &'static str,
        /// The value as received.
        value: String,
        /// The code a 3.22 server answers with.
        i_errno: IperfErrno,
    },
}

impl ParamsError {
    /// The `i_errno` a 3.22 server sends for this refusal.
    pub fn errno(&self) -> IperfErrno {
        match self {
            ParamsError::NoProtocol => IperfErrno::RECVPARAMS,
            ParamsError::Sctp => IperfErrno::NOSCTP,
            ParamsError::OutOfRange { i_errno, .. } => *i_errno,
        }
    }
}

/// Limits stock clients enforce on their own options; a server applies them to what it is sent
/// so a hostile client cannot ask for a billion streams or a 4 GiB buffer.
pub mod limits {
    /// Longest test, seconds (iperf3 MAX_TIME).
    pub const MAX_TIME: u32 = 86_400;
    /// Longest omit period, seconds.
    pub const MAX_OMIT: u32 = 600;
    /// Most streams per direction.
    pub const MAX_STREAMS: u32 = 128;
    /// Largest TCP block.
    pub const MAX_TCP_BLOCK: u32 = 1024 * 1024;
    /// Largest UDP datagram.
    pub const MAX_UDP_BLOCK: u32 = 65_507;
    /// Smallest UDP datagram.
    pub const MIN_UDP_BLOCK: u32 = 16;
    /// Largest socket buffer.
    pub const MAX_WINDOW: u32 = 512 * 1024 * 1024;
    /// Largest MSS (3.21+; 3.12 allowed 9216).
    pub const MAX_MSS: u32 = 32_767;
    /// Largest pacing burst.
    pub const MAX_BURST: u32 = 1000;
    /// Largest IPv6 flow label.
    pub const MAX_FLOWLABEL: u32 = 0xfffff;
    /// Largest CPU number `-A` and `server_affinity` take.
    pub const MAX_CPU: u32 = 1024;
    /// Largest parameters message a 3.22 server reads (`MAX_PARAMS_JSON_STRING`).
    pub const MAX_PARAMS_JSON: u32 = 8 * 1024;
}

impl TestParams {
    /// Total streams the client opens: `parallel`, doubled with `--bidir`.
    pub fn total_streams(&self) -> u32 {
        if self.bidirectional { self.parallel * 2 } else { self.parallel }
    }
}

#[cfg(test)]
mod tests;
