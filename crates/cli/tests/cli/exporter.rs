//! `wireperf exporter` and `wireperf -s --metrics`, scraped by a real Prometheus (Debian's
//! `prometheus` package) and queried through its HTTP API.

use crate::support::harness::{
    ServerProc, free_port, iperf3, run_client, spawn_iperf3, start_server, wait_for_port_without_connecting, wireperf,
};
use serde_json::Value;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A child process killed (and reaped) when dropped, with its stderr collected.
struct Guard {
    child: Child,
    stderr: Arc<Mutex<Vec<u8>>>,
}

impl Guard {
    fn spawn(cmd: &mut Command) -> Self {
        let mut child = cmd.stdout(Stdio::null()).stderr(Stdio::piped()).spawn().expect("spawn");
        let stderr = Arc::new(Mutex::new(Vec::new()));
        if let Some(mut r) = child.stderr.take() {
            let buf = Arc::clone(&stderr);
            std::thread::spawn(move || {
                let mut chunk = [0u8; 4096];
                while let Ok(n) = std::io::Read::read(&mut r, &mut chunk) {
                    if n == 0 {
                        break;
                    }
                    buf.lock().unwrap().extend_from_slice(&chunk[..n]);
                }
            });
        }
        Self { child, stderr }
    }

    fn stderr_text(&self) -> String {
        String::from_utf8_lossy(&self.stderr.lock().unwrap()).into_owned()
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .timeout_global(Some(Duration::from_secs(20)))
        .http_status_as_error(false)
        .build()
        .into()
}

/// GET `url` with optional query pairs and headers; returns (status, body).
fn get(url: &str, query: &[(&str, &str)], headers: &[(&str, &str)]) -> (u16, String) {
    let mut req = agent().get(url);
    for (k, v) in query {
        req = req.query(*k, *v);
    }
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let mut resp = req.call().unwrap_or_else(|e| panic!("GET {url}: {e}"));
    let status = resp.status().as_u16();
    (status, resp.body_mut().read_to_string().unwrap())
}

/// `wireperf exporter` on a fresh port.
fn start_exporter(extra: &[&str]) -> (Guard, u16) {
    let port = free_port();
    let listen = format!("127.0.0.1:{port}");
    let g = Guard::spawn(Command::new(wireperf()).args(["exporter", "--listen", &listen]).args(extra));
    wait_for_port_without_connecting(port);
    (g, port)
}

/// The value of the first sample line `name{...} value` whose text contains every `needle`.
fn sample(text: &str, name: &str, needles: &[&str]) -> Option<f64> {
    text.lines()
        .filter(|l| l.starts_with(name) && l[name.len()..].starts_with(['{', ' ']))
        .find(|l| needles.iter().all(|n| l.contains(n)))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.parse().ok())
}

fn prometheus_bin() -> PathBuf {
    let p = PathBuf::from("/usr/bin/prometheus");
    assert!(
        p.exists(),
        "Prometheus is not installed: `apt-get install prometheus` (Debian's package provides /usr/bin/prometheus)"
    );
    p
}

/// A Prometheus server scraping `/probe` of the exporter for each target, every 2 s.
struct Prometheus {
    _proc: Guard,
    port: u16,
    _dir: tempfile::TempDir,
}

