//! Server side of `--latency`: offers a client that asks (`wireperf_latency`) a latency echo
//! for its test, and closes it when the test ends.
//!
//! The echo itself is [`crate::echo::EchoServer`] (a UDP echo and one TCP
//! request/response connection, for this test's client only, rate- and size-capped). This
//! observer only ties its life to the test's: started at the parameters, stopped at
//! [`Event::End`] or when the test's observer is dropped (a test that failed midway).

use std::net::SocketAddr;

use crate::echo::EchoServer;
use serde_json::Value;
use wireperf_engine::{Event, Observer, ServerOutput};

/// Wraps a server test's observer with the latency echo.
pub struct ServerEcho {
    inner: Box<dyn Observer + Send>,
    echo: Option<EchoServer>,
}

impl ServerEcho {
    /// Wraps the observer of one server test.
    pub fn new(inner: Box<dyn Observer + Send>) -> Self {
        Self { inner, echo: None }
    }
}

impl Observer for ServerEcho {
    fn event(&mut self, ev: Event<'_>) {
        if matches!(ev, Event::End(_))
            && let Some(e) = self.echo.take()
        {
            e.stop();
        }
        self.inner.event(ev);
    }

    fn server_output(&mut self) -> Option<ServerOutput> {
        self.inner.server_output()
    }

    fn watch_results(&mut self) -> Option<Value> {
        self.inner.watch_results()
    }

    fn latency_offer(&mut self, client: SocketAddr, local: SocketAddr) -> Option<Value> {
        if let Some(old) = self.echo.take() {
            old.stop();
        }
        let echo = EchoServer::start_random(client.ip(), local.ip()).ok()?;
        let offer = echo.offer().to_json();
        self.echo = Some(echo);
        Some(offer)
    }
}
