//! One probe's outcome → Prometheus text (OpenMetrics, via `prometheus-client`).
//!
//! Two sets of names describe the same numbers:
//! - wireperf's own, blackbox-exporter style: `probe_success`, `probe_duration_seconds`, and
//!   `wireperf_*` gauges with a `direction` label (`upload`/`download`), so `bidir` tests and
//!   `reverse` tests fit one schema; only published when the test succeeded.
//! - the iperf3 exporter's (`iperf3_up`, `iperf3_sent_bytes`, …, labels `target` and `port`),
//!   published as that exporter does (zeros on failure), so existing dashboards keep working.
//!
//! A series (`repeat=N`, N ≥ 2) adds `wireperf_series_*` gauges per direction (the mean
//! throughput, its 95 % confidence interval, the standard deviation, the tests counted); every
//! other metric keeps meaning one test, the series' last, so dashboards built on them read a
//! series probe as they read a single test. With one test no `wireperf_series_*` appears.
//!
//! [`METRICS`] lists every name with its help text; `docs/monitoring.md` is written from it.

use crate::failure::Failure;
use crate::results::{Flow, ProbeResults};
use crate::series::Series;
use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::info::Info;
use prometheus_client::registry::Registry;
use std::sync::atomic::AtomicU64;
use std::time::Duration;
use wireperf_protocol::outcome::{Tally, Udp};
use wireperf_stats::Summary;

/// The content type of [`render`]'s output.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// Every metric a probe can publish: (name as scraped, help).
pub const METRICS: [(&str, &str); 45] = [
    ("probe_success", "1 if the test ran to the end and reported totals, else 0"),
    ("probe_duration_seconds", "How long the probe took, including waiting for a slot"),
    ("wireperf_probe_info", "The test that ran: protocol, streams per direction, test length (seconds), peer address"),
    ("wireperf_probe_failure_info", "Why the probe failed: reason (a fixed set) and message"),
    ("wireperf_sent_bytes", "Bytes the sender of this direction sent"),
    ("wireperf_sent_seconds", "Seconds the sender of this direction sent for"),
    ("wireperf_sent_bits_per_second", "Sender's average rate of this direction"),
    ("wireperf_received_bytes", "Bytes the receiver of this direction received"),
    ("wireperf_received_seconds", "Seconds the receiver of this direction received for"),
    ("wireperf_received_bits_per_second", "Receiver's average rate of this direction: the throughput"),
    ("wireperf_retransmits", "TCP segments the sender retransmitted (TCP only)"),
    ("wireperf_udp_jitter_seconds", "UDP jitter seen by the receiver (UDP only)"),
    ("wireperf_udp_packets", "UDP datagrams sent (UDP only)"),
    ("wireperf_udp_lost_packets", "UDP datagrams lost (UDP only)"),
    ("wireperf_udp_lost_ratio", "UDP datagrams lost, as a fraction of those sent (UDP only)"),
    ("wireperf_cpu_utilization_ratio", "CPU used by the test, host=local (the exporter) or remote (the target)"),
    ("iperf3_up", "iperf3 exporter: was the last probe successful (1 for success, 0 for failure)"),
    ("iperf3_sent_seconds", "iperf3 exporter: total seconds spent sending packets"),
    ("iperf3_sent_bytes", "iperf3 exporter: total sent bytes for the last test run"),
    ("iperf3_received_seconds", "iperf3 exporter: total seconds spent receiving packets"),
    ("iperf3_received_bytes", "iperf3 exporter: total received bytes for the last test run"),
    ("iperf3_retransmits", "iperf3 exporter: total retransmits for the last test run (TCP only)"),
    ("iperf3_sent_packets", "iperf3 exporter: total sent packets for the last UDP test run"),
    ("iperf3_sent_jitter_ms", "iperf3 exporter: jitter in milliseconds for sent packets (UDP)"),
    ("iperf3_sent_lost_packets", "iperf3 exporter: lost packets from the sender in the last UDP test run"),
    ("iperf3_sent_lost_percent", "iperf3 exporter: percentage of packets lost from the sender (UDP)"),
    ("iperf3_received_packets", "iperf3 exporter: total received packets for the last UDP test run"),
    ("iperf3_received_jitter_ms", "iperf3 exporter: jitter in milliseconds for received packets (UDP)"),
    ("iperf3_received_lost_packets", "iperf3 exporter: lost packets at the receiver in the last UDP test run"),
    ("iperf3_received_lost_percent", "iperf3 exporter: percentage of packets lost at the receiver (UDP)"),
    ("wireperf_probe_test_seconds", "Test length the probe asked for after fitting it into the scrape timeout"),
    ("wireperf_probe_streams", "Streams per direction"),
    ("wireperf_latency_idle_p50_seconds", "latency=1: median round trip of the probes before the load"),
    ("wireperf_latency_idle_p99_seconds", "latency=1: 99th percentile round trip before the load"),
    ("wireperf_latency_loaded_p50_seconds", "latency=1: median round trip of the probes under the load"),
    ("wireperf_latency_loaded_p99_seconds", "latency=1: 99th percentile round trip under the load"),
    ("wireperf_latency_added_seconds", "latency=1: loaded minus idle median: what the load's queue added"),
    ("wireperf_latency_rpm", "latency=1: responsiveness under the load, round trips per minute"),
    ("wireperf_latency_grade", "latency=1: the bufferbloat grade as a number, A=1 B=2 C=3 D=4 F=5"),
    ("wireperf_latency_info", "latency=1: the grade, the probe method and the loaded phase"),
    ("wireperf_series_runs", "repeat=N: tests of the series counted in this direction"),
    (
        "wireperf_series_throughput_mean_bits_per_second",
        "repeat=N: mean of the series' throughputs (receiver's rate) in this direction",
    ),
    (
        "wireperf_series_throughput_ci_low_bits_per_second",
        "repeat=N: lower bound of the 95% confidence interval of the mean throughput (Student t)",
    ),
    (
        "wireperf_series_throughput_ci_high_bits_per_second",
        "repeat=N: upper bound of the 95% confidence interval of the mean throughput (Student t)",
    ),
    ("wireperf_series_throughput_stddev_bits_per_second", "repeat=N: sample standard deviation of the throughputs"),
];

