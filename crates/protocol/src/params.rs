//! The test parameters the client sends after PARAM_EXCHANGE.
//!
//! Stock servers test flag keys for *presence* (3.18+: presence of a boolean), so a flag is
//! emitted only when it is on, never as `false`. Keys are emitted in the order iperf3 3.12
//! emits them, and unknown keys are ignored on input, as every stock server does.

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
    /// The client's version string.
    pub client_version: String,
    /// wireperf extension (`wireperf_watch`): the client asks a wireperf server to watch its
    /// host during the test and return the samples with its results (`--why`). Stock servers
    /// ignore the key.
    pub wireperf_watch: bool,
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
            authtoken: None,
            skip_rx_copy: false,
            client_version: crate::IPERF_COMPAT_VERSION.to_string(),
        }
    }
}

/// Why a parameters message was refused.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ParamsError {
    /// Neither `tcp` nor `udp` is present (SCTP is not supported).
    #[error("parameters name no supported protocol (need \"tcp\" or \"udp\")")]
    NoProtocol,
    /// A value is outside the range stock clients can produce.
    #[error("parameter {key} out of range: {value}")]
    OutOfRange {
        /// The key.
        key: &'static str,
        /// The value as received.
        value: String,
    },
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
    /// Largest MSS (3.21's limit, the larger of the two releases).
    pub const MAX_MSS: u32 = 32_767;
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

    /// Reads a parameters object the way a stock server does, then range-checks it.
    ///
    /// Key lookup is case-insensitive (cJSON's `GetObjectItem` is); flags count as on when
    /// present with any value, as in 3.12; numbers of the wrong type read as absent.
    pub fn from_json(v: &Value) -> Result<Self, ParamsError> {
        let obj = v.as_object().ok_or(ParamsError::NoProtocol)?;
        let keys: HashMap<String, &Value> = obj.iter().map(|(k, v)| (k.to_ascii_lowercase(), v)).collect();
        let get = |k: &str| keys.get(k).copied();
        let flag = |k: &str| get(k).is_some();
        let num_u64 = |k: &str| get(k).and_then(as_u64);
        let num_i64 = |k: &str| get(k).and_then(as_i64);
        let string = |k: &str| get(k).and_then(Value::as_str).map(str::to_owned);

        let protocol = if flag("tcp") {
            Protocol::Tcp
        } else if flag("udp") {
            Protocol::Udp
        } else {
            return Err(ParamsError::NoProtocol);
        };
        let small = |k: &'static str, max: u32| -> Result<Option<u32>, ParamsError> {
            match num_i64(k) {
                None => Ok(None),
                Some(x) if x >= 0 && x <= i64::from(max) => Ok(Some(x as u32)),
                Some(x) => Err(ParamsError::OutOfRange { key: k, value: x.to_string() }),
            }
        };
        let p = TestParams {
            protocol,
            omit: small("omit", limits::MAX_OMIT)?.unwrap_or(0),
            time: small("time", limits::MAX_TIME)?.unwrap_or(0),
            num: num_u64("num").unwrap_or(0),
            blockcount: num_u64("blockcount").unwrap_or(0),
            mss: small("mss", limits::MAX_MSS)?.filter(|&m| m != 0),
            nodelay: flag("nodelay"),
            parallel: small("parallel", limits::MAX_STREAMS)?.unwrap_or(1).max(1),
            reverse: flag("reverse"),
            bidirectional: flag("bidirectional"),
            window: small("window", limits::MAX_WINDOW)?.filter(|&w| w != 0),
            len: small("len", limits::MAX_TCP_BLOCK)?.unwrap_or(match protocol {
                Protocol::Tcp => DEFAULT_TCP_BLKSIZE,
                Protocol::Udp => 1460,
            }),
            bandwidth: num_u64("bandwidth").filter(|&b| b != 0),
            fqrate: num_u64("fqrate").filter(|&b| b != 0),
            pacing_timer: small("pacing_timer", u32::MAX)?,
            burst: small("burst", 1000)?.filter(|&b| b != 0),
            tos: num_i64("tos").map(|t| t as i32).filter(|&t| t != 0),
            flowlabel: num_i64("flowlabel").map(|t| t as i32).filter(|&t| t != 0),
            title: string("title"),
            extra_data: string("extra_data"),
            congestion: string("congestion"),
            congestion_used: string("congestion_used"),
            get_server_output: flag("get_server_output"),
            udp_counters_64bit: flag("udp_counters_64bit"),
            repeating_payload: flag("repeating_payload"),
            zerocopy: flag("zerocopy"),
            dont_fragment: flag("dont_fragment"),
            authtoken: string("authtoken"),
            skip_rx_copy: flag("skip_rx_copy"),
            client_version: string("client_version").unwrap_or_default(),
            wireperf_watch: flag("wireperf_watch"),
        };
        if p.len == 0 {
            return Err(ParamsError::OutOfRange { key: "len", value: "0".into() });
        }
        if p.protocol == Protocol::Udp && !(limits::MIN_UDP_BLOCK..=limits::MAX_UDP_BLOCK).contains(&p.len) {
            return Err(ParamsError::OutOfRange { key: "len", value: p.len.to_string() });
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
    fn encodes_like_a_3_12_client() {
        let p = TestParams { time: 2, bandwidth: Some(20_000_000), ..Default::default() };
        assert_eq!(
            p.to_json().to_string(),
            r#"{"tcp":true,"omit":0,"time":2,"num":0,"blockcount":0,"parallel":1,"len":131072,"bandwidth":20000000,"pacing_timer":1000,"client_version":"3.12"}"#
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

    proptest! {
        #[test]
        fn round_trips(
            udp in any::<bool>(), omit in 0u32..600, time in 0u32..86400, num in any::<u64>(),
            parallel in 1u32..=128, reverse in any::<bool>(), bidir in any::<bool>(),
            len in 16u32..65507, bw in proptest::option::of(1u64..u64::MAX / 2),
            title in proptest::option::of(".{0,40}"), nodelay in any::<bool>(),
        ) {
            let p = TestParams {
                protocol: if udp { Protocol::Udp } else { Protocol::Tcp },
                omit, time, num, parallel, reverse, bidirectional: bidir, len,
                bandwidth: bw, title, nodelay, ..Default::default()
            };
            prop_assert_eq!(TestParams::from_json(&p.to_json()).unwrap(), p);
        }
    }
}
