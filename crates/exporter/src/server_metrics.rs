//! `wireperf -s --metrics ADDR`: the server's counters on `/metrics`.
//!
//! The server's hooks call the [`ServerMetrics`] handle as tests start and end; a background
//! thread serves the registry over HTTP. The handle is cheap to clone and never blocks the
//! serve loop (atomic counters only).

use crate::error::{Error, bind};
use crate::render::CONTENT_TYPE;
use axum::Router;
use axum::http::header;
use axum::routing::get;
use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::info::Info;
use prometheus_client::registry::Registry;
use std::net::SocketAddr;
use std::sync::Arc;
use wireperf_engine::server::Limit;
use wireperf_engine::{EngineError, Outcome};
use wireperf_protocol::schema::End;

/// Every metric on the server's `/metrics`: (name as scraped, help).
pub const SERVER_METRICS: [(&str, &str); 8] = [
    ("wireperf_server_tests_served_total", "Tests that ran to the end"),
    ("wireperf_server_tests_failed_total", "Tests that started and failed (client gone, stream error, interrupt)"),
    (
        "wireperf_server_tests_refused_total",
        "Clients turned away: the server was busy, or the test's parameters were refused (e.g. --server-bitrate-limit)",
    ),
    (
        "wireperf_server_tests_per_client_limited_total",
        "Of the refused: clients whose address already ran --max-tests-per-client tests",
    ),
    ("wireperf_server_received_bytes_total", "Payload bytes the server received in tests"),
    ("wireperf_server_sent_bytes_total", "Payload bytes the server sent in tests"),
    ("wireperf_server_active_tests", "Tests running now"),
    ("wireperf_server_build_info", "Version of the server"),
];

#[derive(Debug, Default)]
struct Counters {
    served: Counter,
    failed: Counter,
    refused: Counter,
    per_client_limited: Counter,
    received: Counter,
    sent: Counter,
    active: Gauge,
}

/// The server's counters; clones share them.
#[derive(Clone, Debug)]
pub struct ServerMetrics {
    c: Arc<Counters>,
    addr: SocketAddr,
}

/// The payload bytes the local side received and sent, from its own `end` object: each
/// stream's local half is the `sender` summary when this side sent and `receiver` otherwise.
pub fn local_bytes(end: &End) -> (u64, u64) {
    let mut received = 0;
    let mut sent = 0;
    for s in &end.streams {
        match (&s.sender, &s.receiver) {
            (Some(snd), _) if snd.sender => sent += snd.bytes,
            (_, Some(rcv)) => received += rcv.bytes,
            _ => {}
        }
    }
    (received, sent)
}

impl ServerMetrics {
    /// Counters that no endpoint serves (for tests, and for callers that render themselves).
    pub fn detached() -> Self {
        Self { c: Arc::default(), addr: SocketAddr::from(([0, 0, 0, 0], 0)) }
    }

    /// Where `/metrics` is served.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// A test started.
    pub fn test_started(&self) {
        self.c.active.inc();
    }

    /// A test ended (call once per [`ServerMetrics::test_started`]).
    pub fn test_done(&self, outcome: &Outcome) {
        self.c.active.dec();
        let (received, sent) = local_bytes(&outcome.report.end);
        self.c.received.inc_by(received);
        self.c.sent.inc_by(sent);
        match &outcome.error {
            None => self.c.served.inc(),
            Some(EngineError::Refused(_) | EngineError::AccessDenied) => self.c.refused.inc(),
            Some(_) => self.c.failed.inc(),
        };
    }

    /// A client was turned away before a test started, because of `limit` if one is known.
    pub fn refused(&self, limit: Option<Limit>) {
        self.c.refused.inc();
        if limit == Some(Limit::MaxTestsPerClient) {
            self.c.per_client_limited.inc();
        }
    }

    /// The `/metrics` text.
    pub fn render(&self) -> String {
        let mut r = Registry::with_prefix("wireperf_server");
        let c = &self.c;
        let h = |i: usize| SERVER_METRICS[i].1;
        r.register("tests_served", h(0), c.served.clone());
        r.register("tests_failed", h(1), c.failed.clone());
        r.register("tests_refused", h(2), c.refused.clone());
        r.register("tests_per_client_limited", h(3), c.per_client_limited.clone());
        r.register("received_bytes", h(4), c.received.clone());
        r.register("sent_bytes", h(5), c.sent.clone());
        r.register("active_tests", h(6), c.active.clone());
        r.register("build", h(7), Info::new(vec![("version".to_string(), env!("CARGO_PKG_VERSION").to_string())]));
        let mut text = String::new();
        let _ = encode(&mut text, &r);
        text
    }
}

