//! The exporter's own `/metrics`: how many probes ran, failed (by reason) and are running.

use crate::failure::REASONS;
use crate::render::CONTENT_TYPE;
use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::metrics::info::Info;
use prometheus_client::registry::Registry;

type Labels = Vec<(String, String)>;

/// Probe counters, shared by every request.
#[derive(Debug)]
pub struct Health {
    registry: Registry,
    probes: Family<Labels, Counter>,
    failures: Family<Labels, Counter>,
    in_flight: Gauge,
    duration: Histogram,
}

/// Every metric on the exporter's `/metrics`: (name as scraped, help).
pub const HEALTH_METRICS: [(&str, &str); 5] = [
    ("wireperf_exporter_probes_total", "Probes answered, by result (success, failure, bad_request)"),
    ("wireperf_exporter_probe_failures_total", "Failed probes by reason"),
    ("wireperf_exporter_probes_in_flight", "Probes running or waiting for a slot now"),
    ("wireperf_exporter_probe_duration_seconds", "Histogram of probe durations"),
    ("wireperf_exporter_build_info", "Version of the exporter"),
];

fn label(k: &str, v: &str) -> Labels {
    vec![(k.to_string(), v.to_string())]
}

impl Default for Health {
    fn default() -> Self {
        Self::new()
    }
}

impl Health {
    /// Registers every metric, with each failure reason at zero (so `rate()` sees the first one).
    pub fn new() -> Self {
        let mut registry = Registry::with_prefix("wireperf_exporter");
        let probes = Family::<Labels, Counter>::default();
        let failures = Family::<Labels, Counter>::default();
        for r in ["success", "failure", "bad_request"] {
            let _ = probes.get_or_create(&label("result", r));
        }
        for r in REASONS {
            let _ = failures.get_or_create(&label("reason", r));
        }
        let in_flight = Gauge::default();
        let duration = Histogram::new([0.1, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0]);
        // Counters get `_total` from prometheus-client, info metrics `_info`.
        registry.register("probes", HEALTH_METRICS[0].1, probes.clone());
        registry.register("probe_failures", HEALTH_METRICS[1].1, failures.clone());
        registry.register("probes_in_flight", HEALTH_METRICS[2].1, in_flight.clone());
        registry.register("probe_duration_seconds", HEALTH_METRICS[3].1, duration.clone());
        registry.register("build", HEALTH_METRICS[4].1, Info::new(label("version", env!("CARGO_PKG_VERSION"))));
        Self { registry, probes, failures, in_flight, duration }
    }

    /// A probe starts (it is in flight until [`Health::finished`]).
    pub fn started(&self) {
        self.in_flight.inc();
    }

    /// A probe ended after `secs`; `failure` is its reason, if it failed.
    pub fn finished(&self, secs: f64, failure: Option<&'static str>) {
        self.in_flight.dec();
        self.duration.observe(secs);
        let result = if failure.is_some() { "failure" } else { "success" };
        self.probes.get_or_create(&label("result", result)).inc();
        if let Some(r) = failure {
            self.failures.get_or_create(&label("reason", r)).inc();
        }
    }

    /// A `/probe` request was refused for its parameters.
    pub fn bad_request(&self) {
        self.probes.get_or_create(&label("result", "bad_request")).inc();
    }

    /// The `/metrics` text.
    pub fn render(&self) -> String {
        let mut text = String::new();
        let _ = encode(&mut text, &self.registry);
        text
    }

    /// The content type of [`Health::render`].
    pub fn content_type(&self) -> &'static str {
        CONTENT_TYPE
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_by_result_and_reason() {
        let h = Health::new();
        h.started();
        h.started();
        h.finished(1.2, None);
        h.finished(0.01, Some("refused"));
        h.bad_request();
        h.started();
        let t = h.render();
        for line in [
            "wireperf_exporter_probes_total{result=\"success\"} 1",
            "wireperf_exporter_probes_total{result=\"failure\"} 1",
            "wireperf_exporter_probes_total{result=\"bad_request\"} 1",
            "wireperf_exporter_probe_failures_total{reason=\"refused\"} 1",
            "wireperf_exporter_probe_failures_total{reason=\"timeout\"} 0",
            "wireperf_exporter_probes_in_flight 1",
            "wireperf_exporter_probe_duration_seconds_count 2",
        ] {
            assert!(t.lines().any(|l| l == line), "missing {line:?} in\n{t}");
        }
        assert!(
            t.contains(&format!("wireperf_exporter_build_info{{version=\"{}\"}} 1", env!("CARGO_PKG_VERSION"))),
            "{t}"
        );
        for (name, _) in HEALTH_METRICS {
            assert!(t.contains(name), "{name} missing in\n{t}");
        }
    }
}
