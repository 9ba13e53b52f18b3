//! iperf3's text output (placeholder until the report crate's renderer is wired in).

use crate::lower::OutputOpts;
use crate::output::Sink;
use wireperf_engine::{Event, Observer, ServerOutput};
use wireperf_protocol::TestParams;

/// Prints iperf3-layout text as events arrive.
pub struct TextObserver {
    sink: Sink,
    server: bool,
    collected: String,
}

impl TextObserver {
    /// For a client.
    pub fn client(sink: Sink, _out: &OutputOpts, _p: &TestParams) -> Self {
        Self { sink, server: false, collected: String::new() }
    }
    /// For a server test.
    pub fn server(sink: Sink, _out: &OutputOpts) -> Self {
        Self { sink, server: true, collected: String::new() }
    }
}

impl Observer for TextObserver {
    fn event(&mut self, ev: Event<'_>) {
        let text = match ev {
            Event::Connecting { host, port } => format!("Connecting to host {host}, port {port}\n"),
            Event::Accepted { host, port } => format!("Accepted connection from {host}, port {port}\n"),
            Event::StreamConnected(c) => format!(
                "[{:>3}] local {} port {} connected to {} port {}\n",
                c.socket, c.local_host, c.local_port, c.remote_host, c.remote_port
            ),
            Event::End(r) => format!("{:?}\n", r.end.sum_received.as_ref().map(|s| s.bytes)),
            _ => String::new(),
        };
        if self.server {
            self.collected.push_str(&text);
        }
        self.sink.lines(&text, None);
    }
    fn server_output(&mut self) -> Option<ServerOutput> {
        Some(ServerOutput::Text(self.collected.clone()))
    }
}
