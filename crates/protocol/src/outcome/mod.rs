//! One finished test, per direction, read once from its `-J` document.
//!
//! Every reader of a finished test — the suite's verdicts and text, history's stored columns,
//! the exporter's metrics, the HTML report — needs the same few figures per direction: what
//! the sender sent, what the receiver got, how long it took, retransmits, UDP loss. They all
//! read them from [`TestOutcome`], so the rules for finding them in `end` live here once:
//!
//! - iperf3 names its sums from the writing host's point of view: `sum_sent`/`sum_received` are
//!   the sender's and the receiver's count of the *first* direction — the test's direction, or
//!   in a `--bidir` test the one the writing host sends on — and `*_bidir_reverse` the other.
//!   UDP adds `sum`, which mixes the sender's bytes and rate with the receiver's time, jitter
//!   and loss; iperf3 before 3.10 wrote only that one for UDP.
//! - A document written by wireperf's iperf 2 mode ([`Peer::Iperf2`]) uses the same keys
//!   differently: iperf 2 exchanges no TCP totals, so `sum_sent` is what the writing host sent
//!   and `sum_received` what it received, both counted by that host. In a full-duplex test the
//!   two describe opposite directions, and a TCP upload has no receiver's count at all (a UDP
//!   upload has the server's reports, kept per stream in `udp_receiver`).
//!
//! Each [`Tally`] says whose count it is ([`Counter`]) and which host measured it ([`Side`]),
//! so a reader that falls back to the sender's rate (an iperf 2 upload) does so visibly.
//!
//! [`words`] holds the one human rate format and the one percent change.

pub mod words;

#[cfg(test)]
mod tests;

use serde::Serialize;

use crate::schema::{Summary, TestReport};

/// What wireperf's iperf 2 mode appends to `start.version`, so a reader of the document knows
/// its sums follow iperf 2's rules (see the module docs).
pub const IPERF2_MODE: &str = "(iperf 2 mode)";

/// One end of a test.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Side {
    /// The end that connected (`connecting_to` in `start`).
    Client,
    /// The end that accepted (`accepted_connection` in `start`).
    Server,
}

impl Side {
    /// The side a document was written by: servers record `accepted_connection`.
    pub fn of(report: &TestReport) -> Side {
        if report.start.accepted_connection.is_some() && report.start.connecting_to.is_none() {
            Side::Server
        } else {
            Side::Client
        }
    }

    /// `client` or `server`.
    pub fn as_str(self) -> &'static str {
        match self {
            Side::Client => "client",
            Side::Server => "server",
        }
    }

    /// The other end.
    pub fn peer(self) -> Side {
        match self {
            Side::Client => Side::Server,
            Side::Server => Side::Client,
        }
    }

    /// The direction of a stream (or sum) this side's document marks `sender: sends`.
    pub fn direction(self, sends: bool) -> Direction {
        if sends == (self == Side::Client) { Direction::Upload } else { Direction::Download }
    }
}

/// Which way data moved, always seen from the client: upload is client → server.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// The client sends (plain `-c`).
    Upload,
    /// The server sends (`-R`).
    Download,
    /// Both (`--bidir`); a test's direction, never a [`Flow`]'s.
    Bidir,
}

impl Direction {
    /// `upload`, `download`, `bidir`.
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::Upload => "upload",
            Direction::Download => "download",
            Direction::Bidir => "bidir",
        }
    }

    /// Parses [`Direction::as_str`].
    pub fn parse(s: &str) -> Option<Direction> {
        match s {
            "upload" => Some(Direction::Upload),
            "download" => Some(Direction::Download),
            "bidir" => Some(Direction::Bidir),
            _ => None,
        }
    }

    /// The side that sends in this direction.
    fn sender(self) -> Side {
        if self == Direction::Download { Side::Server } else { Side::Client }
    }

    /// Upload ↔ download.
    fn reverse(self) -> Direction {
        if self == Direction::Download { Direction::Upload } else { Direction::Download }
    }
}

