//! The exactness rules the tests assert, each written once.
//!
//! Over loopback nothing is lost in TCP, so every byte one end counted as written the other
//! counted as read: per stream, per direction's sum, and in both ends' reports alike (each
//! report joins its own half with the half the peer sent in the results exchange, so the two
//! reports must tell the same story). UDP may lose datagrams even on loopback (a receiver off
//! the CPU while its socket buffer fills), so its rule is the accounting: received + lost =
//! sent, in whole datagrams of the test's length. Every interval an end reported adds up to
//! what its end says it moved.

use super::recorder::Seen;
use super::run::Run;
use wireperf_protocol::schema::{EndStream, Summary, TestReport};

/// The bytes a `-n` budget has the senders of one direction write, by the rule of
/// crates/engine/src/stream/budget.rs: a sender claims each `block`-byte block before writing
/// it, and a claim succeeds while the bytes claimed before it are below the budget, so the
/// senders write whole blocks up to the first block that reaches or passes the budget (iperf3's
/// `-n 10M -l 300K` is 35 blocks, 10752000 bytes).
pub fn whole_blocks_for(budget: u64, block: u64) -> u64 {
    budget.div_ceil(block) * block
}

/// What one TCP test moved: each direction's exact total.
#[derive(Debug)]
pub struct TcpTotals {
    /// The first direction (the client's sending one, or with `-R` the server's).
    pub forward: u64,
    /// `--bidir`: the other direction.
    pub reverse: Option<u64>,
}

/// What one UDP test's streams moved, in datagrams.
#[derive(Debug)]
pub struct UdpTotals {
    /// Sent (the sender's count).
    pub sent: u64,
    /// Arrived (the receiver's bytes in datagrams).
    pub received: u64,
    /// Reported lost.
    pub lost: u64,
    /// Refused by the sender's kernel (never sent, so never lost either).
    pub sender_drops: u64,
}

/// The streams of a test and which end sends on them, from its parameters.
struct Shape {
    streams: usize,
    /// `--bidir`: the first `split` streams go one way, the rest the other.
    split: usize,
    /// The client sends on the first `split` streams.
    client_sends_first: bool,
}

impl Shape {
    fn of(run: &Run) -> Self {
        let p = &run.params;
        let parallel = p.parallel as usize;
        let streams = if p.bidirectional { 2 * parallel } else { parallel };
        Shape { streams, split: parallel, client_sends_first: p.bidirectional || !p.reverse }
    }

    /// True when the client (`client`) or the server sends on stream `i`.
    fn sends(&self, client: bool, i: usize) -> bool {
        let client_sends = (i < self.split) == self.client_sends_first;
        client_sends == client
    }
}

/// Both reports of a TCP test, checked to the byte. Returns each direction's total.
pub fn tcp_exact(run: &Run) -> TcpTotals {
    let shape = Shape::of(run);
    let mut totals = Vec::new();
    for (client, report) in [(true, &run.client), (false, &run.server)] {
        let ctx = format!("{}: the {}'s report", run.what, if client { "client" } else { "server" });
        let end = &report.end;
        assert_eq!(end.streams.len(), shape.streams, "{ctx}: streams in end: {end:#?}");
        for (i, s) in end.streams.iter().enumerate() {
            let (tx, rx) = (tcp_side(&ctx, i, &s.sender), tcp_side(&ctx, i, &s.receiver));
            // Under a budget a stream may find it spent by the others before its first block.
            let timed = run.params.time > 0;
            assert!(tx.bytes > 0 || !timed, "{ctx}: stream {i} moved nothing in a timed test: {s:#?}");
            assert_eq!(tx.bytes, rx.bytes, "{ctx}: stream {i}: bytes its sender wrote, bytes its receiver read");
            assert_eq!(tx.sender, shape.sends(client, i), "{ctx}: stream {i}: `sender` says who sent");
        }
        let (first, second) = end.streams.split_at(shape.split.min(end.streams.len()));
        let forward = tcp_sum(&format!("{ctx}, sum_sent/sum_received"), first, &end.sum_sent, &end.sum_received);
        let reverse = run.params.bidirectional.then(|| {
            let what = format!("{ctx}, the _bidir_reverse sums");
            tcp_sum(&what, second, &end.sum_sent_bidir_reverse, &end.sum_received_bidir_reverse)
        });
        if !run.params.bidirectional {
            assert_eq!(end.sum_sent_bidir_reverse, None, "{ctx}: a reverse sum without --bidir");
        }
        intervals_add_up(&ctx, report, if client { &run.client_seen } else { &run.server_seen }, |s, local_sends| {
            let side = if local_sends { &s.sender } else { &s.receiver };
            side.as_ref().map(|x| (x.socket, x.bytes))
        });
        totals.push(TcpTotals { forward, reverse });
    }
    let (c, s) = (&run.client.end, &run.server.end);
    for (i, (cs, ss)) in c.streams.iter().zip(&s.streams).enumerate() {
        let bytes = |x: &Option<Summary>| x.as_ref().map(|x| x.bytes);
        let ctx = format!("{}: stream {i}, the client's and the server's reports", run.what);
        assert_eq!(bytes(&cs.sender), bytes(&ss.sender), "{ctx}: sent");
        assert_eq!(bytes(&cs.receiver), bytes(&ss.receiver), "{ctx}: received");
    }
    paired(run, shape.streams);
    let server = totals.pop().expect("the server's totals");
    let client = totals.pop().expect("the client's totals");
    assert_eq!((client.forward, client.reverse), (server.forward, server.reverse), "{}: the sums", run.what);
    client
}

