//! The bottleneck finder wired to a test: start a watch of this host before a test, turn the
//! finished report into per-direction figures, and ask the live rules ([`crate::live_rules`])
//! for a verdict per direction (with the far host's series when a wireperf server sent one).
//!
//! Shared by the client's `--why`, the server, the suite's phases and selftest, so the figures
//! a verdict reads come from one place: the `end` object of the client's report.

use std::net::{IpAddr, ToSocketAddrs};
use std::time::Duration;

use crate::diagnosis::{Direction, Hosts, Verdict};
use crate::host_sample::Series;
use crate::sampler::{Watch, WatchConfig};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use wireperf_doctor::share::{ShareSource, SharedHost};
use wireperf_engine::{Event, Observer, ServerOutput};
use wireperf_latency::engine_echo::ServerEcho;
use wireperf_protocol::schema::{DropUnit, End, Summary, TestReport};

/// What a wireperf server returns under `wireperf_watch`: its host's series, its TCP
/// senders' TCP_INFO "limited-by" times (a client cannot read the far sender's TCP_INFO), and
/// its doctor's findings and link facts for the interface that carried the test.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WatchReply {
    /// The server host's samples.
    pub series: Series,
    /// The server's sending streams, summed (absent when it did not send TCP).
    pub tcp_sender: Option<SenderLimits>,
    /// The server host's doctor (absent from older servers, or when it could not run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<SharedHost>,
}

/// The reply of a server that shares nothing of its host (`--no-share-host`).
pub const DECLINED_KEY: &str = "declined";
/// What the client says for such a server.
pub const DECLINED: &str = "the server shares nothing of its host (it runs with --no-share-host)";
/// What [`crate::live_rules`] say when the far host was not seen; replaced by
/// [`DECLINED`] for a server that declined.
const NOT_SEEN_PREFIX: &str = "the server's host was not seen";

/// What a wireperf server tells a client that asks about its host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HostSharing {
    /// Nothing: no samples, no doctor (`--no-share-host`).
    Nothing,
    /// Its samples and its doctor, read live or from [`ShareSource`]'s fixture.
    Host(ShareSource),
}

impl Default for HostSharing {
    fn default() -> Self {
        HostSharing::Host(ShareSource::default())
    }
}

/// Whether a watch value is a server's refusal to share.
pub fn declined(v: &Value) -> bool {
    v.get(DECLINED_KEY).is_some()
}

/// Says in `verdicts` that the far host declined, where the rules said it was not seen.
pub fn note_declined(verdicts: &mut [Verdict]) {
    for v in verdicts {
        for n in v.not_checked.iter_mut().filter(|n| n.starts_with(NOT_SEEN_PREFIX)) {
            *n = DECLINED.to_string();
        }
    }
}

/// TCP_INFO "limited-by" times of a host's sending streams, summed, µs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SenderLimits {
    /// Time with data in flight.
    pub busy_us: u64,
    /// Waiting for the receiver's window.
    pub rwnd_limited_us: u64,
    /// Waiting for the send buffer.
    pub sndbuf_limited_us: u64,
    /// Of the streams' retransmits, those the receiver reported back as duplicates (TCP_INFO
    /// `dsack_dups`): spurious. `None` when no stream's kernel reported it (or an older
    /// wireperf server sent the reply).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spurious_retransmits: Option<u64>,
    /// The smallest round trip the streams saw (TCP_INFO), µs: the path's base.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_rtt_us: Option<u64>,
    /// The mean of the streams' smoothed round trips, µs: with the base, whether a queue
    /// filled (absent from an older wireperf server's reply).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_rtt_us: Option<u64>,
}

/// Starts watching this host for a test to or from `peer` (the interface is the route's).
/// `None` when the watcher thread cannot start; the caller then reports that nothing was seen.
pub fn start_watch(peer: Option<IpAddr>, interval: Duration) -> Option<Watch> {
    let ((iface, facts), setup_ns) = crate::cost::measured(|| {
        let iface = peer.and_then(wireperf_doctor::interface_for);
        let facts = crate::facts::read_live(iface.as_deref());
        (iface, facts)
    });
    let mut cfg = WatchConfig::live(iface, interval);
    cfg.facts = facts;
    cfg.setup_ns = setup_ns;
    Watch::start(cfg).ok()
}

