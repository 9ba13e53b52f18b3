//! The fuzz targets' inputs, run without a fuzzer: a seeded generator feeds each parser of
//! network input hundreds of thousands of random and mutated inputs (`fuzz/` has the
//! cargo-fuzz targets for longer, coverage-guided runs; see docs/fuzzing.md). Nothing here may
//! panic, hang or allocate without bound; a crash found here becomes a named regression test.

use serde_json::{Map, Value, json};
use std::time::{Duration, Instant};
use wireperf_protocol::client::ClientSession;
use wireperf_protocol::frame::{Expect, FrameReader, encode_json};
use wireperf_protocol::server::{ServerLimits, ServerSession};
use wireperf_protocol::udp::UdpHeader;
use wireperf_protocol::{Cookie, ExchangeResults, TestParams};

/// SplitMix64: tiny, seeded, good enough to drive mutations reproducibly.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn bytes(&mut self, max: usize) -> Vec<u8> {
        let n = self.below(max + 1);
        (0..n).map(|_| self.next() as u8).collect()
    }
}

const PARAM_KEYS: &[&str] = &[
    "tcp",
    "udp",
    "omit",
    "time",
    "num",
    "blockcount",
    "MSS",
    "nodelay",
    "parallel",
    "reverse",
    "bidirectional",
    "window",
    "len",
    "bandwidth",
    "fqrate",
    "pacing_timer",
    "burst",
    "TOS",
    "flowlabel",
    "server_affinity",
    "title",
    "extra_data",
    "congestion",
    "get_server_output",
    "udp_counters_64bit",
    "repeating_payload",
    "zerocopy",
    "dont_fragment",
    "authtoken",
    "client_version",
    "gso",
    "skip_rx_copy",
];
const RESULT_KEYS: &[&str] = &[
    "cpu_util_total",
    "cpu_util_user",
    "cpu_util_system",
    "sender_has_retransmits",
    "congestion_used",
    "streams",
    "server_output_text",
    "server_output_json",
    "id",
    "bytes",
    "retransmits",
    "jitter",
    "errors",
    "omitted_errors",
    "packets",
    "omitted_packets",
    "start_time",
    "end_time",
];

/// A JSON value of any type, with the keys a parser looks for (wrong types on purpose).
fn value(r: &mut Rng, keys: &[&str], depth: u32) -> Value {
    match r.below(if depth > 2 { 8 } else { 10 }) {
        0 => Value::Null,
        1 => json!(r.next() & 1 == 1),
        2 => json!(r.next() as i64),
        3 => json!(r.next()),
        4 => {
            let x = f64::from_bits(r.next());
            json!(if x.is_finite() { x } else { 0.5 })
        }
        5 => [json!(-1), json!(0), json!(1), json!(u32::MAX), json!(i64::MIN), json!(u64::MAX)][r.below(6)].clone(),
        6 => json!(String::from_utf8_lossy(&r.bytes(40))),
        7 => json!("18446744073709551615"),
        8 => Value::Array((0..r.below(4)).map(|_| value(r, keys, depth + 1)).collect()),
        _ => object(r, keys, depth + 1),
    }
}

fn object(r: &mut Rng, keys: &[&str], depth: u32) -> Value {
    let mut m = Map::new();
    for _ in 0..r.below(keys.len()) {
        m.insert(keys[r.below(keys.len())].to_string(), value(r, keys, depth));
    }
    Value::Object(m)
}

/// A mutation of `seed`: flips, inserts, deletes, truncation.
fn mutate(r: &mut Rng, seed: &[u8]) -> Vec<u8> {
    let mut v = seed.to_vec();
    for _ in 0..=r.below(4) {
        match r.below(4) {
            0 if !v.is_empty() => {
                let i = r.below(v.len());
                v[i] ^= 1 << r.below(8);
            }
            1 => {
                let i = r.below(v.len() + 1);
                v.insert(i, r.next() as u8);
            }
            2 if !v.is_empty() => {
                let i = r.below(v.len());
                v.remove(i);
            }
            _ => v.truncate(r.below(v.len() + 1)),
        }
    }
    v
}

