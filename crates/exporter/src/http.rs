//! The exporter's HTTP surface (axum): `/probe`, `/metrics` and a small index page, plus the
//! runtime that serves a router on a plain `std` listener.
//!
//! tokio lives only in this crate, on a `current_thread` runtime: HTTP handling is light, and
//! the tests themselves run on the runtime's blocking threads.

use crate::budget::{SCRAPE_TIMEOUT_HEADER, TimeoutPolicy, check_series};
use crate::error::Error;
use crate::health::Health;
use crate::limits::Limiter;
use crate::params::{ProbeSpec, SpecDefaults};
use crate::render::{CONTENT_TYPE, render};
use axum::Router;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use std::collections::HashMap;
use std::sync::Arc;
use tokio::time::Instant;
use wireperf_engine::EngineTuning;

/// Everything the probe handlers share.
#[derive(Debug)]
pub struct ExporterState {
    /// Probe slots.
    pub limiter: Limiter,
    /// Own counters.
    pub health: Health,
    /// Probe deadlines.
    pub timeouts: TimeoutPolicy,
    /// Defaults for missing query parameters.
    pub defaults: SpecDefaults,
    /// The engine's data-path settings for the probes' clients.
    pub tuning: EngineTuning,
}

/// The exporter's routes.
pub fn router(state: Arc<ExporterState>) -> Router {
    Router::new().route("/", get(index)).route("/probe", get(probe)).route("/metrics", get(metrics)).with_state(state)
}

async fn index() -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        "wireperf exporter\n\n/probe?target=HOST[:PORT]&duration=SECS&reverse=1&bidir=1&udp=1&bitrate=RATE&parallel=N\
         &repeat=N\n\
         \x20   runs one test (repeat=N: N tests and their mean and confidence interval) against a\n\
         \x20   wireperf or iperf3 server and returns its results\n\
         /metrics\n    the exporter's own counters\n",
    )
}

async fn metrics(State(st): State<Arc<ExporterState>>) -> Response {
    ([(header::CONTENT_TYPE, st.health.content_type())], st.health.render()).into_response()
}

async fn probe(
    State(st): State<Arc<ExporterState>>,
    headers: HeaderMap,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    let started = Instant::now();
    let header = headers.get(SCRAPE_TIMEOUT_HEADER).and_then(|v| v.to_str().ok());
    let timeout = st.timeouts.probe_timeout(header);
    // A series that cannot fit the scrape timeout is a configuration error, like a bad value.
    let spec = match ProbeSpec::from_query(&q, st.defaults).and_then(|s| check_series(&s, timeout).map(|()| s)) {
        Ok(s) => s,
        Err(e) => {
            st.health.bad_request();
            crate::log::bad_request(&e);
            return (StatusCode::BAD_REQUEST, format!("{e}\n")).into_response();
        }
    };
    let deadline = started + timeout;
    st.health.started();
    let rep = crate::probe::run(&spec, &st.tuning, &st.limiter, started, deadline).await;
    let failure = rep.outcome.as_ref().err();
    st.health.finished(rep.duration.as_secs_f64(), failure.map(|f| f.reason));
    if let Some(f) = failure {
        crate::log::probe_failed(&spec, rep.duration, f);
    }
    ([(header::CONTENT_TYPE, CONTENT_TYPE)], render(&rep)).into_response()
}

/// Serves `router` on `listener` until the process ends, on a `current_thread` runtime.
pub fn serve_blocking(listener: std::net::TcpListener, router: Router) -> Result<(), Error> {
    listener.set_nonblocking(true).map_err(Error::Listen)?;
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(Error::Runtime)?;
    rt.block_on(async move {
        let listener = tokio::net::TcpListener::from_std(listener).map_err(Error::Listen)?;
        axum::serve(listener, router).await.map_err(Error::Serve)
    })
}