/// What one probe did.
#[derive(Clone, Debug)]
pub struct ProbeReport {
    /// Target host as probed.
    pub host: String,
    /// Target port.
    pub port: u16,
    /// A UDP test was asked for.
    pub udp: bool,
    /// Wall time of the whole probe.
    pub duration: Duration,
    /// Test length asked of the server after clamping (0 when no test started).
    pub test_seconds: u32,
    /// The totals, or why there are none.
    pub outcome: Result<ProbeResults, Failure>,
}

type Labels = Vec<(String, String)>;
type FGauge = Gauge<f64, AtomicU64>;

fn help(name: &str) -> &'static str {
    METRICS.iter().find(|(n, _)| *n == name).map_or("", |(_, h)| h)
}

/// Builds the registry of one probe; a helper keeps each metric one line below.
struct Out(Registry);

impl Out {
    fn gauge(&mut self, name: &str, v: f64) {
        let g = FGauge::default();
        g.set(v);
        self.0.register(name, help(name), g);
    }

    fn family(&mut self, name: &str, rows: &[(Labels, f64)]) {
        if rows.is_empty() {
            return;
        }
        let f = Family::<Labels, FGauge>::default();
        for (labels, v) in rows {
            f.get_or_create(labels).set(*v);
        }
        self.0.register(name, help(name), f);
    }

    fn info(&mut self, name: &str, labels: Labels) {
        // prometheus-client appends `_info` itself.
        let base = name.strip_suffix("_info").unwrap_or(name);
        self.0.register(base, help(name), Info::new(labels));
    }
}

fn l(pairs: &[(&str, &str)]) -> Labels {
    pairs.iter().map(|(k, v)| ((*k).to_string(), (*v).to_string())).collect()
}

fn per_flow(flows: &[Flow], f: impl Fn(&Flow) -> Option<f64>) -> Vec<(Labels, f64)> {
    flows.iter().filter_map(|fl| f(fl).map(|v| (l(&[("direction", fl.direction.as_str())]), v))).collect()
}