/// What wrote the document's sums.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Peer {
    /// iperf3 or wireperf's own engine: the results exchange gives both ends' counts.
    Iperf3,
    /// wireperf's iperf 2 mode: each host's own counts only.
    Iperf2,
}

impl Peer {
    /// Reads the marker [`IPERF2_MODE`] from `start.version`.
    pub fn of(report: &TestReport) -> Peer {
        if report.start.version.ends_with(IPERF2_MODE) { Peer::Iperf2 } else { Peer::Iperf3 }
    }
}

/// Whose count of the bytes a [`Tally`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Counter {
    /// Bytes handed to the network.
    Sender,
    /// Bytes that arrived.
    Receiver,
}

/// One count of a direction's bytes.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Tally {
    /// Bytes.
    pub bytes: u64,
    /// The `seconds` key: how long the counting stream ran.
    pub seconds: f64,
    /// The `end` key: the counting side's elapsed time.
    pub end: f64,
    /// Rate, bit/s, as the document gives it.
    pub bits_per_second: f64,
    /// Whose count it is. A `received` tally counted by the sender is iperf3's old UDP `sum`,
    /// the only total such documents have.
    pub counted_by: Counter,
    /// The host that measured it.
    pub measured_by: Side,
}

impl Tally {
    fn new(s: &Summary, counted_by: Counter, measured_by: Side) -> Tally {
        Tally {
            bytes: s.bytes,
            seconds: s.seconds,
            end: s.end,
            bits_per_second: s.bits_per_second,
            counted_by,
            measured_by,
        }
    }
}

/// UDP loss and jitter of a direction, as its receiver measured them.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Udp {
    /// Jitter, milliseconds (iperf3's unit).
    pub jitter_ms: f64,
    /// Datagrams lost.
    pub lost_packets: Option<i64>,
    /// Datagrams the loss is counted against (iperf3's `sum`: what the sender sent).
    pub packets: Option<i64>,
    /// Datagrams as the receiver counted them (`sum_received`).
    pub receiver_packets: Option<i64>,
    /// Lost, percent.
    pub lost_percent: Option<f64>,
    /// Datagrams out of order.
    pub out_of_order: Option<i64>,
    /// The host that measured them (the receiver).
    pub measured_by: Side,
}

impl Udp {
    /// From the summary that carries the loss (`mixed`, else `received`), when it has jitter:
    /// a summary without jitter is a sender's, whose loss fields are placeholders.
    fn new(mixed: Option<&Summary>, received: Option<&Summary>, measured_by: Side) -> Option<Udp> {
        let has_jitter = |s: &&Summary| s.jitter_ms.is_some();
        let src = mixed.filter(has_jitter).or(received.filter(has_jitter))?;
        Some(Udp {
            jitter_ms: src.jitter_ms.unwrap_or_default(),
            lost_packets: src.lost_packets,
            packets: src.packets,
            receiver_packets: received.or(mixed).and_then(|s| s.packets),
            lost_percent: src.lost_percent,
            out_of_order: src.out_of_order,
            measured_by,
        })
    }
}

/// One direction of a test.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Flow {
    /// [`Direction::Upload`] or [`Direction::Download`].
    pub direction: Direction,
    /// The sender's count, when the document has it.
    pub sent: Option<Tally>,
    /// The receiver's count, when the document has it.
    pub received: Option<Tally>,
    /// TCP retransmits counted by the sender (absent for UDP or when not measured).
    pub retransmits: Option<u64>,
    /// UDP loss and jitter (absent for TCP).
    pub udp: Option<Udp>,
}

impl Flow {
    /// The receiver's rate, bit/s: what a user means by "speed".
    pub fn goodput(&self) -> Option<f64> {
        self.received.map(|t| t.bits_per_second)
    }

    /// The receiver's count, else the sender's (an iperf 2 upload has no other);
    /// [`Tally::counted_by`] says which.
    pub fn best(&self) -> Option<&Tally> {
        self.received.as_ref().or(self.sent.as_ref())
    }
}