/// The sending streams' limited-by times in `end`, summed over the streams whose sender is
/// this host sending in `local_sends` direction.
pub fn sender_limits(end: &End, local_sends: bool) -> Option<SenderLimits> {
    let mut out: Option<SenderLimits> = None;
    let (mut rtt_sum, mut rtt_n) = (0u64, 0u64);
    for s in end.streams.iter().filter_map(|s| s.sender.as_ref()).filter(|s| s.sender == local_sends) {
        let Some(busy) = s.busy_time_us else { continue };
        let o = out.get_or_insert_with(SenderLimits::default);
        o.busy_us += busy;
        o.rwnd_limited_us += s.rwnd_limited_us.unwrap_or(0);
        o.sndbuf_limited_us += s.sndbuf_limited_us.unwrap_or(0);
        if let Some(sp) = s.wireperf_spurious_retransmits {
            *o.spurious_retransmits.get_or_insert(0) += sp;
        }
        // A stream whose kernel saw no round trip reports 0: not a base.
        if let Some(m) = s.min_rtt.filter(|m| *m > 0) {
            o.min_rtt_us = Some(o.min_rtt_us.map_or(m, |x| x.min(m)));
        }
        if let Some(m) = s.mean_rtt.filter(|m| *m > 0) {
            rtt_sum += m;
            rtt_n += 1;
        }
    }
    if let Some(o) = out.as_mut() {
        o.mean_rtt_us = (rtt_n > 0).then(|| rtt_sum / rtt_n);
    }
    out
}

/// The directions of a client's report with the figures the rules read. `server_sender` are
/// the far sender's TCP_INFO times from its watch reply.
pub fn directions(report: &TestReport, server_sender: Option<SenderLimits>) -> Vec<Direction> {
    let end = &report.end;
    let udp = report.start.test_start.as_ref().is_some_and(|t| t.protocol == "UDP");
    let reverse = report.start.test_start.as_ref().is_some_and(|t| t.reverse != 0);
    let bidir = end.sum_sent_bidir_reverse.is_some() || end.sum_bidir_reverse.is_some();
    let mut out = Vec::new();
    let forward = (end.sum.as_ref(), end.sum_sent.as_ref(), end.sum_received.as_ref());
    if bidir {
        out.push(direction(true, udp, forward, end, server_sender));
        let back = (
            end.sum_bidir_reverse.as_ref(),
            end.sum_sent_bidir_reverse.as_ref(),
            end.sum_received_bidir_reverse.as_ref(),
        );
        out.push(direction(false, udp, back, end, server_sender));
    } else {
        out.push(direction(!reverse, udp, forward, end, server_sender));
    }
    let probes = report.wireperf_latency.as_ref().and_then(wireperf_latency::LatencySummary::from_json);
    let mut out: Vec<Direction> = out.into_iter().flatten().collect();
    for (i, d) in out.iter_mut().enumerate() {
        // The forward direction's rates are the intervals' `sum`, a bidir test's way back
        // their `sum_bidir_reverse`.
        let back = bidir && i == 1;
        d.interval_bps = report
            .intervals
            .iter()
            .filter_map(|iv| if back { iv.sum_bidir_reverse.as_ref() } else { Some(&iv.sum) })
            .filter(|s| !s.omitted && s.seconds > 0.0)
            .map(|s| s.bits_per_second)
            .collect();
        if let Some(p) = &probes {
            d.round_trips.probe_idle_ms = p.idle_ms.map(|x| x.p50);
            d.round_trips.probe_loaded_ms = p.loaded_ms.map(|x| x.p50);
            d.round_trips.probe_loaded_p99_ms = p.loaded_ms.map(|x| x.p99);
            d.round_trips.one_way_added_ms =
                p.one_way_added_ms.map(|w| if d.client_sends { w.up_ms } else { w.down_ms });
        }
        d.round_trips.shared_with_other_direction = bidir;
    }
    out
}

