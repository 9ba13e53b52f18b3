//! The latency echo extension on the wire, sans I/O: the offer a wireperf server sends, the
//! probe and reply it echoes, and the rate budget that keeps the echo harmless.
//!
//! A client that gives `--latency` sets `wireperf_latency` in the parameters; a wireperf
//! server answers (before CREATE_STREAMS) with an [`EchoOffer`]: a UDP port that echoes
//! probes and a TCP port for one request/response connection, both for this test's client
//! only, with a random token every probe must carry. A stock iperf3 server ignores the key
//! and sends no offer, and the client keeps its connect-time probes. docs/latency.md has
//! the whole exchange.
//!
//! A probe is [`REQUEST_LEN`] bytes: magic `WPLE`, the token (8 bytes), a sequence number
//! (u32) and the client's send time (u64 ns on its own clock), big-endian. The reply is the
//! request unchanged followed by the server's receive time (u64 ns on the server's clock):
//! the client computes the round trip from its own clock alone, and the two clocks'
//! constant offset cancels when it compares one-way times under load with those at idle
//! (see [`crate::direction`]). Anything else — another length, another magic or token — is
//! not answered.

use serde::{Deserialize, Serialize};
use std::time::Duration;

/// Bytes of a probe.
pub const REQUEST_LEN: usize = 24;
/// Bytes of a reply: the probe and the server's receive time.
pub const REPLY_LEN: usize = REQUEST_LEN + 8;
/// First bytes of every probe.
pub const MAGIC: [u8; 4] = *b"WPLE";
/// Probes the server answers per second at most, per test (a 10 ms interval on two flows,
/// with room for bursts). More are dropped, never queued.
pub const MAX_RATE: u32 = 250;

/// What a wireperf server offers a client that asked for latency probes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct EchoOffer {
    /// UDP port of the echo (on the control connection's server address).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub udp_port: Option<u16>,
    /// TCP port of the request/response connection (one connection, this client only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tcp_port: Option<u16>,
    /// The token every probe carries, 16 hex digits.
    pub token: String,
    /// Probe size the server answers (always [`REQUEST_LEN`] today).
    pub probe_len: usize,
    /// Probes per second the server answers at most.
    pub max_rate: u32,
}

impl EchoOffer {
    /// The offer for these ports and token.
    pub fn new(udp_port: Option<u16>, tcp_port: Option<u16>, token: Token) -> EchoOffer {
        EchoOffer { udp_port, tcp_port, token: token.to_hex(), probe_len: REQUEST_LEN, max_rate: MAX_RATE }
    }

    /// Reads an offer; `None` when it is not one this client can use (an unknown probe size,
    /// a bad token, no port).
    pub fn from_json(v: &serde_json::Value) -> Option<EchoOffer> {
        let o: EchoOffer = serde_json::from_value(v.clone()).ok()?;
        let usable = o.probe_len == REQUEST_LEN
            && Token::from_hex(&o.token).is_some()
            && (o.udp_port.is_some_and(|p| p != 0) || o.tcp_port.is_some_and(|p| p != 0));
        usable.then_some(o)
    }

    /// The offer as the JSON the server sends.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
    }

    /// The token, parsed.
    pub fn token(&self) -> Option<Token> {
        Token::from_hex(&self.token)
    }
}

/// The per-test secret a probe must carry, so stray datagrams are not echoed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Token(pub [u8; 8]);

impl Token {
    /// 16 lowercase hex digits.
    pub fn to_hex(self) -> String {
        self.0.iter().map(|b| format!("{b:02x}")).collect()
    }

    /// Parses [`Token::to_hex`]'s form.
    pub fn from_hex(s: &str) -> Option<Token> {
        if s.len() != 16 || !s.is_ascii() {
            return None;
        }
        let mut t = [0u8; 8];
        for (i, b) in t.iter_mut().enumerate() {
            *b = u8::from_str_radix(s.get(2 * i..2 * i + 2)?, 16).ok()?;
        }
        Some(Token(t))
    }
}

/// One probe as sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Request {
    /// Its number in the flow, from 0.
    pub seq: u32,
    /// The client's send time, ns on its own clock.
    pub sent_ns: u64,
}

impl Request {
    /// The bytes on the wire.
    pub fn encode(&self, token: Token) -> [u8; REQUEST_LEN] {
        let mut b = [0u8; REQUEST_LEN];
        b[..4].copy_from_slice(&MAGIC);
        b[4..12].copy_from_slice(&token.0);
        b[12..16].copy_from_slice(&self.seq.to_be_bytes());
        b[16..24].copy_from_slice(&self.sent_ns.to_be_bytes());
        b
    }

    /// Reads a probe for `token`; `None` for anything else (the server then stays silent).
    pub fn parse(b: &[u8], token: Token) -> Option<Request> {
        if b.len() != REQUEST_LEN || b[..4] != MAGIC || b[4..12] != token.0 {
            return None;
        }
        Some(Request { seq: u32::from_be_bytes(b[12..16].try_into().ok()?), sent_ns: u64_at(b, 16)? })
    }

