//! Writing the parameters as a stock client sends them: a flag only when it is on, keys in
//! 3.22's order (see the module above for why).

use super::{Protocol, TestParams};
use serde_json::{Map, Value, json};

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
}