impl Prometheus {
    /// Scrapes `targets` with 1 s tests every 2 s (job `wireperf`), and `latency_targets` with
    /// 1 s tests and latency probes (`latency=1`, about 4 s each) every 5 s (job
    /// `wireperf_latency`; separate targets, so the one-probe-per-target queue does not hold
    /// the fast job's probes behind the slow ones).
    fn start(exporter: u16, targets: &[String], latency_targets: &[String]) -> Self {
        let bin = prometheus_bin();
        let dir = tempfile::tempdir().unwrap();
        let quoted = |t: &[String]| t.iter().map(|t| format!("'{t}'")).collect::<Vec<_>>().join(", ");
        let (list, latency_list) = (quoted(targets), quoted(latency_targets));
        let relabel = format!(
            "\x20   relabel_configs:\n\
             \x20     - source_labels: [__address__]\n\
             \x20       target_label: __param_target\n\
             \x20     - source_labels: [__param_target]\n\
             \x20       target_label: instance\n\
             \x20     - target_label: __address__\n\
             \x20       replacement: 127.0.0.1:{exporter}\n"
        );
        // A 1 s probe in a 2.8 s scrape timeout: the exporter's budget is 2.55 s (the 0.25 s
        // offset), room for a loaded machine's test set-up and tear-down. At 1.8 s (a 1.55 s
        // budget) every probe timed out for 33 s while four tests ran on two busy cores.
        let config = format!(
            "global:\n  scrape_interval: 3s\n  scrape_timeout: 2800ms\n\
             scrape_configs:\n\
             \x20 - job_name: wireperf\n\
             \x20   metrics_path: /probe\n\
             \x20   params:\n\
             \x20     duration: ['1']\n\
             \x20   static_configs:\n\
             \x20     - targets: [{list}]\n\
             {relabel}\
             \x20 - job_name: wireperf_latency\n\
             \x20   scrape_interval: 5s\n\
             \x20   scrape_timeout: 5s\n\
             \x20   metrics_path: /probe\n\
             \x20   params:\n\
             \x20     duration: ['1']\n\
             \x20     latency: ['1']\n\
             \x20   static_configs:\n\
             \x20     - targets: [{latency_list}]\n\
             {relabel}"
        );
        let cfg_path = dir.path().join("prometheus.yml");
        std::fs::write(&cfg_path, config).unwrap();
        let port = free_port();
        let data = dir.path().join("data");
        let proc = Guard::spawn(
            Command::new(bin)
                .arg(format!("--config.file={}", cfg_path.display()))
                .arg(format!("--storage.tsdb.path={}", data.display()))
                .arg(format!("--web.listen-address=127.0.0.1:{port}"))
                .arg("--log.level=warn"),
        );
        wait_for_port_without_connecting(port);
        // Prometheus answers 503 until its storage and config are loaded.
        let ready = format!("http://127.0.0.1:{port}/-/ready");
        let deadline = Instant::now() + Duration::from_secs(30);
        while get(&ready, &[], &[]).0 != 200 {
            assert!(Instant::now() < deadline, "Prometheus not ready:\n{}", proc.stderr_text());
            std::thread::sleep(Duration::from_millis(100));
        }
        Self { _proc: proc, port, _dir: dir }
    }

    /// An instant query; the raw JSON answer.
    fn query(&self, q: &str) -> Value {
        let url = format!("http://127.0.0.1:{}/api/v1/query", self.port);
        let (status, body) = get(&url, &[("query", q)], &[]);
        assert_eq!(status, 200, "{q}: {body}");
        serde_json::from_str(&body).unwrap()
    }

    /// Waits (bounded) until `q` returns a value ≥ `want` for every one of `n` series.
    fn wait_for(&self, q: &str, want: f64, n: usize, limit: Duration) -> Value {
        let deadline = Instant::now() + limit;
        loop {
            let v = self.query(q);
            let vals = values(&v);
            if vals.len() == n && vals.iter().all(|(_, x)| *x >= want) {
                return v;
            }
            assert!(Instant::now() < deadline, "timed out waiting for {q} >= {want} on {n} series; last answer {v}");
            std::thread::sleep(Duration::from_millis(500));
        }
    }
}

/// (instance, value) of every sample in a vector answer.
fn values(v: &Value) -> Vec<(String, f64)> {
    v.pointer("/data/result")
        .and_then(Value::as_array)
        .map(|rs| {
            rs.iter()
                .map(|r| {
                    let inst = r.pointer("/metric/instance").and_then(Value::as_str).unwrap_or("").to_string();
                    let val =
                        r.pointer("/value/1").and_then(Value::as_str).and_then(|s| s.parse().ok()).unwrap_or(f64::NAN);
                    (inst, val)
                })
                .collect()
        })
        .unwrap_or_default()
}

