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

use crate::IperfErrno;
use crate::json_num::{as_i64, as_u64};
use serde_json::{Map, Value, json};
use std::collections::HashMap;

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
    /// Encodes the parameters as the JSON object a stock client sends.
    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        match self.protocol {
            Protocol::Tcp => m.insert("tcp".into(), json!(true)),
            Protocol::Udp => m.insert("udp".into(), json!(true)),
        };
        m.insert("omit".into(), json!(self.omit));
        if let Some(cpu) = self.server_affinity {
            m.insert("server_affinity".into(), json!(cpu));
        }
        m.insert("time".into(), json!(self.time));
        m.insert("num".into(), json!(self.num));
        m.insert("blockcount".into(), json!(self.blockcount));
        if let Some(mss) = self.mss {
            m.insert("MSS".into(), json!(mss));
        }
        if self.nodelay {
            m.insert("nodelay".into(), json!(true));
        }
        m.insert("parallel".into(), json!(self.parallel));
        if self.reverse {
            m.insert("reverse".into(), json!(true));
        }
        if self.bidirectional {
            m.insert("bidirectional".into(), json!(true));
        }
        if self.mptcp {
            m.insert("mptcp".into(), json!(true));
        }
        if let Some(w) = self.window {
            m.insert("window".into(), json!(w));
        }
        m.insert("len".into(), json!(self.len));
        if let Some(b) = self.bandwidth.filter(|&b| b != 0) {
            m.insert("bandwidth".into(), json!(b));
        }
        if let Some(f) = self.fqrate.filter(|&f| f != 0) {
            m.insert("fqrate".into(), json!(f));
        }
        if let Some(p) = self.pacing_timer.filter(|&p| p != 0) {
            m.insert("pacing_timer".into(), json!(p));
        }
        if let Some(b) = self.burst.filter(|&b| b != 0) {
            m.insert("burst".into(), json!(b));
        }
        if self.protocol == Protocol::Udp {
            let o = &self.offload;
            m.insert("gso".into(), json!(u8::from(o.gso)));
            m.insert("gso_dg_size".into(), json!(o.gso_dg_size));
            m.insert("gso_bf_size".into(), json!(o.gso_bf_size));
            m.insert("gro".into(), json!(u8::from(o.gro)));
            m.insert("gro_bf_size".into(), json!(o.gro_bf_size));
        }
        if let Some(t) = self.tos.filter(|&t| t != 0) {
            m.insert("TOS".into(), json!(t));
        }
        if let Some(f) = self.flowlabel.filter(|&f| f != 0) {
            m.insert("flowlabel".into(), json!(f));
        }
        for (key, val) in [
            ("title", &self.title),
            ("extra_data", &self.extra_data),
            ("congestion", &self.congestion),
            ("congestion_used", &self.congestion_used),
        ] {
            if let Some(v) = val {
                m.insert(key.into(), json!(v));
            }
        }
        for (key, on) in [
            ("get_server_output", self.get_server_output),
            ("udp_counters_64bit", self.udp_counters_64bit),
            ("repeating_payload", self.repeating_payload),
            ("zerocopy", self.zerocopy),
            ("dont_fragment", self.dont_fragment),
            ("wireperf_watch", self.wireperf_watch),
            ("wireperf_latency", self.wireperf_latency),
        ] {
            if on {
                m.insert(key.into(), json!(1));
            }
        }
        if let Some(t) = &self.authtoken {
            m.insert("authtoken".into(), json!(t));
        }
        if self.skip_rx_copy {
            m.insert("skip_rx_copy".into(), json!(1));
        }
        m.insert("client_version".into(), json!(self.client_version));
        Value::Object(m)
    }

    /// Reads a parameters object the way a 3.22 server does, range checks included.
    ///
    /// Key lookup is case-insensitive (cJSON's `GetObjectItem` is). A flag is on when its key
    /// is present with the right type (a boolean, even `false`, for `reverse`; a number for
    /// `get_server_output`); a value of the wrong type reads as absent.
    pub fn from_json(v: &Value) -> Result<Self, ParamsError> {
        let obj = v.as_object().ok_or(ParamsError::NoProtocol)?;
        let keys: HashMap<String, &Value> = obj.iter().map(|(k, v)| (k.to_ascii_lowercase(), v)).collect();
        let get = |k: &str| keys.get(k).copied();
        let boolean = |k: &str| get(k).is_some_and(Value::is_boolean);
        let number = |k: &str| get(k).filter(|v| v.is_number());
        let nonzero = |k: &str| number(k).and_then(as_i64).is_some_and(|n| n != 0);
        let string = |k: &str| get(k).and_then(Value::as_str).map(str::to_owned);
        // 3.22's check for one numeric key: None when absent (or not a number).
        let ranged = |k: &'static str, lo: i64, hi: i64, i_errno: IperfErrno| -> Result<Option<i64>, ParamsError> {
            match number(k).and_then(as_i64) {
                None => Ok(None),
                Some(x) if (lo..=hi).contains(&x) => Ok(Some(x)),
                Some(x) => Err(ParamsError::OutOfRange { key: k, value: x.to_string(), i_errno }),
            }
        };
        let small = |k: &'static str, lo: u32, hi: u32, e: IperfErrno| -> Result<Option<u32>, ParamsError> {
            Ok(ranged(k, i64::from(lo), i64::from(hi), e)?.map(|x| x as u32))
        };
        // Counts 3.22 only requires to be non-negative (IERECVPARAMS otherwise).
        let count = |k: &'static str| -> Result<Option<u64>, ParamsError> {
            ranged(k, 0, i64::MAX, IperfErrno::RECVPARAMS)?;
            Ok(number(k).and_then(as_u64))
        };
        let any = u32::MAX;

        let protocol = match (boolean("tcp"), boolean("udp"), boolean("sctp")) {
            (_, true, _) => Protocol::Udp,
            (true, _, _) => Protocol::Tcp,
            (_, _, true) => return Err(ParamsError::Sctp),
            _ => return Err(ParamsError::NoProtocol),
        };
        let off = UdpOffload::default();
        let offload = UdpOffload {
            gso: small("gso", 0, any, IperfErrno::RECVPARAMS)?.is_some_and(|g| g != 0),
            gso_dg_size: small("gso_dg_size", 0, any, IperfErrno::RECVPARAMS)?.unwrap_or(off.gso_dg_size),
            gso_bf_size: small("gso_bf_size", 0, any, IperfErrno::RECVPARAMS)?.unwrap_or(off.gso_bf_size),
            gro: small("gro", 0, 1, IperfErrno::RECVPARAMS)?.is_some_and(|g| g != 0),
            gro_bf_size: small("gro_bf_size", 0, any, IperfErrno::RECVPARAMS)?.unwrap_or(off.gro_bf_size),
        };
        let p = TestParams {
            protocol,
            omit: small("omit", 0, limits::MAX_OMIT, IperfErrno::OMIT)?.unwrap_or(0),
            time: small("time", 0, limits::MAX_TIME, IperfErrno::DURATION)?.unwrap_or(0),
            num: count("num")?.unwrap_or(0),
            blockcount: count("blockcount")?.unwrap_or(0),
            mss: small("mss", 0, limits::MAX_MSS, IperfErrno::MSS)?.filter(|&m| m != 0),
            nodelay: boolean("nodelay"),
            parallel: small("parallel", 1, limits::MAX_STREAMS, IperfErrno::NUMSTREAMS)?.unwrap_or(1),
            reverse: boolean("reverse"),
            bidirectional: boolean("bidirectional"),
            window: small("window", 0, limits::MAX_WINDOW, IperfErrno::BUFSIZE)?.filter(|&w| w != 0),
            len: small("len", 0, any, IperfErrno::BLOCKSIZE)?.unwrap_or(match protocol {
                Protocol::Tcp => DEFAULT_TCP_BLKSIZE,
                Protocol::Udp => DEFAULT_UDP_DATAGRAM,
            }),
            bandwidth: count("bandwidth")?.filter(|&b| b != 0),
            fqrate: count("fqrate")?.filter(|&b| b != 0),
            pacing_timer: small("pacing_timer", 0, any, IperfErrno::RECVPARAMS)?,
            burst: small("burst", 1, limits::MAX_BURST, IperfErrno::BURST)?,
            tos: small("tos", 0, 255, IperfErrno::BADTOS)?.map(|t| t as i32).filter(|&t| t != 0),
            flowlabel: small("flowlabel", 1, limits::MAX_FLOWLABEL, IperfErrno::SETFLOW)?.map(|f| f as i32),
            server_affinity: small("server_affinity", 0, limits::MAX_CPU, IperfErrno::AFFINITY)?,
            title: string("title"),
            extra_data: string("extra_data"),
            congestion: string("congestion"),
            congestion_used: string("congestion_used"),
            get_server_output: number("get_server_output").is_some(),
            udp_counters_64bit: number("udp_counters_64bit").is_some(),
            repeating_payload: number("repeating_payload").is_some(),
            zerocopy: nonzero("zerocopy"),
            dont_fragment: nonzero("dont_fragment"),
            authtoken: string("authtoken"),
            skip_rx_copy: nonzero("skip_rx_copy"),
            mptcp: boolean("mptcp"),
            offload,
            client_version: string("client_version").unwrap_or_default(),
            wireperf_watch: nonzero("wireperf_watch"),
            wireperf_latency: nonzero("wireperf_latency"),
        };
        let bad_len = |e| Err(ParamsError::OutOfRange { key: "len", value: p.len.to_string(), i_errno: e });
        if p.protocol == Protocol::Tcp && !(1..=limits::MAX_TCP_BLOCK).contains(&p.len) {
            return bad_len(IperfErrno::BLOCKSIZE);
        }
        // 3.22 lets a UDP length of 0 through to its default; wireperf needs a real size.
        if p.protocol == Protocol::Udp && !(limits::MIN_UDP_BLOCK..=limits::MAX_UDP_BLOCK).contains(&p.len) {
            return bad_len(IperfErrno::UDPBLOCKSIZE);
        }
        Ok(p)
    }

    /// Total streams the client opens: `parallel`, doubled with `--bidir`.
    pub fn total_streams(&self) -> u32 {
        if self.bidirectional { self.parallel * 2 } else { self.parallel }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn encodes_like_a_stock_client() {
        let p = TestParams { time: 2, bandwidth: Some(20_000_000), ..Default::default() };
        assert_eq!(
            p.to_json().to_string(),
            r#"{"tcp":true,"omit":0,"time":2,"num":0,"blockcount":0,"parallel":1,"len":131072,"bandwidth":20000000,"pacing_timer":1000,"client_version":"3.22"}"#
        );
    }

    #[test]
    fn reads_a_3_21_udp_client_message() {
        let raw = r#"{"udp":true,"omit":1,"time":1,"num":0,"blockcount":0,"parallel":2,"bidirectional":true,"len":32768,"bandwidth":1000000,"pacing_timer":1000,"gso":0,"gso_dg_size":0,"gso_bf_size":65507,"gro":0,"gro_bf_size":65507,"TOS":8,"title":"ttl","extra_data":"xd","get_server_output":1,"udp_counters_64bit":1,"repeating_payload":1,"client_version":"3.21"}"#;
        let p = TestParams::from_json(&serde_json::from_str(raw).unwrap()).unwrap();
        assert_eq!(p.protocol, Protocol::Udp);
        assert!(p.bidirectional && p.get_server_output && p.udp_counters_64bit && p.repeating_payload);
        assert_eq!((p.parallel, p.len, p.tos, p.omit), (2, 32768, Some(8), 1));
        assert_eq!(p.title.as_deref(), Some("ttl"));
    }

    #[test]
    fn watch_extension_is_sent_only_when_asked() {
        let p = TestParams { wireperf_watch: true, ..Default::default() };
        let j = p.to_json();
        assert_eq!(j["wireperf_watch"], 1);
        assert!(TestParams::from_json(&j).unwrap().wireperf_watch);
        assert!(TestParams::default().to_json().get("wireperf_watch").is_none());
        let p = TestParams { wireperf_latency: true, ..Default::default() };
        assert_eq!(p.to_json()["wireperf_latency"], 1);
        assert!(TestParams::from_json(&p.to_json()).unwrap().wireperf_latency);
        assert!(TestParams::default().to_json().get("wireperf_latency").is_none());
    }

    #[test]
    fn flag_presence_turns_it_on_even_when_false() {
        let v = json!({"tcp": true, "reverse": false});
        assert!(TestParams::from_json(&v).unwrap().reverse);
    }

    #[test]
    fn hostile_values_are_refused() {
        for v in [
            json!({"tcp": true, "parallel": 100000}),
            json!({"tcp": true, "len": -5}),
            json!({"tcp": true, "window": 4_000_000_000u64}),
            json!({"udp": true, "len": 70000}),
            json!({"tcp": true, "len": 0}),
            json!({"sctp": true}),
        ] {
            assert!(TestParams::from_json(&v).is_err(), "{v}");
        }
    }

    /// Parameter documents captured from a stock 3.22 client (`iperf3 -d`), read as 3.22 would.
    #[test]
    fn reads_what_a_3_22_client_sends() {
        let gsro = r#"{"udp":true,"omit":0,"time":1,"num":0,"blockcount":0,"parallel":1,"len":32768,"bandwidth":10000000,"pacing_timer":1000,"gso":1,"gso_dg_size":32768,"gso_bf_size":32768,"gro":1,"gro_bf_size":65507,"client_version":"3.22"}"#;
        let p = TestParams::from_json(&serde_json::from_str(gsro).unwrap()).unwrap();
        assert_eq!(p.offload, UdpOffload::on(32768));
        assert_eq!(UdpOffload::requested(32768), p.offload, "what --gsro -l 32768 sends");
        let unsized_ = UdpOffload::requested(0);
        assert_eq!((unsized_.gso, unsized_.gso_dg_size, unsized_.gso_bf_size), (true, 1460, 65507));
        assert_eq!(p.to_json().to_string().replace("3.22", "x"), gsro.replace("3.22", "x"), "same keys, order, types");
        let tcp = r#"{"tcp":true,"omit":0,"time":1,"num":0,"blockcount":0,"parallel":1,"reverse":true,"mptcp":true,"len":131072,"pacing_timer":1000,"skip_rx_copy":1,"client_version":"3.22"}"#;
        let p = TestParams::from_json(&serde_json::from_str(tcp).unwrap()).unwrap();
        assert!(p.mptcp && p.skip_rx_copy && p.reverse);
        assert_eq!(p.to_json().to_string(), tcp);
        // `-A 0,1`: the server's CPU right after `omit`, as 3.22 places it.
        let pinned = r#"{"tcp":true,"omit":0,"server_affinity":1,"time":1,"num":0,"blockcount":0,"parallel":1,"len":131072,"pacing_timer":1000,"client_version":"3.22"}"#;
        let p = TestParams::from_json(&serde_json::from_str(pinned).unwrap()).unwrap();
        assert_eq!(p.server_affinity, Some(1));
        assert_eq!(p.to_json().to_string(), pinned);
        let plain_udp = TestParams { protocol: Protocol::Udp, len: 32768, ..Default::default() }.to_json();
        assert_eq!(plain_udp["gso"], json!(0), "3.22 sends the offload keys, off, with every UDP test");
        assert_eq!(plain_udp["gso_bf_size"], json!(65507));
    }

    /// A value of the wrong type is ignored, as 3.18+ ignore it: the setting is lost, the
    /// test still runs.
    #[test]
    fn wrongly_typed_values_read_as_absent() {
        let p = TestParams::from_json(&json!({"tcp": true, "reverse": 1, "get_server_output": true,
            "parallel": "4", "omit": "x", "title": 5, "zerocopy": "1", "mptcp": 1}))
        .unwrap();
        assert!(!p.reverse && !p.get_server_output && !p.zerocopy && !p.mptcp);
        assert_eq!((p.parallel, p.omit, p.title), (1, 0, None));
    }

    #[test]
    fn no_protocol_is_refused_and_sctp_is_refused_with_nosctp() {
        assert_eq!(TestParams::from_json(&json!({"time": 1})).unwrap_err(), ParamsError::NoProtocol);
        assert_eq!(TestParams::from_json(&json!({"tcp": 1})).unwrap_err(), ParamsError::NoProtocol, "not a boolean");
        assert_eq!(TestParams::from_json(&json!({"sctp": true})).unwrap_err().errno(), IperfErrno::NOSCTP);
    }

    /// Each 3.22 range check, at the first value past each end, with 3.22's code.
    #[test]
    fn range_checks_answer_with_3_22_codes() {
        let e = |v: Value| TestParams::from_json(&v).unwrap_err().errno();
        let cases: &[(&str, i64, IperfErrno)] = &[
            ("omit", 601, IperfErrno::OMIT),
            ("omit", -1, IperfErrno::OMIT),
            ("time", 86_401, IperfErrno::DURATION),
            ("num", -1, IperfErrno::RECVPARAMS),
            ("blockcount", -1, IperfErrno::RECVPARAMS),
            ("MSS", 32_768, IperfErrno::MSS),
            ("parallel", 0, IperfErrno::NUMSTREAMS),
            ("parallel", 129, IperfErrno::NUMSTREAMS),
            ("window", 512 * 1024 * 1024 + 1, IperfErrno::BUFSIZE),
            ("len", -1, IperfErrno::BLOCKSIZE),
            ("len", 1024 * 1024 + 1, IperfErrno::BLOCKSIZE),
            ("bandwidth", -1, IperfErrno::RECVPARAMS),
            ("fqrate", -1, IperfErrno::RECVPARAMS),
            ("pacing_timer", -1, IperfErrno::RECVPARAMS),
            ("burst", 0, IperfErrno::BURST),
            ("burst", 1001, IperfErrno::BURST),
            ("TOS", 256, IperfErrno::BADTOS),
            ("TOS", -1, IperfErrno::BADTOS),
            ("flowlabel", 0, IperfErrno::SETFLOW),
            ("flowlabel", 0x100000, IperfErrno::SETFLOW),
            ("server_affinity", -1, IperfErrno::AFFINITY),
            ("server_affinity", 1025, IperfErrno::AFFINITY),
            ("gro", 2, IperfErrno::RECVPARAMS),
            ("gso_bf_size", -1, IperfErrno::RECVPARAMS),
        ];
        for &(key, value, want) in cases {
            assert_eq!(e(json!({"tcp": true, key: value})), want, "{key} = {value}");
        }
        assert_eq!(e(json!({"udp": true, "len": 70000})), IperfErrno::UDPBLOCKSIZE);
        assert_eq!(e(json!({"udp": true, "len": 15})), IperfErrno::UDPBLOCKSIZE);
        for (key, value) in [("MSS", 32_767), ("parallel", 128), ("omit", 600), ("time", 86_400), ("TOS", 255)] {
            assert!(TestParams::from_json(&json!({"tcp": true, key: value})).is_ok(), "{key} = {value} is allowed");
        }
    }

    /// Zero burst and flow label mean "unset" and are never sent: 3.22 refuses both.
    #[test]
    fn zero_burst_and_flowlabel_are_not_sent() {
        let v = TestParams { burst: Some(0), flowlabel: Some(0), ..Default::default() }.to_json();
        assert!(v.get("burst").is_none() && v.get("flowlabel").is_none(), "{v}");
    }

    fn any_params() -> impl Strategy<Value = TestParams> {
        let shape = (
            any::<bool>(),
            0u32..=600,
            0u32..=86400,
            0u64..i64::MAX as u64,
            0u64..1 << 40,
            1u32..=128,
            any::<bool>(),
            any::<bool>(),
            proptest::option::of(1u32..=32767),
            any::<bool>(),
        );
        let sizes = (
            proptest::option::of(1u32..=512 * 1024 * 1024),
            16u32..65507,
            proptest::option::of(1u64..u64::MAX / 2),
            proptest::option::of(1u64..u64::MAX / 2),
            proptest::option::of(1u32..=1000),
            proptest::option::of(1i32..=255),
            proptest::option::of(1i32..=0xfffff),
            proptest::option::of(0u32..=1024),
        );
        let strings = (
            proptest::option::of(".{0,40}"),
            proptest::option::of(".{0,40}"),
            proptest::option::of("[a-z]{1,12}"),
            proptest::option::of("[A-Za-z0-9+/=]{1,64}"),
        );
        let flags = proptest::collection::vec(any::<bool>(), 8);
        (shape, sizes, strings, flags, any::<bool>()).prop_map(|(a, b, c, f, gsro)| {
            let protocol = if a.0 { Protocol::Udp } else { Protocol::Tcp };
            TestParams {
                protocol,
                omit: a.1,
                time: a.2,
                num: a.3,
                blockcount: a.4,
                parallel: a.5,
                reverse: a.6,
                bidirectional: a.7,
                mss: a.8,
                nodelay: a.9,
                window: b.0,
                len: b.1,
                bandwidth: b.2,
                fqrate: b.3,
                burst: b.4,
                tos: b.5,
                flowlabel: b.6,
                server_affinity: b.7,
                title: c.0,
                extra_data: c.1,
                congestion: c.2,
                authtoken: c.3,
                get_server_output: f[0],
                udp_counters_64bit: f[1],
                repeating_payload: f[2],
                zerocopy: f[3],
                dont_fragment: f[4],
                skip_rx_copy: f[5],
                mptcp: f[6],
                offload: if gsro && a.0 { UdpOffload::on(b.1) } else { UdpOffload::default() },
                client_version: "3.22".into(),
                ..Default::default()
            }
        })
    }

    proptest! {
        /// Every parameter document 3.22 can send reads back to the same parameters.
        #[test]
        fn round_trips(p in any_params()) {
            prop_assert_eq!(TestParams::from_json(&p.to_json()).unwrap(), p);
        }

        /// Any integer for any numeric key either reads back as sent or is refused with the
        /// code of that key's 3.22 check; it never panics or reads as something else.
        #[test]
        fn each_numeric_key_reads_back_or_is_refused_with_its_code(
            key in proptest::sample::select(vec!["omit", "time", "MSS", "parallel", "window", "burst", "TOS", "flowlabel", "server_affinity"]),
            value in -1_000_000i64..1_000_000_000,
        ) {
            let (lo, hi, code) = match key {
                "omit" => (0, 600, IperfErrno::OMIT),
                "time" => (0, 86_400, IperfErrno::DURATION),
                "MSS" => (0, 32_767, IperfErrno::MSS),
                "parallel" => (1, 128, IperfErrno::NUMSTREAMS),
                "window" => (0, 512 * 1024 * 1024, IperfErrno::BUFSIZE),
                "burst" => (1, 1000, IperfErrno::BURST),
                "TOS" => (0, 255, IperfErrno::BADTOS),
                "server_affinity" => (0, 1024, IperfErrno::AFFINITY),
                _ => (1, 0xfffff, IperfErrno::SETFLOW),
            };
            let read = TestParams::from_json(&json!({"tcp": true, key: value}));
            if (lo..=hi).contains(&value) {
                let back = read.unwrap().to_json();
                let shown = back.get(key).and_then(Value::as_i64).unwrap_or(0);
                // Zero means unset for MSS, window and TOS, and is then not sent.
                prop_assert_eq!(shown, value);
            } else {
                prop_assert_eq!(read.unwrap_err().errno(), code);
            }
        }
    }
}