fn direction(
    client_sends: bool,
    udp: bool,
    (sum, sent, received): (Option<&Summary>, Option<&Summary>, Option<&Summary>),
    end: &End,
    server_sender: Option<SenderLimits>,
) -> Option<Direction> {
    let received = received?;
    let limits = if client_sends { sender_limits(end, true) } else { server_sender };
    let mut d = Direction {
        client_sends,
        udp,
        seconds: received.seconds,
        received_bytes: received.bytes,
        bits_per_second: received.bits_per_second,
        ..Default::default()
    };
    if udp {
        let s = sum.unwrap_or(received);
        d.udp_lost = s.lost_packets.and_then(|v| u64::try_from(v).ok());
        d.udp_packets = sent.and_then(|s| s.packets).or(s.packets).and_then(|v| u64::try_from(v).ok());
        d.socket_drops = s.receiver_socket_drops.or(received.receiver_socket_drops);
        // GRO on the receiving socket: its drops are packets, not datagrams (issue 14).
        let unit = s.wireperf_receiver_socket_drops_unit.or(received.wireperf_receiver_socket_drops_unit);
        d.socket_drops_are_packets = unit == Some(DropUnit::Packets);
    } else {
        d.retransmits = sent.and_then(|s| s.retransmits);
        if let Some(l) = limits {
            d.busy_us = Some(l.busy_us);
            d.rwnd_limited_us = Some(l.rwnd_limited_us);
            d.sndbuf_limited_us = Some(l.sndbuf_limited_us);
            d.spurious_retransmits = l.spurious_retransmits;
            d.round_trips.tcp_min_rtt_us = l.min_rtt_us;
            d.round_trips.tcp_mean_rtt_us = l.mean_rtt_us;
        }
    }
    Some(d)
}

/// Reads a server's `wireperf_watch` value; `None` when it is not one (a newer or older
/// wireperf: the client then reports that the far side was not seen, never fails).
pub fn parse_reply(v: &Value) -> Option<WatchReply> {
    serde_json::from_value(v.clone()).ok()
}

/// One verdict per direction of `report`.
pub fn verdicts(report: &TestReport, client: Option<&Series>, server: Option<&WatchReply>) -> Vec<Verdict> {
    let hosts = Hosts { client, server: server.map(|r| &r.series) };
    directions(report, server.and_then(|r| r.tcp_sender))
        .iter()
        .map(|d| crate::live_rules::diagnose(d, hosts))
        .collect()
}

/// Both hosts' per-CPU load over the test (`{"client": …, "server": …}`, a host that was not
/// watched is absent), as the history stores it for the HTML report's CPU charts.
pub fn cpu_load(client: Option<&Series>, server: Option<&WatchReply>) -> Value {
    let mut m = serde_json::Map::new();
    for (name, s) in [("client", client), ("server", server.map(|r| &r.series))] {
        if let Some(v) = s.filter(|s| s.usable()).and_then(|s| serde_json::to_value(s.cpu_load()).ok()) {
            m.insert(name.into(), v);
        }
    }
    Value::Object(m)
}

/// The server's IP address as a client will reach it (the first resolved one).
pub fn peer_ip(host: &str, port: u16) -> Option<IpAddr> {
    (host.trim_matches(|c| c == '[' || c == ']'), port).to_socket_addrs().ok()?.next().map(|a| a.ip())
}

/// Client side: forwards every event (and the watch reply) to `inner` and keeps the server's
/// watch reply.
pub struct PeerWatch<'a> {
    inner: &'a mut dyn Observer,
    /// The server's `wireperf_watch` value, when it sent one.
    pub reply: Option<Value>,
}

impl<'a> PeerWatch<'a> {
    /// Wraps `inner`.
    pub fn new(inner: &'a mut dyn Observer) -> Self {
        Self { inner, reply: None }
    }

    /// The reply read as a [`WatchReply`].
    pub fn far(&self) -> Option<WatchReply> {
        self.reply.as_ref().and_then(parse_reply)
    }

    /// The server declined to share its host (`--no-share-host`).
    pub fn declined(&self) -> bool {
        self.reply.as_ref().is_some_and(declined)
    }
}

impl Observer for PeerWatch<'_> {
    fn event(&mut self, ev: Event<'_>) {
        self.inner.event(ev);
    }

    fn server_output(&mut self) -> Option<ServerOutput> {
        self.inner.server_output()
    }

    fn peer_watch(&mut self, watch: &Value) {
        self.reply = Some(watch.clone());
        self.inner.peer_watch(watch);
    }
}

/// Server side: samples this host from the start of a test to its end, and returns the
/// series to a client that asked (`wireperf_watch`; nothing runs for a client that did not).
/// Sampling is a few procfs reads per second on its own thread; the interface facts (which
/// run `tc`/`ethtool`) are read only when the client collects the series.
pub struct ServerWatch {
    inner: Box<dyn Observer + Send>,
    share: std::sync::Arc<HostSharing>,
    peer: Option<IpAddr>,
    watch: Option<Watch>,
    series: Option<Series>,
    sender: Option<SenderLimits>,
    /// When the watch started, µs on the monotonic clock the kernel log's stamps use.
    started_us: Option<u64>,
}