fn wireperf_metrics(out: &mut Out, r: &ProbeResults, test_seconds: u32) {
    let flows = r.flows();
    out.info(
        "wireperf_probe_info",
        l(&[
            ("protocol", &r.outcome.protocol),
            ("streams", &r.streams().to_string()),
            ("seconds", &test_seconds.to_string()),
            ("peer", r.peer.as_deref().unwrap_or("")),
        ]),
    );
    out.gauge("wireperf_probe_streams", f64::from(r.streams()));
    let sent = |pick: fn(&Tally) -> f64| per_flow(flows, move |f| f.sent.as_ref().map(pick));
    let received = |pick: fn(&Tally) -> f64| per_flow(flows, move |f| f.received.as_ref().map(pick));
    out.family("wireperf_sent_bytes", &sent(|t| t.bytes as f64));
    out.family("wireperf_sent_seconds", &sent(|t| t.seconds));
    out.family("wireperf_sent_bits_per_second", &sent(|t| t.bits_per_second));
    out.family("wireperf_received_bytes", &received(|t| t.bytes as f64));
    out.family("wireperf_received_seconds", &received(|t| t.seconds));
    out.family("wireperf_received_bits_per_second", &received(|t| t.bits_per_second));
    out.family("wireperf_retransmits", &per_flow(flows, |f| f.retransmits.map(|x| x as f64)));
    out.family("wireperf_udp_jitter_seconds", &per_flow(flows, |f| f.udp.map(|u| u.jitter_ms / 1000.0)));
    out.family("wireperf_udp_packets", &per_flow(flows, |f| f.udp.map(|u| udp_packets(&u))));
    out.family("wireperf_udp_lost_packets", &per_flow(flows, |f| f.udp.map(|u| udp_lost(&u))));
    out.family("wireperf_udp_lost_ratio", &per_flow(flows, |f| f.udp.map(|u| udp_lost_percent(&u) / 100.0)));
    if let Some((local, remote)) = r.cpu() {
        out.family(
            "wireperf_cpu_utilization_ratio",
            &[(l(&[("host", "local")]), local), (l(&[("host", "remote")]), remote)],
        );
    }
}

/// The series' gauges, per direction; a direction with one counted test has no interval and
/// publishes none (never a 0).
fn series_metrics(out: &mut Out, s: &Series) {
    let rows = |f: fn(&Summary) -> Option<f64>| -> Vec<(Labels, f64)> {
        s.directions
            .iter()
            .filter_map(|d| f(&d.throughput).map(|v| (l(&[("direction", d.direction.as_str())]), v)))
            .collect()
    };
    out.family("wireperf_series_runs", &rows(|t| Some(t.n as f64)));
    out.family("wireperf_series_throughput_mean_bits_per_second", &rows(|t| Some(t.mean)));
    out.family("wireperf_series_throughput_ci_low_bits_per_second", &rows(|t| t.ci.map(|c| c.0)));
    out.family("wireperf_series_throughput_ci_high_bits_per_second", &rows(|t| t.ci.map(|c| c.1)));
    out.family("wireperf_series_throughput_stddev_bits_per_second", &rows(|t| Some(t.sd)));
}

/// The latency gauges; a figure that was not measured is left out, never published as 0.
fn latency_metrics(out: &mut Out, s: &wireperf_latency::LatencySummary) {
    let secs = |ms: f64| ms / 1000.0;
    let pairs = [
        ("wireperf_latency_idle_p50_seconds", s.idle_ms.map(|p| secs(p.p50))),
        ("wireperf_latency_idle_p99_seconds", s.idle_ms.map(|p| secs(p.p99))),
        ("wireperf_latency_loaded_p50_seconds", s.loaded_ms.map(|p| secs(p.p50))),
        ("wireperf_latency_loaded_p99_seconds", s.loaded_ms.map(|p| secs(p.p99))),
        ("wireperf_latency_added_seconds", s.added_ms.map(secs)),
        ("wireperf_latency_rpm", s.rpm),
        ("wireperf_latency_grade", s.grade.map(grade_number)),
    ];
    for (name, v) in pairs {
        if let Some(v) = v {
            out.gauge(name, v);
        }
    }
    let grade = s.grade.map_or(String::new(), |g| g.to_string());
    out.info("wireperf_latency_info", l(&[("grade", &grade), ("method", &s.method), ("phase", s.phase.name())]));
}

/// A = 1 … F = 5, so an alert can say `wireperf_latency_grade >= 3`.
fn grade_number(g: wireperf_latency::Grade) -> f64 {
    use wireperf_latency::Grade;
    match g {
        Grade::A => 1.0,
        Grade::B => 2.0,
        Grade::C => 3.0,
        Grade::D => 4.0,
        Grade::F => 5.0,
    }
}

