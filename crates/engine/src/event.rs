//! What the engine tells its caller while a test runs.
//!
//! Renderers (text, `-J`, live views, the history store) are observers: the engine hands them
//! the same schema values in the same order, so every output is computed from one set of
//! numbers.

use crate::error::EngineError;
use serde_json::Value;
use std::net::SocketAddr;
use wireperf_protocol::schema::{Connected, Interval, Start, TestReport};

/// One step of a test.
#[derive(Debug)]
pub enum Event<'a> {
    /// Client: about to connect (`Connecting to host …`).
    Connecting {
        /// Host as typed.
        host: &'a str,
        /// Port.
        port: u16,
    },
    /// Client: the control connection is up.
    ControlConnected {
        /// The control connection's TCP MSS.
        mss: u32,
    },
    /// Server: waiting for a client (`Server listening on …`).
    Listening {
        /// Port.
        port: u16,
        /// 1-based test number.
        test_no: u64,
    },
    /// Server: a client's control connection was accepted.
    Accepted {
        /// Client address.
        host: String,
        /// Client control port.
        port: u16,
    },
    /// A data stream is connected.
    StreamConnected(&'a Connected),
    /// Server: the client asked for a watch of this host (`wireperf_watch`: `--why`, the live
    /// view), sent just before [`Event::TestStart`]; [`Observer::watch_results`] follows the
    /// end. A stock client never asks, so a server starts no watcher for it.
    WatchRequested,
    /// All streams are up; the test starts now.
    TestStart(&'a Start),
    /// The `-O` period ended (`-i 0` verbose prints a line).
    OmitEnded,
    /// One reporting interval.
    Interval(&'a Interval),
    /// The test is over; the report is complete (server: its own view, before results are
    /// sent back).
    End(&'a TestReport),
    /// Server: a test failed; the server goes on.
    TestFailed(&'a EngineError),
}

/// What a server sends back for `--get-server-output`.
#[derive(Clone, Debug, PartialEq)]
pub enum ServerOutput {
    /// The text the server printed for this test.
    Text(String),
    /// The server's `-J` document for this test.
    Json(Value),
}

/// Receives the engine's events.
pub trait Observer {
    /// Called for every event, in order, on the thread running the test.
    fn event(&mut self, ev: Event<'_>);

    /// Server only: the output to return to a client that asked for it, called after
    /// [`Event::End`].
    fn server_output(&mut self) -> Option<ServerOutput> {
        None
    }

    /// Server only: the watch extension to return with the results, called after
    /// [`Event::End`] when the client asked for it (`wireperf_watch`, `--why`). The engine
    /// does not know its shape: the caller's watcher fills it.
    fn watch_results(&mut self) -> Option<Value> {
        None
    }

    /// Client only: the server's watch extension, when it sent one; called before
    /// [`Event::End`].
    fn peer_watch(&mut self, _watch: &Value) {}

    /// Server only: a client asked for latency echo ports (`wireperf_latency`, `--latency`);
    /// the observer may start an echo service for `client` on `local`'s address and return
    /// the offer to send before CREATE_STREAMS (`None`: no offer, the client falls back to
    /// connect-time probes). The service is the observer's to stop at [`Event::End`] or when
    /// it is dropped; the engine does not know its shape.
    fn latency_offer(&mut self, _client: SocketAddr, _local: SocketAddr) -> Option<Value> {
        None
    }

    /// Client only: the server's latency offer, before the data connections are opened. The
    /// observer may probe the idle path here (the server waits for the streams meanwhile).
    fn peer_latency_offer(&mut self, _offer: &Value) {}
}

/// An observer that ignores everything (tests, selftest phases that render elsewhere).
#[derive(Debug, Default)]
pub struct NullObserver;

impl Observer for NullObserver {
    fn event(&mut self, _ev: Event<'_>) {}
}

/// How a run ended: the report as far as it got, and the error if it failed.
#[derive(Debug)]
pub struct Outcome {
    /// The `-J` document (partial on failure: `start` as far as known).
    pub report: TestReport,
    /// Set when the test failed.
    pub error: Option<EngineError>,
}