fn iperf3_server() -> ServerProc {
    start_server(&iperf3(), &[])
}

#[test]
fn prometheus_scrapes_probes_of_wireperf_and_iperf3_servers() {
    let wp = start_server(&wireperf(), &[]);
    let ip = iperf3_server();
    let wp_latency = start_server(&wireperf(), &[]);
    let (exporter, eport) = start_exporter(&["--timeout-offset", "0.25"]);
    let targets = [format!("127.0.0.1:{}", wp.port), format!("127.0.0.1:{}", ip.port)];
    let latency_target = format!("127.0.0.1:{}", wp_latency.port);
    let prom = Prometheus::start(eport, &targets, std::slice::from_ref(&latency_target));

    // Two successful probes per target. (A probe that misses its deadline on a loaded
    // machine is a failed probe, not a failed test; it is shown below.)
    let counted = prom.wait_for("sum_over_time(probe_success{job=\"wireperf\"}[5m])", 2.0, 2, Duration::from_secs(40));
    let failed = prom.query(
        "count_over_time(probe_success{job=\"wireperf\"}[5m]) \
         - sum_over_time(probe_success{job=\"wireperf\"}[5m])",
    );
    if values(&failed).iter().any(|(_, v)| *v > 0.0) {
        eprintln!("some probes failed: {failed}\nexporter log:\n{}", exporter.stderr_text());
    }

    // The throughput of the latest successful test of each target.
    let q = "last_over_time(wireperf_received_bits_per_second{job=\"wireperf\"}[1m])";
    let bps = prom.query(q);
    let got = values(&bps);
    let mut instances: Vec<&str> = got.iter().map(|(i, _)| i.as_str()).collect();
    instances.sort_unstable();
    let mut want: Vec<&str> = targets.iter().map(String::as_str).collect();
    want.sort_unstable();
    assert_eq!(instances, want, "{bps}");
    for (inst, v) in &got {
        assert!(*v > 0.0 && v.is_finite(), "{inst}: no rate published for a test that ran: {v} bit/s");
    }
    // The iperf3 exporter's names carry the same tests: bytes / seconds * 8 is a rate too.
    let compat_q = "max_over_time(iperf3_received_bytes{job=\"wireperf\"}[1m]) \
                    / max_over_time(iperf3_received_seconds{job=\"wireperf\"}[1m]) * 8";
    let compat_answer = prom.query(compat_q);
    let compat = values(&compat_answer);
    assert_eq!(compat.len(), 2, "{compat_answer}");
    for (inst, v) in &compat {
        assert!(*v > 0.0 && v.is_finite(), "{inst}: no iperf3_* rate for a test that ran: {v}");
    }
    let up = prom.query("max_over_time(iperf3_up{job=\"wireperf\"}[1m])");
    assert!(values(&up).len() == 2 && values(&up).iter().all(|(_, v)| *v == 1.0), "{up}");
    // Every scrape was answered within the scrape timeout, failed probes included.
    let up = prom.query("min_over_time(up{job=\"wireperf\"}[5m])");
    assert!(values(&up).len() == 2 && values(&up).iter().all(|(_, v)| *v == 1.0), "{up}");

    // Every query of the shipped Grafana dashboard is valid PromQL over these series, and
    // its throughput panel shows both targets.
    for expr in dashboard_queries() {
        // The fast job's two targets (the latency job's third has its own check below).
        let q = expr.replace("$job", "wireperf").replace("$instance", ".*");
        let v = prom.query(&format!("last_over_time(({q})[1m:1s])"));
        if expr.starts_with("wireperf_received_bits_per_second") {
            assert_eq!(values(&v).len(), 2, "panel query {q}: {v}");
        }
    }

    // Latency under load (`latency=1`) through the wireperf server's echo: idle and loaded
    // round trips, RPM and a grade reach Prometheus as gauges. (Loopback: no figure is
    // asserted beyond being measured.)
    let grade = prom.wait_for("wireperf_latency_grade{job=\"wireperf_latency\"}", 1.0, 1, Duration::from_secs(30));
    assert!(values(&grade).iter().all(|(i, g)| i == &latency_target && (1.0..=5.0).contains(g)), "{grade}");
    for name in ["idle_p50_seconds", "idle_p99_seconds", "loaded_p50_seconds", "loaded_p99_seconds", "rpm"] {
        let v = prom.query(&format!("last_over_time(wireperf_latency_{name}{{job=\"wireperf_latency\"}}[1m])"));
        assert!(values(&v).len() == 1 && values(&v).iter().all(|(_, x)| *x > 0.0 && x.is_finite()), "{name}: {v}");
    }
    let info = prom.query("last_over_time(wireperf_latency_info{job=\"wireperf_latency\"}[1m])");
    let method = info.pointer("/data/result/0/metric/method").and_then(Value::as_str).unwrap_or("");
    assert!(method.starts_with("udp_echo+tcp_rr"), "the probes went through the echo: {info}");
    // The fast job asked for no latency and published none.
    let none = prom.query("wireperf_latency_grade{job=\"wireperf\"}");
    assert!(values(&none).is_empty(), "{none}");

    // The answers a person would see, for the docs.
    eprintln!("wireperf -s on {}, iperf3 -s on {}", targets[0], targets[1]);
    eprintln!("sum_over_time(probe_success[5m]):\n{counted}");
    eprintln!("{q}:\n{bps}");
    eprintln!("{compat_q}:\n{compat_answer}");
    drop(prom);
}

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every panel query in deploy/grafana/wireperf-dashboard.json.
fn dashboard_queries() -> Vec<String> {
    let path = repo_root().join("deploy/grafana/wireperf-dashboard.json");
    let dash: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let mut out = Vec::new();
    for panel in dash["panels"].as_array().unwrap() {
        for t in panel["targets"].as_array().unwrap() {
            out.push(t["expr"].as_str().unwrap().to_string());
        }
    }
    assert!(out.len() >= 8, "{out:?}");
    out
}

