//! `--why`: watch the hosts during a test and name what held each direction back.
//!
//! Client: [`ClientWatch`] wraps the output observer, keeps the server's `wireperf_watch`
//! reply, and after the test the verdicts are printed below iperf3's summary (text) or put
//! under the report's `wireperf` key (`-J`). Server: [`ServerWatch`] samples the host while a
//! test runs and answers a client that asked. Without `--why` nothing here runs on the client,
//! and plain iperf3 output is unchanged.

use std::net::{IpAddr, ToSocketAddrs};
use std::time::Duration;

use serde_json::{Value, json};
use wireperf_doctor::watch::{self, Series, Verdict, Watch, WatchConfig};
use wireperf_engine::{Event, Observer, ServerOutput};
use wireperf_protocol::schema::TestReport;
use wireperf_suite::bottleneck::{self, WatchReply};

/// The server's IP address as the client will reach it (the first resolved one).
pub fn peer_ip(host: &str, port: u16) -> Option<IpAddr> {
    (host, port).to_socket_addrs().ok()?.next().map(|a| a.ip())
}

/// Forwards to the output observer; keeps the far side's watch reply.
pub struct ClientWatch {
    inner: Box<dyn Observer + Send>,
    /// The server's reply, when it sent one.
    pub reply: Option<Value>,
}

impl ClientWatch {
    /// Wraps `inner`.
    pub fn new(inner: Box<dyn Observer + Send>) -> Self {
        Self { inner, reply: None }
    }
}

impl Observer for ClientWatch {
    fn event(&mut self, ev: Event<'_>) {
        self.inner.event(ev);
    }

    fn peer_watch(&mut self, watch: &Value) {
        self.reply = Some(watch.clone());
    }
}

/// The verdicts of a finished client test.
pub fn client_verdicts(report: &TestReport, local: Option<&Series>, reply: Option<&Value>) -> Vec<Verdict> {
    let far: Option<WatchReply> = reply.and_then(bottleneck::parse_reply);
    bottleneck::verdicts(report, local, far.as_ref())
}

/// The text block printed after iperf3's summary.
pub fn render_text(verdicts: &[Verdict]) -> String {
    let mut out = String::from("\n");
    for v in verdicts {
        out.push_str(&watch::render::render(v));
        out.push('\n');
    }
    out
}

/// The `-J` document with the verdicts under `wireperf.bottleneck`.
pub fn json_with_verdicts(report: &TestReport, verdicts: &[Verdict]) -> Value {
    let mut v = serde_json::to_value(report).unwrap_or(Value::Null);
    if let Some(m) = v.as_object_mut() {
        m.insert("wireperf".into(), json!({ "bottleneck": verdicts }));
    }
    v
}

/// Server side: samples this host from the start of a test to its end, and returns the
/// series to a client that asked (`wireperf_watch`). Sampling is a few procfs reads per
/// second on its own thread; the interface facts (which run `tc`/`ethtool`) are read only
/// when a client asked.
pub struct ServerWatch {
    inner: Box<dyn Observer + Send>,
    peer: Option<IpAddr>,
    watch: Option<Watch>,
    series: Option<Series>,
    sender: Option<bottleneck::SenderLimits>,
}

impl ServerWatch {
    /// Wraps the server's output observer for one test.
    pub fn new(inner: Box<dyn Observer + Send>) -> Self {
        Self { inner, peer: None, watch: None, series: None, sender: None }
    }
}

impl Observer for ServerWatch {
    fn event(&mut self, ev: Event<'_>) {
        match &ev {
            Event::Accepted { host, .. } => self.peer = host.parse().ok(),
            Event::TestStart(_) if self.watch.is_none() => {
                let iface = self.peer.and_then(wireperf_doctor::interface_for);
                let cfg = WatchConfig::live(iface, Duration::from_secs(1));
                self.watch = Watch::start(cfg).ok();
            }
            Event::End(r) => {
                self.series = self.watch.take().map(Watch::stop);
                self.sender = bottleneck::sender_limits(&r.end, true);
            }
            _ => {}
        }
        self.inner.event(ev);
    }

    fn server_output(&mut self) -> Option<ServerOutput> {
        self.inner.server_output()
    }

    fn watch_results(&mut self) -> Option<Value> {
        let mut series = self.series.take()?;
        series.facts = watch::facts::read_live(series.iface.as_deref());
        serde_json::to_value(WatchReply { series, tcp_sender: self.sender }).ok()
    }
}

impl Drop for ServerWatch {
    fn drop(&mut self) {
        // A test that failed before its end: stop the sampler thread.
        if let Some(w) = self.watch.take() {
            w.stop();
        }
    }
}
