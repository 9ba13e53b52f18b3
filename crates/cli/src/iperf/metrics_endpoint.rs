//! `wireperf -s --metrics ADDR`: the server's Prometheus counters (the exporter crate), or, in a
//! build without the `exporter` feature, a clear refusal at start-up. The refusal's handle type
//! is uninhabited, so the server's hooks compile unchanged and can never call a counter that
//! does not exist.

#[cfg(feature = "exporter")]
pub use wireperf_exporter::ServerMetrics;

/// Starts the `/metrics` endpoint on `addr`.
#[cfg(feature = "exporter")]
pub fn spawn(addr: &str) -> Result<ServerMetrics, String> {
    wireperf_exporter::server_metrics::spawn(addr).map_err(|e| e.to_string())
}

/// No exporter in this build: nothing can hold one of these.
#[cfg(not(feature = "exporter"))]
#[derive(Debug)]
pub enum ServerMetrics {}

#[cfg(not(feature = "exporter"))]
impl ServerMetrics {
    /// Unreachable: there is no value of this type.
    pub fn test_started(&self) {
        match *self {}
    }

    /// Unreachable: there is no value of this type.
    pub fn test_done(&self, _outcome: &wireperf_engine::Outcome) {
        match *self {}
    }

    /// Unreachable: there is no value of this type.
    pub fn refused(&self, _limit: Option<wireperf_engine::server::Limit>) {
        match *self {}
    }
}

/// `--metrics` in a build without the exporter.
#[cfg(not(feature = "exporter"))]
pub fn spawn(_addr: &str) -> Result<ServerMetrics, String> {
    Err("--metrics needs the Prometheus exporter, which this wireperf was built without (cargo feature `exporter`)"
        .into())
}