#[test]
fn deploy_prometheus_config_is_valid() {
    let promtool = prometheus_bin().with_file_name("promtool");
    let cfg = repo_root().join("deploy/prometheus/prometheus.yml");
    let out = Command::new(promtool).arg("check").arg("config").arg(&cfg).output().unwrap();
    assert!(out.status.success(), "{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
}

#[test]
fn bad_targets_fail_fast_with_a_reason_and_a_log_line() {
    let (exporter, eport) = start_exporter(&[]);
    let probe = format!("http://127.0.0.1:{eport}/probe");
    let timeout_hdr = [("X-Prometheus-Scrape-Timeout-Seconds", "2")];

    // Refused: nothing listens on a port that was free a moment ago.
    let closed = format!("127.0.0.1:{}", free_port());
    let t = Instant::now();
    let (status, body) = get(&probe, &[("target", &closed)], &timeout_hdr);
    assert_eq!(status, 200);
    assert_eq!(sample(&body, "probe_success", &[]), Some(0.0), "{body}");
    assert!(body.contains("reason=\"refused\""), "{body}");
    assert_eq!(sample(&body, "iperf3_up", &[]), Some(0.0), "{body}");
    // Fast failure is the subject: a refused connect answers at once, and 2 s (the scrape
    // timeout) is what Prometheus would wait before giving up on the probe.
    assert!(t.elapsed() < Duration::from_secs(2), "refused probe took {:?}", t.elapsed());

    // Silent: accepts the connection, never answers. Ends at the deadline (2 s - 0.5 s).
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let silent_target = silent.local_addr().unwrap().to_string();
    let t = Instant::now();
    let (_, body) = get(&probe, &[("target", &silent_target), ("duration", "1")], &timeout_hdr);
    let took = t.elapsed();
    assert_eq!(sample(&body, "probe_success", &[]), Some(0.0), "{body}");
    assert!(body.contains("reason=\"timeout\""), "{body}");
    // The exporter's contract: answer at its deadline (1.5 s), never before the test had its
    // chance (100 ms for timer slack) and before the scraper's own 2 s timeout, past which the
    // answer would be lost.
    assert!(took >= Duration::from_millis(1400) && took < Duration::from_millis(2000), "silent probe took {took:?}");

    // Unresolvable: fails as a resolve error, or at the deadline if the resolver is slow.
    let t = Instant::now();
    let (_, body) = get(&probe, &[("target", "no-such-host.invalid")], &timeout_hdr);
    assert_eq!(sample(&body, "probe_success", &[]), Some(0.0), "{body}");
    assert!(body.contains("reason=\"resolve\"") || body.contains("reason=\"timeout\""), "{body}");
    assert!(t.elapsed() < Duration::from_secs(2), "unresolvable probe took {:?}", t.elapsed());

    // A request without a target is refused outright.
    let (status, body) = get(&probe, &[], &[]);
    assert_eq!((status, body.trim()), (400, "'target' parameter must be specified"));

    // The exporter's own counters saw all of it, and it logged one line per failure.
    let (_, metrics) = get(&format!("http://127.0.0.1:{eport}/metrics"), &[], &[]);
    assert_eq!(sample(&metrics, "wireperf_exporter_probes_total", &["failure"]), Some(3.0), "{metrics}");
    assert_eq!(sample(&metrics, "wireperf_exporter_probes_total", &["bad_request"]), Some(1.0), "{metrics}");
    assert_eq!(sample(&metrics, "wireperf_exporter_probe_failures_total", &["\"refused\""]), Some(1.0), "{metrics}");
    assert_eq!(sample(&metrics, "wireperf_exporter_probes_in_flight", &[]), Some(0.0), "{metrics}");
    // The log line of a probe is written as its answer goes out, and read from the pipe by a
    // collector thread: wait (bounded) for all three before counting them.
    let needles = [closed.as_str(), silent_target.as_str(), "no-such-host.invalid"];
    let waited = Instant::now();
    let mut log = exporter.stderr_text();
    while !needles.iter().all(|n| log.contains(n)) && waited.elapsed() < Duration::from_secs(3) {
        std::thread::sleep(Duration::from_millis(50));
        log = exporter.stderr_text();
    }
    for needle in needles {
        let lines: Vec<&str> = log.lines().filter(|l| l.contains(needle)).collect();
        assert_eq!(lines.len(), 1, "one log line for {needle} in:\n{log}");
        assert!(lines[0].contains("failed"), "{}", lines[0]);
    }
}

#[test]
fn one_probe_at_a_time_per_target() {
    let wp = start_server(&wireperf(), &[]);
    let (_exporter, eport) = start_exporter(&[]);
    let probe = format!("http://127.0.0.1:{eport}/probe");
    let target = format!("127.0.0.1:{}", wp.port);
    // Two probes of one target at once: the second waits for the first instead of hitting
    // the server's "busy" answer, so both succeed and together take about two tests' time.
    let t = Instant::now();
    let runs: Vec<_> = (0..2)
        .map(|_| {
            let (p, tg) = (probe.clone(), target.clone());
            std::thread::spawn(move || {
                get(&p, &[("target", &tg), ("duration", "1")], &[("X-Prometheus-Scrape-Timeout-Seconds", "10")])
            })
        })
        .collect();
    for r in runs {
        let (_, body) = r.join().unwrap();
        assert_eq!(sample(&body, "probe_success", &[]), Some(1.0), "{body}");
    }
    assert!(t.elapsed() >= Duration::from_secs(2), "the probes overlapped: {:?}", t.elapsed());
}

#[test]
fn probe_repeat_publishes_the_series_mean_and_interval() {
    let wp = start_server(&wireperf(), &[]);
    let (exporter, eport) = start_exporter(&[]);
    let probe = format!("http://127.0.0.1:{eport}/probe");
    let target = format!("127.0.0.1:{}", wp.port);
    let timeout = [("X-Prometheus-Scrape-Timeout-Seconds", "10")];

    // Bad or unfitting series are refused before any test runs, with the reason.
    let (status, body) = get(&probe, &[("target", &target), ("repeat", "11")], &timeout);
    assert_eq!(
        (status, body.trim()),
        (400, "'repeat' parameter: must be a whole number of tests from 1 to 10, not '11'")
    );
    // 3 tests of at least 1.25 s do not fit in 2 s - 0.5 s.
    let (status, body) =
        get(&probe, &[("target", &target), ("repeat", "3")], &[("X-Prometheus-Scrape-Timeout-Seconds", "2")]);
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("3 tests need at least 3.75s") && body.contains("1.50s"), "{body}");

    // repeat=1 is one test, and no series metric appears.
    let (_, body) = get(&probe, &[("target", &target), ("duration", "1"), ("repeat", "1")], &timeout);
    assert_eq!(sample(&body, "probe_success", &[]), Some(1.0), "{body}");
    assert!(!body.contains("wireperf_series"), "{body}");

    let t = Instant::now();
    let (status, body) = get(&probe, &[("target", &target), ("duration", "1"), ("repeat", "3")], &timeout);
    let took = t.elapsed();
    assert_eq!(status, 200);
    assert_eq!(sample(&body, "probe_success", &[]), Some(1.0), "{body}\nexporter log:\n{}", exporter.stderr_text());
    // Three 1 s tests ran back to back, within the probe's 9.5 s.
    assert_eq!(sample(&body, "wireperf_probe_test_seconds", &[]), Some(1.0), "{body}");
    assert!(took >= Duration::from_secs(3) && took < Duration::from_millis(9500), "took {took:?}");
    let up =
        |name: &str| sample(&body, name, &["direction=\"upload\""]).unwrap_or_else(|| panic!("no {name}:\n{body}"));
    assert_eq!(up("wireperf_series_runs"), 3.0, "{body}");
    let mean = up("wireperf_series_throughput_mean_bits_per_second");
    let (lo, hi) = (
        up("wireperf_series_throughput_ci_low_bits_per_second"),
        up("wireperf_series_throughput_ci_high_bits_per_second"),
    );
    let sd = up("wireperf_series_throughput_stddev_bits_per_second");
    assert!(mean > 0.0 && mean.is_finite(), "{body}");
    assert!(lo <= mean && mean <= hi, "the interval brackets the mean: {lo} <= {mean} <= {hi}\n{body}");
    assert!(sd >= 0.0 && sd.is_finite(), "{body}");
    // The other gauges are the last test's, one of the three: by Samuelson's inequality no value
    // of a series of 3 lies further than sd * 2 / sqrt(3) from its mean.
    let last = up("wireperf_received_bits_per_second");
    assert!((last - mean).abs() <= sd * 2.0 / 3f64.sqrt() * (1.0 + 1e-9) + 1e-6, "last {last}, mean {mean}, sd {sd}");
    assert!(!body.contains("direction=\"download\""), "an upload series has no download: {body}");

    // The series as a person would see it, for the docs.
    eprintln!("GET /probe?target={target}&duration=1&repeat=3 ({took:?}):");
    for line in body.lines().filter(|l| l.starts_with("wireperf_series") || l.starts_with("wireperf_received_bits")) {
        eprintln!("{line}");
    }
}