// A UDP figure the report left out is published as 0, as the iperf3 exporter does.
fn udp_packets(u: &Udp) -> f64 {
    u.packets.unwrap_or(0) as f64
}

fn udp_lost(u: &Udp) -> f64 {
    u.lost_packets.unwrap_or(0) as f64
}

fn udp_lost_percent(u: &Udp) -> f64 {
    u.lost_percent.unwrap_or(0.0)
}

/// The iperf3 exporter's metrics: the first flow (the one its `sum_sent`/`sum_received` name),
/// zeros on failure, retransmits only for TCP and the packet metrics only for UDP.
fn iperf3_metrics(out: &mut Out, rep: &ProbeReport) {
    let tp = l(&[("target", &rep.host), ("port", &rep.port.to_string())]);
    let one = |v: f64| vec![(tp.clone(), v)];
    let flow = rep.outcome.as_ref().ok().and_then(|r| r.flows().first());
    let (sent, received) = (flow.and_then(|f| f.sent), flow.and_then(|f| f.received));
    let udp = rep.outcome.as_ref().map_or(rep.udp, |r| r.is_udp());
    out.family("iperf3_up", &one(if flow.is_some() { 1.0 } else { 0.0 }));
    out.family("iperf3_sent_seconds", &one(sent.map_or(0.0, |t| t.seconds)));
    out.family("iperf3_sent_bytes", &one(sent.map_or(0.0, |t| t.bytes as f64)));
    out.family("iperf3_received_seconds", &one(received.map_or(0.0, |t| t.seconds)));
    out.family("iperf3_received_bytes", &one(received.map_or(0.0, |t| t.bytes as f64)));
    if !udp {
        out.family("iperf3_retransmits", &one(flow.and_then(|f| f.retransmits).unwrap_or(0) as f64));
        return;
    }
    let u = flow.and_then(|f| f.udp);
    for side in ["sent", "received"] {
        out.family(&format!("iperf3_{side}_packets"), &one(u.as_ref().map_or(0.0, udp_packets)));
        out.family(&format!("iperf3_{side}_jitter_ms"), &one(u.map_or(0.0, |u| u.jitter_ms)));
        out.family(&format!("iperf3_{side}_lost_packets"), &one(u.as_ref().map_or(0.0, udp_lost)));
        out.family(&format!("iperf3_{side}_lost_percent"), &one(u.as_ref().map_or(0.0, udp_lost_percent)));
    }
}