fn tcp_side<'a>(ctx: &str, i: usize, side: &'a Option<Summary>) -> &'a Summary {
    side.as_ref().unwrap_or_else(|| panic!("{ctx}: stream {i} has no sender or no receiver object"))
}

/// One direction's TCP sums: each the sum of its streams, and equal to each other.
fn tcp_sum<'a>(ctx: &str, streams: &[EndStream], sent: &'a Option<Summary>, received: &'a Option<Summary>) -> u64 {
    let sum = |x: &'a Option<Summary>| x.as_ref().unwrap_or_else(|| panic!("{ctx}: a sum is missing"));
    let (sent, received) = (sum(sent), sum(received));
    let tx: u64 = streams.iter().filter_map(|s| s.sender.as_ref()).map(|s| s.bytes).sum();
    let rx: u64 = streams.iter().filter_map(|s| s.receiver.as_ref()).map(|s| s.bytes).sum();
    assert_eq!(sent.bytes, tx, "{ctx}: the sent sum is its streams' sender bytes");
    assert_eq!(received.bytes, rx, "{ctx}: the received sum is its streams' receiver bytes");
    assert_eq!(sent.bytes, received.bytes, "{ctx}: sent and received");
    assert_eq!(
        sent.sender,
        streams.first().and_then(|s| s.sender.as_ref()).is_some_and(|s| s.sender),
        "{ctx}: `sender`"
    );
    sent.bytes
}

/// Both reports of a UDP test whose datagrams all have `len` bytes, checked to the datagram.
pub fn udp_exact(run: &Run, len: u64) -> UdpTotals {
    let shape = Shape::of(run);
    let mut totals = Vec::new();
    for (client, report) in [(true, &run.client), (false, &run.server)] {
        let ctx = format!("{}: the {}'s report", run.what, if client { "client" } else { "server" });
        let start = report.start.test_start.as_ref().expect("test_start");
        assert_eq!(u64::from(start.blksize), len, "{ctx}: the datagram length");
        let end = &report.end;
        assert_eq!(end.streams.len(), shape.streams, "{ctx}: streams in end: {end:#?}");
        let mut t = UdpTotals { sent: 0, received: 0, lost: 0, sender_drops: 0 };
        for (i, s) in end.streams.iter().enumerate() {
            let ctx = format!("{ctx}: stream {i}");
            let (tx, rx) = udp_sides(&ctx, s);
            let sent = count(tx.packets);
            assert!(sent > 0, "{ctx}: nothing sent: {s:#?}");
            assert_eq!(tx.bytes, sent * len, "{ctx}: the sender's bytes are its datagrams of {len} bytes");
            assert_eq!(rx.bytes % len, 0, "{ctx}: the receiver's bytes ({}) are whole datagrams", rx.bytes);
            assert_eq!(rx.duplicates, Some(0), "{ctx}: loopback duplicates nothing");
            let (received, lost) = (rx.bytes / len, count(tx.lost_packets));
            assert_eq!(received + lost, sent, "{ctx}: received {received} + lost {lost} = sent {sent}");
            assert_eq!(rx.lost_packets, tx.lost_packets, "{ctx}: the receiver's and the stream's loss");
            assert_eq!(tx.sender, shape.sends(client, i), "{ctx}: `sender` says who sent");
            t.sent += sent;
            t.received += received;
            t.lost += lost;
            t.sender_drops += tx.sender_drops.unwrap_or(0);
        }
        let sum = end.sum.as_ref().expect("end.sum");
        let sent_sum = end.sum_sent.as_ref().expect("end.sum_sent");
        let received_sum = end.sum_received.as_ref().expect("end.sum_received");
        assert_eq!((sum.bytes, count(sum.packets)), (t.sent * len, t.sent), "{ctx}: end.sum bytes and datagrams");
        assert_eq!(count(sum.lost_packets), t.lost, "{ctx}: end.sum lost");
        assert_eq!((sent_sum.bytes, count(sent_sum.packets)), (t.sent * len, t.sent), "{ctx}: end.sum_sent");
        assert_eq!(received_sum.bytes, t.received * len, "{ctx}: end.sum_received bytes");
        assert_eq!(count(received_sum.lost_packets), t.lost, "{ctx}: end.sum_received lost");
        intervals_add_up(&ctx, report, if client { &run.client_seen } else { &run.server_seen }, |s, local_sends| {
            let side = if local_sends { &s.udp } else { &s.udp_receiver };
            side.as_ref().map(|x| (x.socket, x.bytes))
        });
        totals.push(t);
    }
    let (c, s) = (&run.client.end, &run.server.end);
    for (i, (cs, ss)) in c.streams.iter().zip(&s.streams).enumerate() {
        let ctx = format!("{}: stream {i}, the client's and the server's reports", run.what);
        let figures = |s: &EndStream| {
            let (tx, rx) = udp_sides(&ctx, s);
            (tx.bytes, tx.packets, tx.lost_packets, rx.bytes)
        };
        assert_eq!(figures(cs), figures(ss), "{ctx}: (sent bytes, sent datagrams, lost, received bytes)");
    }
    paired(run, shape.streams);
    let server = totals.pop().expect("the server's totals");
    let client = totals.pop().expect("the client's totals");
    let key = |t: &UdpTotals| (t.sent, t.received, t.lost);
    assert_eq!(key(&client), key(&server), "{}: (sent, received, lost) in the two reports", run.what);
    client
}