impl ServerWatch {
    /// Wraps the server's output observer for one test; `share` says what a client that asks
    /// is told.
    pub fn new(inner: Box<dyn Observer + Send>, share: std::sync::Arc<HostSharing>) -> Self {
        Self { inner, share, peer: None, watch: None, series: None, sender: None, started_us: None }
    }
}

impl Observer for ServerWatch {
    fn event(&mut self, ev: Event<'_>) {
        match &ev {
            Event::Accepted { host, .. } => self.peer = host.parse().ok(),
            // Only for a client that will ask for the series: the watcher is a thread, /proc
            // reads every second and the driver's counters twice, which a stock client never reads.
            Event::WatchRequested if self.watch.is_none() && *self.share != HostSharing::Nothing => {
                let (iface, setup_ns) = crate::cost::measured(|| self.peer.and_then(wireperf_doctor::interface_for));
                let mut cfg = WatchConfig::live(iface, Duration::from_secs(1));
                cfg.setup_ns = setup_ns;
                self.watch = Watch::start(cfg).ok();
                self.started_us = wireperf_doctor::share::log_clock_now_us();
            }
            Event::End(r) => {
                self.series = self.watch.take().map(Watch::stop);
                self.sender = sender_limits(&r.end, true);
            }
            _ => {}
        }
        self.inner.event(ev);
    }

    fn server_output(&mut self) -> Option<ServerOutput> {
        self.inner.server_output()
    }