/// Renders one probe as Prometheus text.
pub fn render(rep: &ProbeReport) -> String {
    let mut out = Out(Registry::default());
    out.gauge("probe_success", if rep.outcome.is_ok() { 1.0 } else { 0.0 });
    out.gauge("probe_duration_seconds", rep.duration.as_secs_f64());
    out.gauge("wireperf_probe_test_seconds", f64::from(rep.test_seconds));
    match &rep.outcome {
        Ok(r) => {
            wireperf_metrics(&mut out, r, rep.test_seconds);
            if let Some(s) = &r.series {
                series_metrics(&mut out, s);
            }
            if let Some(s) = &r.latency {
                latency_metrics(&mut out, s);
            }
        }
        Err(f) => out.info("wireperf_probe_failure_info", l(&[("reason", f.reason), ("message", &f.message)])),
    }
    iperf3_metrics(&mut out, rep);
    let mut text = String::new();
    // Writing into a String cannot fail.
    let _ = encode(&mut text, &out.0);
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::{Direction, TestOutcome};
    use crate::series::DirectionSeries;
    use wireperf_protocol::outcome::{Counter, Cpu, Peer, Side};

    fn tally(bytes: u64, secs: f64, counted_by: Counter) -> Option<Tally> {
        let measured_by = if counted_by == Counter::Sender { Side::Client } else { Side::Server };
        Some(Tally {
            bytes,
            seconds: secs,
            end: secs,
            bits_per_second: bytes as f64 * 8.0 / secs,
            counted_by,
            measured_by,
        })
    }

    fn flow(direction: Direction, sent: u64, received: (u64, f64), retransmits: Option<u64>) -> Flow {
        Flow {
            direction,
            sent: tally(sent, 1.0, Counter::Sender),
            received: tally(received.0, received.1, Counter::Receiver),
            retransmits,
            udp: None,
        }
    }

    fn results(protocol: &str, streams: u32, flows: Vec<Flow>, cpu: Option<Cpu>, peer: Option<&str>) -> ProbeResults {
        let outcome = TestOutcome {
            written_by: Side::Client,
            peer: Peer::Iperf3,
            protocol: protocol.into(),
            direction: Direction::Upload,
            streams: Some(streams),
            requested_seconds: Some(1),
            flows,
            cpu,
        };
        ProbeResults { outcome, peer: peer.map(str::to_string), latency: None, series: None }
    }

    fn tcp_ok() -> ProbeReport {
        let flows = vec![
            flow(Direction::Upload, 1000, (990, 1.0), Some(4)),
            flow(Direction::Download, 500, (500, 2.0), Some(0)),
        ];
        let cpu = Some(Cpu { host_percent: 25.0, remote_percent: 50.0 });
        ProbeReport {
            host: "10.1.2.3".into(),
            port: 5201,
            udp: false,
            duration: Duration::from_millis(1500),
            test_seconds: 1,
            outcome: Ok(results("TCP", 2, flows, cpu, Some("10.1.2.3"))),
        }
    }

    fn has(text: &str, line: &str) -> bool {
        text.lines().any(|l| l == line)
    }

    #[test]
    fn success_publishes_both_name_sets() {
        let t = render(&tcp_ok());
        for line in [
            "probe_success 1.0",
            "probe_duration_seconds 1.5",
            "wireperf_probe_test_seconds 1.0",
            "wireperf_received_bits_per_second{direction=\"upload\"} 7920.0",
            "wireperf_received_bits_per_second{direction=\"download\"} 2000.0",
            "wireperf_sent_bytes{direction=\"upload\"} 1000.0",
            "wireperf_retransmits{direction=\"upload\"} 4.0",
            "wireperf_cpu_utilization_ratio{host=\"remote\"} 0.5",
            "wireperf_probe_info{protocol=\"TCP\",streams=\"2\",seconds=\"1\",peer=\"10.1.2.3\"} 1",
            "iperf3_up{target=\"10.1.2.3\",port=\"5201\"} 1.0",
            "iperf3_sent_bytes{target=\"10.1.2.3\",port=\"5201\"} 1000.0",
            "iperf3_received_bytes{target=\"10.1.2.3\",port=\"5201\"} 990.0",
            "iperf3_received_seconds{target=\"10.1.2.3\",port=\"5201\"} 1.0",
            "iperf3_retransmits{target=\"10.1.2.3\",port=\"5201\"} 4.0",
            "# TYPE probe_success gauge",
            "# EOF",
        ] {
            assert!(has(&t, line), "missing {line:?} in\n{t}");
        }
        let samples: Vec<&str> = t.lines().filter(|l| !l.starts_with('#')).collect();
        assert!(!samples.iter().any(|l| l.contains("udp") || l.contains("failure")), "{t}");
    }

    #[test]
    fn failure_publishes_reason_and_iperf3_zeros_only() {
        let mut rep = tcp_ok();
        rep.outcome = Err(Failure::new("refused", "unable to connect to server: Connection refused (os error 111)"));
        rep.test_seconds = 0;
        let t = render(&rep);
        for line in [
            "probe_success 0.0",
            "wireperf_probe_failure_info{reason=\"refused\",message=\"unable to connect to server: Connection refused (os error 111)\"} 1",
            "iperf3_up{target=\"10.1.2.3\",port=\"5201\"} 0.0",
            "iperf3_sent_bytes{target=\"10.1.2.3\",port=\"5201\"} 0.0",
            "iperf3_retransmits{target=\"10.1.2.3\",port=\"5201\"} 0.0",
        ] {
            assert!(has(&t, line), "missing {line:?} in\n{t}");
        }
        assert!(!t.contains("wireperf_sent_bytes") && !t.contains("wireperf_received"), "{t}");
    }

    #[test]
    fn udp_publishes_loss_and_jitter_in_base_units() {
        let udp = Udp {
            jitter_ms: 0.5,
            lost_packets: Some(2),
            packets: Some(200),
            receiver_packets: Some(198),
            lost_percent: Some(1.0),
            out_of_order: None,
            measured_by: Side::Server,
        };
        let flows = vec![Flow { udp: Some(udp), ..flow(Direction::Upload, 1, (1, 1.0), None) }];
        let mut rep = tcp_ok();
        rep.udp = true;
        rep.outcome = Ok(results("UDP", 1, flows, None, None));
        let t = render(&rep);
        for line in [
            "wireperf_udp_jitter_seconds{direction=\"upload\"} 0.0005",
            "wireperf_udp_lost_ratio{direction=\"upload\"} 0.01",
            "wireperf_udp_lost_packets{direction=\"upload\"} 2.0",
            "iperf3_received_jitter_ms{target=\"10.1.2.3\",port=\"5201\"} 0.5",
            "iperf3_sent_lost_percent{target=\"10.1.2.3\",port=\"5201\"} 1.0",
            "iperf3_received_packets{target=\"10.1.2.3\",port=\"5201\"} 200.0",
        ] {
            assert!(has(&t, line), "missing {line:?} in\n{t}");
        }
        assert!(!t.contains("retransmits"), "{t}");
    }

    #[test]
    fn a_failed_udp_probe_keeps_the_iperf3_udp_shape() {
        let mut rep = tcp_ok();
        rep.udp = true;
        rep.outcome = Err(Failure::new("unsupported", "UDP (-u) is not supported yet"));
        let t = render(&rep);
        assert!(has(&t, "iperf3_received_lost_percent{target=\"10.1.2.3\",port=\"5201\"} 0.0"), "{t}");
        assert!(!t.contains("retransmits"), "{t}");
    }

    #[test]
    fn every_published_name_is_documented() {
        let mut rep = with_series(vec![(Direction::Upload, summary(2, 1.0, 0.0, Some((1.0, 1.0))))]);
        let mut all = render(&rep);
        assert!(all.contains("wireperf_series_runs"), "{all}");
        rep.udp = true;
        rep.outcome = Err(Failure::new("timeout", "x"));
        all.push_str(&render(&rep));
        for line in all.lines().filter(|l| l.starts_with("# TYPE ")) {
            let name = line.split_whitespace().nth(2).unwrap();
            let kind = line.split_whitespace().nth(3).unwrap();
            let scraped = if kind == "info" { format!("{name}_info") } else { name.to_string() };
            assert!(METRICS.iter().any(|(n, _)| *n == scraped), "{scraped} is not in METRICS");
        }
    }

    fn summary(n: usize, mean: f64, sd: f64, ci: Option<(f64, f64)>) -> Summary {
        Summary { n, mean, median: mean, sd, min: mean - sd, max: mean + sd, level: 95.0, ci }
    }

    fn with_series(directions: Vec<(Direction, Summary)>) -> ProbeReport {
        let mut rep = tcp_ok();
        if let Ok(r) = rep.outcome.as_mut() {
            let directions = directions
                .into_iter()
                .map(|(direction, throughput)| DirectionSeries { direction, throughput })
                .collect();
            r.series = Some(Series { directions });
        }
        rep
    }

    #[test]
    fn series_gauges_in_the_text_format() {
        let rep = with_series(vec![(Direction::Upload, summary(3, 7920.0, 920.0, Some((5634.5, 10205.5))))]);
        let t = render(&rep);
        // (prometheus-client ends every help text with a full stop.)
        let block = "\
# HELP wireperf_series_runs repeat=N: tests of the series counted in this direction.
# TYPE wireperf_series_runs gauge
wireperf_series_runs{direction=\"upload\"} 3.0
# HELP wireperf_series_throughput_mean_bits_per_second repeat=N: mean of the series' throughputs (receiver's rate) in this direction.
# TYPE wireperf_series_throughput_mean_bits_per_second gauge
wireperf_series_throughput_mean_bits_per_second{direction=\"upload\"} 7920.0
# HELP wireperf_series_throughput_ci_low_bits_per_second repeat=N: lower bound of the 95% confidence interval of the mean throughput (Student t).
# TYPE wireperf_series_throughput_ci_low_bits_per_second gauge
wireperf_series_throughput_ci_low_bits_per_second{direction=\"upload\"} 5634.5
# HELP wireperf_series_throughput_ci_high_bits_per_second repeat=N: upper bound of the 95% confidence interval of the mean throughput (Student t).
# TYPE wireperf_series_throughput_ci_high_bits_per_second gauge
wireperf_series_throughput_ci_high_bits_per_second{direction=\"upload\"} 10205.5
# HELP wireperf_series_throughput_stddev_bits_per_second repeat=N: sample standard deviation of the throughputs.
# TYPE wireperf_series_throughput_stddev_bits_per_second gauge
wireperf_series_throughput_stddev_bits_per_second{direction=\"upload\"} 920.0
";
        assert!(t.contains(block), "no series block in\n{t}");
        // The last test's gauges are published as before.
        assert!(has(&t, "wireperf_received_bits_per_second{direction=\"upload\"} 7920.0"), "{t}");
        assert!(has(&t, "probe_success 1.0"), "{t}");
    }

    #[test]
    fn series_directions_each_get_gauges_and_a_single_test_no_interval() {
        let rep = with_series(vec![
            (Direction::Upload, summary(2, 100.0, 10.0, Some((10.0, 190.0)))),
            (Direction::Download, summary(1, 50.0, 0.0, None)),
        ]);
        let t = render(&rep);
        for line in [
            "wireperf_series_runs{direction=\"upload\"} 2.0",
            "wireperf_series_runs{direction=\"download\"} 1.0",
            "wireperf_series_throughput_mean_bits_per_second{direction=\"download\"} 50.0",
            "wireperf_series_throughput_stddev_bits_per_second{direction=\"download\"} 0.0",
            "wireperf_series_throughput_ci_high_bits_per_second{direction=\"upload\"} 190.0",
        ] {
            assert!(has(&t, line), "missing {line:?} in\n{t}");
        }
        assert!(!t.contains("ci_low_bits_per_second{direction=\"download\"}"), "{t}");
    }

    #[test]
    fn one_test_publishes_no_series_and_a_failed_series_none_either() {
        assert!(!render(&tcp_ok()).contains("wireperf_series"));
        let mut rep = with_series(vec![(Direction::Upload, summary(3, 1.0, 0.0, Some((1.0, 1.0))))]);
        rep.outcome = Err(Failure::new("refused", "round 2 of 3: connection refused"));
        let t = render(&rep);
        assert!(!t.contains("wireperf_series"), "{t}");
        assert!(
            has(&t, "wireperf_probe_failure_info{reason=\"refused\",message=\"round 2 of 3: connection refused\"} 1"),
            "{t}"
        );
    }

    #[test]
    fn latency_gauges_in_seconds_and_unmeasured_ones_left_out() {
        use wireperf_latency::{LatencySummary, Method, Phase, Probe};
        let mut probes: Vec<Probe> = (0..4).map(|_| Probe::new(0.0, Phase::Idle, Some(0.5), Method::UdpEcho)).collect();
        probes.extend((0..4).map(|_| Probe::new(0.0, Phase::Upload, Some(40.5), Method::UdpEcho)));
        let mut rep = tcp_ok();
        if let Ok(r) = rep.outcome.as_mut() {
            r.latency = Some(LatencySummary::compute("udp_echo", Phase::Upload, &probes, &[]));
        }
        let t = render(&rep);
        for line in [
            "wireperf_latency_idle_p50_seconds 0.0005",
            "wireperf_latency_loaded_p99_seconds 0.0405",
            "wireperf_latency_added_seconds 0.04",
            "wireperf_latency_rpm 1481.0",
            "wireperf_latency_grade 3.0",
            "wireperf_latency_info{grade=\"C\",method=\"udp_echo\",phase=\"upload\"} 1",
        ] {
            assert!(has(&t, line), "missing {line:?} in\n{t}");
        }
        // Without idle probes: no idle figure, no added latency, no grade (never a 0).
        let loaded: Vec<Probe> = probes.iter().copied().filter(|p| p.phase == Phase::Upload).collect();
        if let Ok(r) = rep.outcome.as_mut() {
            r.latency = Some(LatencySummary::compute("tcp_connect", Phase::Upload, &loaded, &[]));
        }
        let t = render(&rep);
        assert!(!t.contains("wireperf_latency_idle") && !t.contains("wireperf_latency_grade "), "{t}");
        assert!(has(&t, "wireperf_latency_info{grade=\"\",method=\"tcp_connect\",phase=\"upload\"} 1"), "{t}");
        // No latency asked: no latency metric.
        assert!(!render(&tcp_ok()).contains("wireperf_latency"));
    }
}
