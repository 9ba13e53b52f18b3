//! What each iperf 2 parser of network input must survive, written once for both runners:
//! the cargo-fuzz targets `fuzz/fuzz_targets/iperf2_*.rs` include this file, and
//! `fuzz_inputs.rs` feeds it seeded random and mutated inputs in every `cargo test`.
//!
//! Nothing may panic; what decodes must re-encode to bytes that decode back to it (a test
//! header to the same bytes again: its encoder canonicalises a time word of exactly
//! `0x8000_0000`, which no encoder writes), so a parser cannot read more (or other) fields than
//! the encoder writes.

use wireperf_iperf2::wire::{ClientAck, ClientHeader, HeaderLen, MAX_HEADER_LEN, ServerReport, UDP_HDR_LEN, UdpHeader};

/// The start of a TCP stream as the iperf 2 server reads it: the header length from the
/// first word, then a header of that length (bounded by what arrived). The same bytes are also
/// tried as the header ack a client may read.
pub fn tcp_stream_start(data: &[u8]) {
    if let Some(&[a, b, c, d]) = data.get(..4)
        && let Ok(HeaderLen::Bytes(n)) = ClientHeader::tcp_len(u32::from_be_bytes([a, b, c, d]))
    {
        assert!(n <= MAX_HEADER_LEN, "announced {n} bytes, above iperf 2's limit");
        if let Ok(h) = ClientHeader::decode(&data[..n.max(4).min(data.len())]) {
            client_header(&h);
        }
    }
    if let Ok(h) = ClientHeader::decode(data) {
        client_header(&h);
    }
    ack(data);
}

/// One datagram as the UDP server reads it: the datagram header either way (32/64-bit
/// sequence numbers), and the test header that follows it in a client's first datagram.
pub fn udp_datagram(data: &[u8]) {
    for seq64 in [false, true] {
        if let Ok(h) = UdpHeader::read(data, seq64) {
            assert!(h.sent_secs().is_finite());
            let mut b = [0u8; UDP_HDR_LEN];
            h.write(&mut b).expect("16 bytes hold a header");
            assert_eq!(UdpHeader::read(&b, true), Ok(h), "the 64-bit form keeps every sequence number");
        }
    }
    if let Some(Ok(h)) = data.get(UDP_HDR_LEN..).map(ClientHeader::decode) {
        client_header(&h);
    }
}

/// What a UDP client reads after its FIN: the server report, or a stale header ack.
pub fn server_reply(data: &[u8]) {
    if let Ok(r) = ServerReport::decode(data) {
        let _ = r.lost_percent();
        assert_eq!(ServerReport::decode(&r.encode()).as_ref(), Ok(&r), "report re-encodes");
    }
    ack(data);
}

fn ack(data: &[u8]) {
    if let Ok(Some(a)) = ClientAck::decode(data) {
        assert_eq!(ClientAck::decode(&a.encode()), Ok(Some(a)), "ack re-encodes");
    }
}

fn client_header(h: &ClientHeader) {
    let _ = (h.peer_version(), h.is_v1_bidir(), h.upper(), h.amount.seconds());
    let bytes = h.encode(0);
    let again = ClientHeader::decode(&bytes).expect("an encoded header decodes");
    assert_eq!(again.encode(0), bytes, "header re-encodes");
}