fn udp_sides<'a>(ctx: &str, s: &'a EndStream) -> (&'a Summary, &'a Summary) {
    match (&s.udp, &s.udp_receiver) {
        (Some(tx), Some(rx)) => (tx, rx),
        _ => panic!("{ctx}: no udp or no wireperf_udp_receiver object: {s:#?}"),
    }
}

/// A datagram count of the report (`i64` there, as iperf3's JSON has it).
fn count(n: Option<i64>) -> u64 {
    n.and_then(|n| u64::try_from(n).ok()).expect("a datagram count of at least 0")
}

/// The intervals an end reported are those its observer saw, every stream is in each, and per
/// stream they add up to the bytes that end moved itself. `local(stream, sends)` is the socket
/// id and the bytes of `end.streams[]`'s sending (`sends`) or receiving side; both sides carry
/// this end's socket id, and the intervals say whether this end sends on it.
fn intervals_add_up(
    ctx: &str,
    report: &TestReport,
    seen: &Seen,
    local: impl Fn(&EndStream, bool) -> Option<(Option<i32>, u64)>,
) {
    assert_eq!(seen.intervals, report.intervals, "{ctx}: the intervals the observer saw");
    assert!(!report.intervals.is_empty(), "{ctx}: no intervals");
    for (i, s) in report.end.streams.iter().enumerate() {
        let socket = local(s, true).and_then(|(socket, _)| socket).expect("a stream's socket id");
        let mine: Vec<_> = report.intervals.iter().flat_map(|iv| &iv.streams).filter(|x| x.socket == socket).collect();
        assert_eq!(mine.len(), report.intervals.len(), "{ctx}: stream {i} (socket {socket}) in every interval");
        let moved = local(s, mine[0].sender).map(|(_, bytes)| bytes);
        let summed = mine.iter().map(|x| x.bytes).sum::<u64>();
        assert_eq!(Some(summed), moved, "{ctx}: stream {i}: its intervals' bytes, its own end bytes");
    }
}

/// The two reports list the same connections in the same order (the client's local port is
/// the server's remote one), so comparing their streams index by index compares one stream.
fn paired(run: &Run, streams: usize) {
    let (c, s) = (&run.client.start.connected, &run.server.start.connected);
    assert_eq!((c.len(), s.len()), (streams, streams), "{}: connected streams", run.what);
    for (i, (c, s)) in c.iter().zip(s).enumerate() {
        let ends = ((c.local_port, c.remote_port), (s.remote_port, s.local_port));
        assert_eq!(ends.0, ends.1, "{}: stream {i} is not the same connection in both reports", run.what);
    }
    assert_eq!(&run.client_seen.connected, c, "{}: the client's StreamConnected events", run.what);
    assert_eq!(&run.server_seen.connected, s, "{}: the server's StreamConnected events", run.what);
}
