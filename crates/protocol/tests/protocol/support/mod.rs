//! What the protocol's tests are built from, kept apart from the tests (no `#[test]` here):
//! [`Pair`], a client and a server session joined in memory on a virtual clock, and the
//! results a test hands each side.

use std::time::Duration;
use wireperf_protocol::client::{ClientEvent, ClientSession};
use wireperf_protocol::server::{ServerEvent, ServerLimits, ServerSession};
use wireperf_protocol::{Cookie, ExchangeResults, StreamResult, TestParams};

/// Two sessions and a virtual clock.
pub struct Pair {
    pub client: ClientSession,
    pub server: ServerSession,
    pub now: Duration,
    /// Deliver bytes in chunks of at most this size (1 = byte by byte).
    pub chunk: usize,
    pub client_events: Vec<ClientEvent>,
    pub server_events: Vec<ServerEvent>,
}

impl Pair {
    pub fn new(params: &TestParams, chunk: usize) -> Self {
        Self {
            client: ClientSession::new(Cookie::from_entropy([7; 37]), params),
            server: ServerSession::new(Duration::ZERO, ServerLimits::default()),
            now: Duration::ZERO,
            chunk,
            client_events: Vec::new(),
            server_events: Vec::new(),
        }
    }

    /// Moves bytes both ways until neither side has anything to send.
    pub fn pump(&mut self) {
        loop {
            let c2s = self.client.take_output();
            let s2c = self.server.take_output();
            if c2s.is_empty() && s2c.is_empty() {
                break;
            }
            for ch in c2s.chunks(self.chunk.max(1)) {
                self.server.handle_input(self.now, ch).expect("server input");
            }
            for ch in s2c.chunks(self.chunk.max(1)) {
                self.client.handle_input(ch).expect("client input");
            }
            while let Some(e) = self.client.poll_event() {
                self.client_events.push(e);
            }
            while let Some(e) = self.server.poll_event() {
                self.server_events.push(e);
            }
        }
    }

    pub fn advance(&mut self, d: Duration) {
        self.now += d;
    }
}

pub fn results(id: i32, bytes: u64) -> ExchangeResults {
    ExchangeResults {
        cpu_util_total: 1.0,
        sender_has_retransmits: 1,
        streams: vec![StreamResult { id, bytes, retransmits: 0, end_time: 2.0, ..Default::default() }],
        ..Default::default()
    }
}

/// Walks a whole test; returns the events each side saw.
pub fn full_test(params: &TestParams, chunk: usize) -> Pair {
    let mut p = Pair::new(params, chunk);
    p.pump();
    assert!(matches!(p.server_events.as_slice(), [ServerEvent::Cookie(_), ServerEvent::Params(_)]));
    let ServerEvent::Params(got) = &p.server_events[1] else { unreachable!() };
    assert_eq!(**got, *params);
    p.server.accept_params(p.now).unwrap();
    p.pump();
    assert_eq!(p.client_events, vec![ClientEvent::CreateStreams]);
    p.server.start_test(p.now, Some(Duration::from_secs(2))).unwrap();
    p.pump();
    assert_eq!(p.client_events[1..], [ClientEvent::TestStart, ClientEvent::TestRunning]);
    p.advance(Duration::from_secs(2));
    p.client.end_test().unwrap();
    p.pump();
    assert_eq!(p.server_events.last(), Some(&ServerEvent::TestEnd));
    p.server.begin_exchange(p.now).unwrap();
    p.pump();
    assert_eq!(p.client_events.last(), Some(&ClientEvent::ExchangeResults));
    p.client.send_results(&results(1, 1000)).unwrap();
    p.pump();
    let Some(ServerEvent::ClientResults(r)) = p.server_events.last() else { panic!("no client results") };
    assert_eq!(r.streams[0].bytes, 1000);
    p.server.send_results(p.now, &results(1, 999)).unwrap();
    p.pump();
    let n = p.client_events.len();
    assert!(matches!(&p.client_events[n - 2], ClientEvent::ServerResults(r) if r.streams[0].bytes == 999));
    assert_eq!(p.client_events[n - 1], ClientEvent::DisplayResults);
    p.client.done();
    p.pump();
    assert_eq!(p.server_events.last(), Some(&ServerEvent::IperfDone));
    assert!(p.server.is_finished() && p.client.is_finished());
    p
}