    fn watch_results(&mut self) -> Option<Value> {
        let source = match &*self.share {
            HostSharing::Nothing => return Some(serde_json::json!({ DECLINED_KEY: true })),
            HostSharing::Host(source) => source,
        };
        let mut series = self.series.take()?;
        // The facts and the doctor run once, after the streams ended: `tc`, `ethtool` and the
        // kernel log are read off the test's time and charged to the watch's cost.
        let ((facts, host), ns) = crate::cost::measured(|| {
            let iface = series.iface.as_deref();
            let (host, link) = wireperf_doctor::share::inspect_for_peer_and_link(iface, source, self.started_us);
            let facts = match link {
                Some(link) => crate::facts::from_link(iface, Some(&link)),
                None => crate::facts::read_live(iface),
            };
            (facts, host)
        });
        series.facts = facts;
        if let Some(c) = series.cost.as_mut() {
            c.charge_edges(ns);
        }
        serde_json::to_value(WatchReply { series, tcp_sender: self.sender, host }).ok()
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

/// A server test's observer with everything a wireperf server offers beside the iperf3
/// protocol: the host watch and its doctor (`--why`, the suite; not with
/// [`HostSharing::Nothing`]) and the latency echo (`--latency`, [`ServerEcho`]). It lives
/// here, not in `wireperf-latency`, because this crate already depends on that one.
pub fn server_observer(
    inner: Box<dyn Observer + Send>,
    share: std::sync::Arc<HostSharing>,
) -> Box<dyn Observer + Send> {
    Box::new(ServerEcho::new(Box::new(ServerWatch::new(inner, share))))
}

#[cfg(test)]
mod tests {
    use super::*;
    use wireperf_protocol::schema::{EndStream, TestStart};

    fn report(reverse: i32, protocol: &str) -> TestReport {
        let mut r = TestReport::default();
        r.start.test_start = Some(TestStart { protocol: protocol.into(), reverse, ..Default::default() });
        r
    }

    #[test]
    fn tcp_upload_reads_the_local_senders_tcp_info() {
        let mut r = report(0, "TCP");
        let snd = Summary {
            sender: true,
            retransmits: Some(7),
            wireperf_spurious_retransmits: Some(3),
            busy_time_us: Some(1_000_000),
            rwnd_limited_us: Some(600_000),
            sndbuf_limited_us: Some(0),
            ..Default::default()
        };
        r.end.streams = vec![EndStream { sender: Some(snd.clone()), ..Default::default() }; 2];
        r.end.sum_sent = Some(Summary { retransmits: Some(7), ..Default::default() });
        r.end.sum_received = Some(Summary { bytes: 1000, bits_per_second: 4000.0, seconds: 2.0, ..Default::default() });
        let d = directions(&r, None);
        assert_eq!(d.len(), 1);
        assert!(d[0].client_sends && !d[0].udp);
        assert_eq!(d[0].retransmits, Some(7));
        assert_eq!(d[0].spurious_retransmits, Some(6), "summed over the two streams");
        assert_eq!((d[0].busy_us, d[0].rwnd_limited_us), (Some(2_000_000), Some(1_200_000)));
    }

    #[test]
    fn round_trips_and_interval_rates_reach_the_rules() {
        let mut r = report(0, "TCP");
        let snd = |min, mean| Summary {
            sender: true,
            busy_time_us: Some(1),
            min_rtt: Some(min),
            mean_rtt: Some(mean),
            ..Default::default()
        };
        r.end.streams = vec![
            EndStream { sender: Some(snd(80, 400)), ..Default::default() },
            EndStream { sender: Some(snd(60, 600)), ..Default::default() },
            // A stream whose kernel saw no round trip reports zeros: no base.
            EndStream { sender: Some(snd(0, 0)), ..Default::default() },
        ];
        r.end.sum_received = Some(Summary::default());
        for (bps, omitted) in [(1e8, true), (4e8, false), (5e8, false)] {
            let mut iv = wireperf_protocol::schema::Interval::default();
            iv.sum.bits_per_second = bps;
            iv.sum.seconds = 1.0;
            iv.sum.omitted = omitted;
            r.intervals.push(iv);
        }
        r.wireperf_latency = Some(serde_json::json!({"bogus": true}));
        let d = &directions(&r, None)[0];
        assert_eq!((d.round_trips.tcp_min_rtt_us, d.round_trips.tcp_mean_rtt_us), (Some(60), Some(500)));
        assert_eq!(d.interval_bps, vec![4e8, 5e8], "omitted intervals are left out");
        assert_eq!(d.round_trips.probe_idle_ms, None, "a value that is no latency summary gives no probes");
    }

    #[test]
    fn download_takes_the_far_senders_limits_from_its_reply() {
        let mut r = report(1, "TCP");
        r.end.sum_received = Some(Summary::default());
        let far = SenderLimits {
            busy_us: 10,
            rwnd_limited_us: 9,
            spurious_retransmits: Some(2),
            min_rtt_us: Some(70),
            mean_rtt_us: Some(450),
            ..Default::default()
        };
        let d = directions(&r, Some(far));
        assert!(!d[0].client_sends);
        assert_eq!((d[0].rwnd_limited_us, d[0].spurious_retransmits), (Some(9), Some(2)));
        assert_eq!((d[0].round_trips.tcp_min_rtt_us, d[0].round_trips.tcp_mean_rtt_us), (Some(70), Some(450)));
        assert_eq!(directions(&r, None)[0].busy_us, None);
    }

    #[test]
    fn udp_reads_loss_and_socket_drops() {
        let mut r = report(0, "UDP");
        r.end.sum = Some(Summary {
            lost_packets: Some(30),
            packets: Some(1000),
            receiver_socket_drops: Some(25),
            ..Default::default()
        });
        r.end.sum_sent = Some(Summary { packets: Some(1000), ..Default::default() });
        r.end.sum_received = Some(Summary { packets: Some(970), ..Default::default() });
        let d = &directions(&r, None)[0];
        assert_eq!((d.udp_lost, d.udp_packets, d.socket_drops), (Some(30), Some(1000), Some(25)));
    }

    #[test]
    fn udp_socket_drops_counted_in_gro_packets_say_so() {
        let mut r = report(0, "UDP");
        let drops = |unit| Summary {
            lost_packets: Some(30),
            packets: Some(1000),
            receiver_socket_drops: Some(25),
            wireperf_receiver_socket_drops_unit: unit,
            ..Default::default()
        };
        r.end.sum_received = Some(Summary { packets: Some(970), ..Default::default() });
        r.end.sum = Some(drops(Some(DropUnit::Packets)));
        assert!(directions(&r, None)[0].socket_drops_are_packets);
        for unit in [Some(DropUnit::Datagrams), None] {
            r.end.sum = Some(drops(unit));
            assert!(!directions(&r, None)[0].socket_drops_are_packets, "{unit:?}");
        }
    }

    #[test]
    fn a_foreign_watch_value_is_not_a_reply() {
        assert!(parse_reply(&serde_json::json!({"series": 5})).is_none());
        let ok = serde_json::to_value(WatchReply::default()).unwrap();
        assert_eq!(parse_reply(&ok), Some(WatchReply::default()));
    }
}
