//! One structured record per thing a server operator wants in a log: a test accepted, queued,
//! finished, failed or refused, and connections dropped before they became tests.

use crate::event::Outcome;
use std::net::SocketAddr;
use std::time::Duration;
use wireperf_protocol::schema::TestReport;

/// What happened.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecordKind {
    /// A test started (its control connection got PARAM_EXCHANGE).
    Accepted,
    /// A client waits in the queue for a free slot.
    Queued,
    /// A test ended normally.
    Finished,
    /// A test ended with an error (limits and authentication included).
    Failed,
    /// A client was turned away with the busy answer (full, queue full or timed out,
    /// per-client limit, a stray data connection).
    Refused,
    /// A connection closed or timed out before it became a test.
    Dropped,
}

impl RecordKind {
    /// The lower-case name used in log lines (`event` in JSON).
    pub fn name(self) -> &'static str {
        match self {
            RecordKind::Accepted => "accepted",
            RecordKind::Queued => "queued",
            RecordKind::Finished => "finished",
            RecordKind::Failed => "failed",
            RecordKind::Refused => "refused",
            RecordKind::Dropped => "dropped",
        }
    }
}

/// The server limit that turned a client away, named by its flag.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    /// `--max-tests`: every slot was taken.
    MaxTests,
    /// `--max-tests-per-client`: this address already ran as many tests as it may.
    MaxTestsPerClient,
    /// `--queue-max`: the queue of waiting clients was full.
    QueueMax,
    /// `--queue SECS`: no slot became free while the client waited.
    Queue,
}

impl Limit {
    /// The command-line flag, as shown in log lines (`limit=` / `"limit"`).
    pub fn flag(self) -> &'static str {
        match self {
            Limit::MaxTests => "--max-tests",
            Limit::MaxTestsPerClient => "--max-tests-per-client",
            Limit::QueueMax => "--queue-max",
            Limit::Queue => "--queue",
        }
    }
}

/// One log record.
#[derive(Clone, Debug, PartialEq)]
pub struct ServerRecord {
    /// What happened.
    pub kind: RecordKind,
    /// The test number, once there is a test.
    pub test: Option<u64>,
    /// The peer.
    pub client: Option<SocketAddr>,
    /// How long the test ran (finished/failed) or waited (refused after queueing).
    pub duration: Option<Duration>,
    /// Bytes the test moved (largest direction total).
    pub bytes: Option<u64>,
    /// Why (failed, refused, dropped).
    pub reason: Option<String>,
    /// The iperf3 code the client was told, if any.
    pub i_errno: Option<i32>,
    /// Refusals: the limit that caused it (none for e.g. a stray data connection).
    pub limit: Option<Limit>,
}

impl ServerRecord {
    /// A record with only a kind and a peer.
    pub fn new(kind: RecordKind, client: Option<SocketAddr>) -> Self {
        let client = client.map(canonical);
        Self { kind, test: None, client, duration: None, bytes: None, reason: None, i_errno: None, limit: None }
    }

    /// Sets the reason.
    pub fn because(mut self, reason: impl Into<String>) -> Self {
        self.reason = Some(reason.into());
        self
    }

    /// The record for a test that ended after `duration`.
    pub fn done(test: u64, client: SocketAddr, duration: Duration, outcome: &Outcome) -> Self {
        let (kind, reason, i_errno) = match &outcome.error {
            None => (RecordKind::Finished, None, None),
            Some(e) => (RecordKind::Failed, Some(e.to_string()), Some(e.errno().0)),
        };
        Self {
            kind,
            test: Some(test),
            client: Some(canonical(client)),
            duration: Some(duration),
            bytes: Some(bytes_moved(&outcome.report)),
            reason,
            i_errno,
            limit: None,
        }
    }
}

/// `::ffff:192.0.2.7` (a dual-stack listener's view of an IPv4 client) as `192.0.2.7`.
fn canonical(a: SocketAddr) -> SocketAddr {
    SocketAddr::new(a.ip().to_canonical(), a.port())
}

/// The larger of the two directions' byte totals in a report's `end`.
pub fn bytes_moved(r: &TestReport) -> u64 {
    let b = |s: &Option<wireperf_protocol::schema::Summary>| s.as_ref().map_or(0, |s| s.bytes);
    let e = &r.end;
    let sent = b(&e.sum_sent) + b(&e.sum_sent_bidir_reverse);
    let received = b(&e.sum_received) + b(&e.sum_received_bidir_reverse);
    sent.max(received).max(b(&e.sum))
}