#[test]
fn udp_probe_reports_loss_and_jitter() {
    let wp = start_server(&wireperf(), &[]);
    let (_exporter, eport) = start_exporter(&[]);
    let target = format!("127.0.0.1:{}", wp.port);
    let (_, body) = get(
        &format!("http://127.0.0.1:{eport}/probe"),
        &[("target", &target), ("duration", "1"), ("udp", "1"), ("bitrate", "10M")],
        &[("X-Prometheus-Scrape-Timeout-Seconds", "5")],
    );
    match sample(&body, "probe_success", &[]) {
        Some(1.0) => {
            let lost = sample(&body, "wireperf_udp_lost_ratio", &["upload"]).unwrap_or(f64::NAN);
            assert!((0.0..=1.0).contains(&lost), "{body}");
            assert!(sample(&body, "wireperf_udp_jitter_seconds", &["upload"]).is_some(), "{body}");
            assert!(sample(&body, "iperf3_received_lost_percent", &[]).is_some(), "{body}");
            let bps = sample(&body, "wireperf_received_bits_per_second", &["upload"]).unwrap_or(0.0);
            assert!(bps > 5e6 && bps < 2e7, "10 Mbit/s asked, {bps} received\n{body}");
        }
        other => panic!("UDP probe failed ({other:?}):\n{body}"),
    }
}