    /// The server's answer: the probe and its receive time.
    pub fn reply(&self, token: Token, received_ns: u64) -> [u8; REPLY_LEN] {
        let mut b = [0u8; REPLY_LEN];
        b[..REQUEST_LEN].copy_from_slice(&self.encode(token));
        b[REQUEST_LEN..].copy_from_slice(&received_ns.to_be_bytes());
        b
    }
}

/// A reply as the client reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reply {
    /// The probe it answers.
    pub request: Request,
    /// When the server received it, ns on the server's clock.
    pub received_ns: u64,
}

impl Reply {
    /// Reads a reply to one of our probes; `None` for anything else.
    pub fn parse(b: &[u8], token: Token) -> Option<Reply> {
        if b.len() != REPLY_LEN {
            return None;
        }
        Some(Reply { request: Request::parse(&b[..REQUEST_LEN], token)?, received_ns: u64_at(b, REQUEST_LEN)? })
    }
}

fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_be_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

/// A token bucket: at most `rate` probes a second, bursts of `rate / 10`. Time is passed in.
#[derive(Clone, Debug)]
pub struct Budget {
    rate: f64,
    burst: f64,
    tokens: f64,
    last: Option<Duration>,
}

impl Budget {
    /// A full bucket for `rate` probes a second.
    pub fn new(rate: u32) -> Budget {
        let burst = (f64::from(rate) / 10.0).max(1.0);
        Budget { rate: f64::from(rate), burst, tokens: burst, last: None }
    }

    /// Whether a probe arriving at `now` may be answered (and spends its token if so).
    pub fn allow(&mut self, now: Duration) -> bool {
        if let Some(last) = self.last {
            self.tokens = (self.tokens + now.saturating_sub(last).as_secs_f64() * self.rate).min(self.burst);
        }
        self.last = Some(now);
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            true
        } else {
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: Token = Token([1, 2, 3, 4, 5, 6, 7, 0xff]);

    #[test]
    fn probe_and_reply_round_trip() {
        let r = Request { seq: 7, sent_ns: 123_456_789 };
        let b = r.encode(T);
        assert_eq!(&b[..4], b"WPLE");
        assert_eq!(Request::parse(&b, T), Some(r));
        let reply = r.reply(T, 42);
        assert_eq!(&reply[..REQUEST_LEN], &b);
        assert_eq!(Reply::parse(&reply, T), Some(Reply { request: r, received_ns: 42 }));
    }

    #[test]
    fn garbage_is_not_a_probe() {
        let b = Request { seq: 1, sent_ns: 2 }.encode(T);
        assert_eq!(Request::parse(&b, Token([0; 8])), None, "another test's token");
        assert_eq!(Request::parse(&b[..23], T), None, "short");
        let mut long = b.to_vec();
        long.push(0);
        assert_eq!(Request::parse(&long, T), None, "long");
        let mut bad = b;
        bad[0] = b'X';
        assert_eq!(Request::parse(&bad, T), None, "magic");
        assert_eq!(Request::parse(&[0u8; 1500], T), None);
        assert_eq!(Reply::parse(&b, T), None, "a probe is not a reply");
    }

    #[test]
    fn offer_json_round_trips_and_unusable_offers_are_refused() {
        let o = EchoOffer::new(Some(40000), Some(40001), T);
        assert_eq!(o.token, "01020304050607ff");
        assert_eq!(EchoOffer::from_json(&o.to_json()), Some(o.clone()));
        assert_eq!(o.token(), Some(T));
        let mut j = o.to_json();
        j["probe_len"] = 64.into();
        assert_eq!(EchoOffer::from_json(&j), None, "a probe size this client does not send");
        let j = EchoOffer::new(None, None, T).to_json();
        assert_eq!(EchoOffer::from_json(&j), None, "no port");
        assert_eq!(EchoOffer::from_json(&serde_json::json!({"udp_port": 1, "token": "zz"})), None);
        assert_eq!(Token::from_hex("0102"), None);
        assert_eq!(Token::from_hex("01020304050607\u{e9}"), None);
    }

    #[test]
    fn budget_caps_the_rate() {
        let mut b = Budget::new(100);
        // A burst of 10 passes at once, the 11th is dropped.
        let at = Duration::from_secs(1);
        assert_eq!((0..11).filter(|_| b.allow(at)).count(), 10);
        // One second later at most 10 more (the burst), not 100.
        assert_eq!((0..50).filter(|_| b.allow(at + Duration::from_secs(1))).count(), 10);
        // A steady 50/s stream passes whole.
        let start = Duration::from_secs(3);
        assert!((0..100).all(|i| b.allow(start + Duration::from_millis(20 * i))));
        // A steady 1000/s flood is held near the rate.
        let t0 = Duration::from_secs(10);
        let passed = (0..1000).filter(|i| b.allow(t0 + Duration::from_millis(*i))).count();
        assert!((95..=115).contains(&passed), "{passed}");
    }
}