/// CPU use over the test, percent of one CPU.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Cpu {
    /// The host that wrote the document.
    pub host_percent: f64,
    /// Its peer (0 on a server: iperf3 servers do not learn the client's).
    pub remote_percent: f64,
}

/// A finished test: its directions and what it ran.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TestOutcome {
    /// Which end wrote the document.
    pub written_by: Side,
    /// Whose rules its sums follow.
    pub peer: Peer,
    /// `TCP` or `UDP` as the document says (`TCP` when it does not say).
    pub protocol: String,
    /// The test's direction.
    pub direction: Direction,
    /// Streams per direction, when the document says.
    pub streams: Option<u32>,
    /// The test's `-t`, when the document says.
    pub requested_seconds: Option<u32>,
    /// The directions, in the document's order: the first is the one `sum_sent`/`sum_received`
    /// describe (iperf 2: the writing host's sending direction).
    pub flows: Vec<Flow>,
    /// CPU use, when reported.
    pub cpu: Option<Cpu>,
}

impl TestOutcome {
    /// Reads a document, taking the writing side from `start` ([`Side::of`]).
    pub fn from_report(report: &TestReport) -> TestOutcome {
        TestOutcome::new(report, Side::of(report))
    }

    /// Reads a document written by `written_by`.
    pub fn new(report: &TestReport, written_by: Side) -> TestOutcome {
        let ts = report.start.test_start.as_ref();
        let protocol = ts.map(|t| t.protocol.clone()).filter(|p| !p.is_empty()).unwrap_or_else(|| "TCP".to_string());
        let peer = Peer::of(report);
        let (direction, flows) = match peer {
            Peer::Iperf3 => {
                let direction = direction(report);
                (direction, iperf3_flows(report, written_by, direction))
            }
            Peer::Iperf2 => {
                // Its sums say which ways data went (its intervals and `test_start` may not:
                // `-d`/`-r` and a `-J` without `-i` leave no trace there).
                let flows = iperf2_flows(report, written_by);
                let direction = match flows.as_slice() {
                    [one] => one.direction,
                    [_, _] => Direction::Bidir,
                    _ => direction(report),
                };
                (direction, flows)
            }
        };
        TestOutcome {
            written_by,
            peer,
            protocol,
            direction,
            streams: ts.map(|t| t.num_streams),
            requested_seconds: ts.map(|t| t.duration),
            flows,
            cpu: report
                .end
                .cpu_utilization_percent
                .as_ref()
                .map(|c| Cpu { host_percent: c.host_total, remote_percent: c.remote_total }),
        }
    }

    /// The flow going `direction`.
    pub fn flow(&self, direction: Direction) -> Option<&Flow> {
        self.flows.iter().find(|f| f.direction == direction)
    }

    /// Whether this was a UDP test.
    pub fn is_udp(&self) -> bool {
        self.protocol.eq_ignore_ascii_case("udp")
    }

    /// How long the test ran: the latest `end` of any count, else the requested `-t`.
    pub fn seconds(&self) -> Option<f64> {
        let tallies = self.flows.iter().flat_map(|f| [f.sent, f.received]).flatten();
        let measured = tallies.map(|t| t.end).fold(0.0, f64::max);
        if measured > 0.0 { Some(measured) } else { self.requested_seconds.map(f64::from) }
    }
}

/// The test's direction: bidir when there is a reverse sum, download with `-R`.
fn direction(report: &TestReport) -> Direction {
    let e = &report.end;
    let bidir = e.sum_sent_bidir_reverse.is_some()
        || e.sum_received_bidir_reverse.is_some()
        || e.sum_bidir_reverse.is_some()
        || report.intervals.iter().any(|i| i.sum_bidir_reverse.is_some());
    if bidir {
        Direction::Bidir
    } else if report.start.test_start.as_ref().is_some_and(|t| t.reverse != 0) {
        Direction::Download
    } else {
        Direction::Upload
    }
}

