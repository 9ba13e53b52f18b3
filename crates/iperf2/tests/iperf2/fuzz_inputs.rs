//! The iperf 2 fuzz targets' checks ([`super::support::wire_checks`]) on inputs from a deterministic
//! generator, so every `cargo test -p wireperf-iperf2` exercises the parsers the server and
//! client run on network bytes (`fuzz/` has the coverage-guided targets; docs/fuzzing.md).
//!
//! Inputs are random bytes and mutations (bit flips, inserted, removed and overwritten bytes,
//! truncation) of valid messages made by the crate's own encoders: TCP test headers with and
//! without the extension, UDP datagrams carrying a header, server reports, header acks.

use super::support::wire_checks::{server_reply, tcp_stream_start, udp_datagram};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use wireperf_iperf2::wire::*;

/// Inputs per check: each takes microseconds, so this costs well under a second per check.
const CASES: u32 = 50_000;

fn ext() -> HeaderExt {
    HeaderExt {
        upper_flags: UPPER_FULLDUPLEX | UPPER_TRIPTIME,
        lower_flags: 0,
        version_u: ClientHeader::VERSION_U,
        version_l: ClientHeader::VERSION_L,
        tos: 0x10,
        rate: (1 << 40) + 1_000_000,
        write_prefetch: 0,
    }
}

/// Valid messages the mutations start from.
fn seeds() -> Vec<Vec<u8>> {
    let plain = ClientHeader {
        flags: HEADER_VERSION1,
        num_threads: 1,
        port: 5001,
        buf_len: 131_072,
        win_band: 0,
        amount: Amount::Centis(1000),
        ext: None,
    };
    let extended = ClientHeader {
        flags: HEADER_EXTEND | HEADER_VERSION2,
        amount: Amount::Bytes(1000),
        ext: Some(ext()),
        ..plain.clone()
    };
    let mut datagram = vec![0u8; UDP_HDR_LEN];
    UdpHeader { id: (1 << 33) + 7, sec: 1_700_000_000, usec: 999_999 }.write(&mut datagram).unwrap();
    datagram.extend(
        ClientHeader { flags: extended.flags | HEADER_SEQNO64B | HEADER_UDPTESTS, ..extended.clone() }
            .encode(UDP_HDR_LEN),
    );
    let mut fin = vec![0u8; UDP_HDR_LEN];
    UdpHeader { id: -42, sec: 1, usec: 2 }.write(&mut fin).unwrap();
    let report = ServerReport {
        flags: HEADER_VERSION1 | HEADER_SEQNO64B | SERVER_HEADER_EXTEND,
        total_bytes: 26_800,
        stop: SecUsec { whole: 10, micros: 5 },
        errors: 3,
        out_of_order: 1,
        datagrams: (1 << 32) + 134,
        jitter: SecUsec { whole: 0, micros: 2 },
        cnt_transit: 134,
        ..Default::default()
    };
    let ack = ClientAck { flags: 0, version_u: ClientHeader::VERSION_U, version_l: ClientHeader::VERSION_L };
    vec![plain.encode(0), extended.encode(0), datagram, fin, report.encode(), ack.encode().to_vec()]
}

/// One edit of a mutation: what to do, where (modulo the length) and with which byte.
#[derive(Clone, Debug)]
enum Edit {
    Flip(usize, u8),
    Set(usize, u8),
    Insert(usize, u8),
    Remove(usize),
    Truncate(usize),
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        (any::<usize>(), 0u8..8).prop_map(|(i, b)| Edit::Flip(i, b)),
        (any::<usize>(), any::<u8>()).prop_map(|(i, v)| Edit::Set(i, v)),
        (any::<usize>(), any::<u8>()).prop_map(|(i, v)| Edit::Insert(i, v)),
        any::<usize>().prop_map(Edit::Remove),
        any::<usize>().prop_map(Edit::Truncate),
    ]
}

fn apply(mut v: Vec<u8>, edits: &[Edit]) -> Vec<u8> {
    for e in edits {
        let n = v.len();
        match *e {
            Edit::Flip(i, b) if n > 0 => v[i % n] ^= 1 << b,
            Edit::Set(i, x) if n > 0 => v[i % n] = x,
            Edit::Insert(i, x) => v.insert(i % (n + 1), x),
            Edit::Remove(i) if n > 0 => {
                v.remove(i % n);
            }
            Edit::Truncate(i) => v.truncate(i % (n + 1)),
            _ => {}
        }
    }
    v
}

/// Random bytes (up to 320, past the longest header and report) or a mutated seed.
fn input() -> impl Strategy<Value = Vec<u8>> {
    let seeds = seeds();
    prop_oneof![
        proptest::collection::vec(any::<u8>(), 0..320),
        (0..seeds.len(), proptest::collection::vec(edit(), 1..5))
            .prop_map(move |(i, edits)| apply(seeds[i].clone(), &edits)),
    ]
}

/// Runs `check` on [`CASES`] inputs from a fixed seed (the same inputs every run).
fn run(check: fn(&[u8])) {
    let config = Config { cases: CASES, failure_persistence: None, ..Config::default() };
    let mut runner = TestRunner::new_with_rng(config, TestRng::deterministic_rng(RngAlgorithm::ChaCha));
    runner
        .run(&input(), |bytes| {
            check(&bytes);
            Ok(())
        })
        .unwrap();
}

#[test]
fn seeds_are_valid_messages() {
    // The mutations start from real messages: each seed decodes as what it is.
    let s = seeds();
    assert!(ClientHeader::decode(&s[0]).is_ok_and(|h| h.ext.is_none()));
    assert_eq!(
        ClientHeader::tcp_len(u32::from_be_bytes([s[1][0], s[1][1], s[1][2], s[1][3]])),
        Ok(HeaderLen::Bytes(TCP_EXT_HEADER_LEN))
    );
    assert!(ClientHeader::decode(&s[2][UDP_HDR_LEN..]).is_ok_and(|h| h.ext.is_some()));
    assert_eq!(UdpHeader::read(&s[3], true).unwrap().id, -42);
    assert_eq!(ServerReport::decode(&s[4]).unwrap().datagrams, (1 << 32) + 134);
    assert!(ClientAck::decode(&s[5]).unwrap().is_some());
}

#[test]
fn tcp_stream_starts_survive_random_and_mutated_input() {
    run(tcp_stream_start);
}

#[test]
fn udp_datagrams_survive_random_and_mutated_input() {
    run(udp_datagram);
}

#[test]
fn server_replies_survive_random_and_mutated_input() {
    run(server_reply);
}