fn frames(bytes: &[u8]) {
    for e in [Expect::Cookie, Expect::State, Expect::Json { max_len: 4096 }, Expect::ErrorCodes] {
        let mut r = FrameReader::new();
        r.push(bytes);
        let mut n = 0;
        while let Ok(Some(_)) = r.next(e) {
            n += 1;
            assert!(n <= bytes.len(), "every item consumes input");
        }
        let _ = r.at_eof(e);
    }
}

fn server_session(bytes: &[u8], chunk: usize) {
    let mut s = ServerSession::new(Duration::ZERO, ServerLimits { max_params: 4096, ..Default::default() });
    for (i, c) in bytes.chunks(chunk.max(1)).enumerate() {
        if s.handle_input(Duration::from_millis(i as u64), c).is_err() {
            break;
        }
        while let Some(ev) = s.poll_event() {
            // Play a permissive engine: accept whatever arrives, so later phases are reached.
            match ev {
                wireperf_protocol::server::ServerEvent::Params(_) => {
                    let _ = s.accept_params(Duration::ZERO);
                    let _ = s.start_test(Duration::ZERO, Some(Duration::from_secs(1)));
                }
                wireperf_protocol::server::ServerEvent::TestEnd => {
                    let _ = s.begin_exchange(Duration::ZERO);
                }
                wireperf_protocol::server::ServerEvent::ClientResults(r) => {
                    let _ = s.send_results(Duration::ZERO, &r);
                }
                _ => {}
            }
        }
        let _ = s.take_output();
    }
    let _ = s.handle_eof();
    let _ = s.handle_timeout(Duration::from_secs(3600));
}

fn client_session(bytes: &[u8]) {
    let mut c = ClientSession::new(Cookie::from_entropy([3; 37]), &TestParams::default());
    let _ = c.take_output();
    if c.handle_input(bytes).is_ok() {
        while c.poll_event().is_some() {}
        let _ = c.handle_eof();
    }
}

#[test]
fn every_network_parser_survives_random_and_mutated_input() {
    let mut r = Rng(0x5eed_1234);
    let valid_params = TestParams { parallel: 4, title: Some("t".into()), ..Default::default() }.to_json();
    let mut cookie_then_params = vec![b'a'; 36];
    cookie_then_params.push(0);
    cookie_then_params.extend(encode_json(&valid_params));
    cookie_then_params.extend([4u8]); // TEST_END
    cookie_then_params.extend(encode_json(&json!({"cpu_util_total": 1.0, "streams": [{"id": 1, "bytes": 5}]})));
    cookie_then_params.push(16); // IPERF_DONE
    let budget = Instant::now() + Duration::from_secs(20);
    let mut runs = 0u64;
    while runs < 200_000 && Instant::now() < budget {
        runs += 1;
        let raw = if r.next() & 1 == 0 { r.bytes(200) } else { mutate(&mut r, &cookie_then_params) };
        frames(&raw);
        let _ = UdpHeader::read(&raw, r.next() & 1 == 0);
        if runs.is_multiple_of(4) {
            server_session(&raw, 1 + r.below(64));
            client_session(&raw);
        }
        // JSON bodies: random values with the real keys, and mutated text.
        let p = object(&mut r, PARAM_KEYS, 0);
        let _ = TestParams::from_json(&p);
        let res = object(&mut r, RESULT_KEYS, 0);
        let _ = ExchangeResults::from_json(&res);
        if let Ok(v) = serde_json::from_slice::<Value>(&mutate(&mut r, valid_params.to_string().as_bytes())) {
            let _ = TestParams::from_json(&v);
            let _ = ExchangeResults::from_json(&v);
        }
        #[cfg(feature = "auth")]
        {
            let _ = wireperf_protocol::auth::parse_plaintext(&raw);
            let users = String::from_utf8_lossy(&raw);
            let _ = wireperf_protocol::auth::check_users_file(&users, "mario", "rossi");
        }
    }
    assert!(runs >= 20_000, "only {runs} inputs in the time budget");
    eprintln!("fuzz_inputs: {runs} inputs");
}