fn iperf3_flows(report: &TestReport, writer: Side, direction: Direction) -> Vec<Flow> {
    let e = &report.end;
    let first = if direction == Direction::Bidir { writer.direction(true) } else { direction };
    let pairs = [
        (first, e.sum_sent.as_ref(), e.sum_received.as_ref(), e.sum.as_ref()),
        (
            first.reverse(),
            e.sum_sent_bidir_reverse.as_ref(),
            e.sum_received_bidir_reverse.as_ref(),
            e.sum_bidir_reverse.as_ref(),
        ),
    ];
    pairs.into_iter().filter_map(|(d, s, r, m)| iperf3_flow(d, s, r, m)).collect()
}

/// One iperf3 direction from its sender's, receiver's and mixed (UDP `sum`) summaries.
fn iperf3_flow(
    direction: Direction,
    sent: Option<&Summary>,
    received: Option<&Summary>,
    mixed: Option<&Summary>,
) -> Option<Flow> {
    if sent.is_none() && received.is_none() && mixed.is_none() {
        return None;
    }
    let (sender, receiver) = (direction.sender(), direction.sender().peer());
    // The mixed sum's bytes and rate are the sender's count: a stand-in for a missing sent
    // sum, and the only total an old UDP document has for the receiver's.
    let by_sender = |s: &Summary| Tally::new(s, Counter::Sender, sender);
    let udp = Udp::new(mixed, received, receiver);
    Some(Flow {
        direction,
        sent: sent.or(mixed).map(by_sender),
        received: received.map(|s| Tally::new(s, Counter::Receiver, receiver)).or_else(|| mixed.map(by_sender)),
        retransmits: if udp.is_some() { None } else { sent.and_then(|s| s.retransmits) },
        udp,
    })
}

/// iperf 2: `sum_sent` is the writer's sending direction, `sum_received` its receiving one,
/// both counted by the writer. `sum` (UDP) copies one of them and adds loss: from the server's
/// reports (the peer received what the writer sent; each also fills a stream's
/// `udp_receiver`, the peer's count), else from the writer's own receiving.
fn iperf2_flows(report: &TestReport, writer: Side) -> Vec<Flow> {
    let e = &report.end;
    let peer_counts = peer_received(report, writer.peer());
    let loss_on_sent = e.sum_sent.is_some() && peer_counts.is_some();
    let mut flows = Vec::with_capacity(2);
    if let Some(s) = &e.sum_sent {
        let udp = if loss_on_sent { Udp::new(e.sum.as_ref(), None, writer.peer()) } else { None };
        flows.push(Flow {
            direction: writer.direction(true),
            sent: Some(Tally::new(s, Counter::Sender, writer)),
            received: peer_counts,
            retransmits: if udp.is_some() { None } else { s.retransmits },
            udp,
        });
    }
    if let Some(r) = &e.sum_received {
        let udp = if loss_on_sent { None } else { Udp::new(e.sum.as_ref(), None, writer) };
        flows.push(Flow {
            direction: writer.direction(false),
            sent: None,
            received: Some(Tally::new(r, Counter::Receiver, writer)),
            retransmits: None,
            udp,
        });
    }
    flows
}

/// The peer's count of what the writer sent over UDP: the iperf 2 server reports in the
/// streams' `udp_receiver`, added up as iperf 2's own sums are (bytes over the longest time).
fn peer_received(report: &TestReport, peer: Side) -> Option<Tally> {
    let reports: Vec<&Summary> = report.end.streams.iter().filter_map(|s| s.udp_receiver.as_ref()).collect();
    if reports.is_empty() {
        return None;
    }
    let bytes = reports.iter().map(|r| r.bytes).sum::<u64>();
    let end = reports.iter().map(|r| r.end).fold(0.0, f64::max);
    let seconds = reports.iter().map(|r| r.seconds).fold(0.0, f64::max);
    let bits_per_second = if end > 0.0 { bytes as f64 * 8.0 / end } else { 0.0 };
    Some(Tally { bytes, seconds, end, bits_per_second, counted_by: Counter::Receiver, measured_by: peer })
}