#[test]
fn server_metrics_count_tests_and_bytes() {
    let mport = free_port();
    let maddr = format!("127.0.0.1:{mport}");
    let srv = start_server(&wireperf(), &["--metrics", &maddr]);
    wait_for_port_without_connecting(mport);
    let url = format!("http://{maddr}/metrics");
    let (_, before) = get(&url, &[], &[]);
    assert_eq!(sample(&before, "wireperf_server_tests_served_total", &[]), Some(0.0), "{before}");

    let out = run_client(&wireperf(), &["-c", "127.0.0.1", "-p", &srv.port.to_string(), "-t", "1", "-J"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let sent: Value = serde_json::from_slice(&out.stdout).unwrap();
    let client_sent = sent.pointer("/end/sum_sent/bytes").and_then(Value::as_f64).unwrap();

    // The server counts after the results exchange; give it a moment.
    let deadline = Instant::now() + Duration::from_secs(5);
    let after = loop {
        let (_, t) = get(&url, &[], &[]);
        if sample(&t, "wireperf_server_tests_served_total", &[]) == Some(1.0) || Instant::now() > deadline {
            break t;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(sample(&after, "wireperf_server_tests_served_total", &[]), Some(1.0), "{after}");
    assert_eq!(sample(&after, "wireperf_server_active_tests", &[]), Some(0.0), "{after}");
    let received = sample(&after, "wireperf_server_received_bytes_total", &[]).unwrap();
    assert!(received > 0.0 && received <= client_sent, "server received {received}, client sent {client_sent}");
    assert_eq!(sample(&after, "wireperf_server_sent_bytes_total", &[]), Some(0.0), "{after}");
}

#[test]
fn server_metrics_count_per_client_refusals() {
    let mport = free_port();
    let maddr = format!("127.0.0.1:{mport}");
    // Two slots, one per address: a second test from 127.0.0.1 is refused by the per-client
    // limit, not by the slot count.
    let srv = start_server(&wireperf(), &["--metrics", &maddr, "--max-tests", "2", "--max-tests-per-client", "1"]);
    wait_for_port_without_connecting(mport);
    let port = srv.port.to_string();
    let mut first = spawn_iperf3(srv.port, &["-t", "2"]);
    std::thread::sleep(Duration::from_millis(600));
    let second = run_client(&iperf3(), &["-c", "127.0.0.1", "-p", &port, "-t", "1"]);
    assert!(!second.status.success(), "the second test from the same address must be refused");
    let url = format!("http://{maddr}/metrics");
    let (_, t) = get(&url, &[], &[]);
    assert_eq!(sample(&t, "wireperf_server_tests_per_client_limited_total", &[]), Some(1.0), "{t}");
    assert_eq!(sample(&t, "wireperf_server_tests_refused_total", &[]), Some(1.0), "{t}");
    assert_eq!(sample(&t, "wireperf_server_active_tests", &[]), Some(1.0), "{t}");
    assert!(first.wait().unwrap().success());
    assert!(srv.stderr_text().contains("limit=--max-tests-per-client"), "{}", srv.stderr_text());
}

#[test]
fn metrics_flag_is_server_only() {
    let out = run_client(&wireperf(), &["-c", "127.0.0.1", "--metrics", "127.0.0.1:1"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("server only"), "{out:?}");
}