/// Starts serving `/metrics` on `addr` in a background thread; returns the handle to count with.
/// Binding happens before this returns, so a bad or busy address is reported at once.
pub fn spawn(addr: &str) -> Result<ServerMetrics, Error> {
    let listener = bind(addr)?;
    let local = listener.local_addr().map_err(Error::Listen)?;
    let metrics = ServerMetrics { addr: local, ..ServerMetrics::detached() };
    let m = metrics.clone();
    let router = Router::new().route(
        "/metrics",
        get(move || {
            let m = m.clone();
            async move { ([(header::CONTENT_TYPE, CONTENT_TYPE)], m.render()) }
        }),
    );
    std::thread::Builder::new()
        .name("wireperf-metrics".into())
        .spawn(move || {
            if let Err(e) = crate::http::serve_blocking(listener, router) {
                eprintln!("wireperf: metrics endpoint stopped: {e}");
            }
        })
        .map_err(Error::Thread)?;
    Ok(metrics)
}

#[cfg(test)]
mod tests {
    use super::*;
    use wireperf_protocol::schema::{EndStream, Summary, TestReport};

    fn summary(bytes: u64, sender: bool) -> Summary {
        Summary { bytes, sender, ..Default::default() }
    }

    fn outcome(streams: Vec<EndStream>, error: Option<EngineError>) -> Outcome {
        let end = End { streams, ..Default::default() };
        Outcome { report: TestReport { end, ..Default::default() }, error }
    }

    #[test]
    fn counts_bytes_by_local_role_and_tests_by_result() {
        let m = ServerMetrics::detached();
        // Stream 1: the client sent, the server received 900; stream 2 (bidir): the server sent 500.
        let recv =
            EndStream { sender: Some(summary(1000, false)), receiver: Some(summary(900, false)), ..Default::default() };
        let send =
            EndStream { sender: Some(summary(500, true)), receiver: Some(summary(480, true)), ..Default::default() };
        for _ in 0..4 {
            m.test_started();
        }
        m.test_done(&outcome(vec![recv, send], None));
        m.test_done(&outcome(vec![], Some(EngineError::RecvTimeout)));
        m.test_done(&outcome(vec![], Some(EngineError::Refused("bitrate too high".into()))));
        m.refused(Some(Limit::MaxTests));
        m.refused(Some(Limit::MaxTestsPerClient));
        let t = m.render();
        for line in [
            "wireperf_server_tests_served_total 1",
            "wireperf_server_tests_failed_total 1",
            "wireperf_server_tests_refused_total 3",
            "wireperf_server_tests_per_client_limited_total 1",
            "wireperf_server_received_bytes_total 900",
            "wireperf_server_sent_bytes_total 500",
            "wireperf_server_active_tests 1",
        ] {
            assert!(t.lines().any(|l| l == line), "missing {line:?} in\n{t}");
        }
        for (name, _) in SERVER_METRICS {
            assert!(t.contains(name), "{name} missing in\n{t}");
        }
    }

    #[test]
    fn spawn_serves_metrics_over_http() {
        let m = spawn("127.0.0.1:0").unwrap();
        m.test_started();
        let addr = m.local_addr();
        let body = http_get(addr, "/metrics");
        assert!(body.contains("wireperf_server_active_tests 1"), "{body}");
        assert!(matches!(spawn(&addr.to_string()), Err(Error::Listen(_))), "a busy address fails at once");
    }

    /// A minimal HTTP/1.0 GET (the tests need no client crate for one request).
    fn http_get(addr: SocketAddr, path: &str) -> String {
        use std::io::{Read, Write};
        let mut s = std::net::TcpStream::connect(addr).unwrap();
        s.set_read_timeout(Some(std::time::Duration::from_secs(5))).unwrap();
        write!(s, "GET {path} HTTP/1.0\r\nHost: x\r\n\r\n").unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).unwrap();
        out
    }
}
