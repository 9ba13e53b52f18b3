//! Both ends of the suite compared: this host's interface toward the server against what the
//! server shared of its own ([`wireperf_doctor::ends`] has the rules); this module only finds
//! the figures the comparison needs in the suite's results.

use crate::link::LinkContext;
use crate::phase::{Phase, PhaseResult};
use wireperf_doctor::ends::{DirectionLoad, EndsFinding, PathLoad, compare};
use wireperf_doctor::share::SharedHost;

/// The comparison, when both ends are known (a wireperf server that shares its host).
pub fn both_ends(link: &LinkContext, server: Option<&SharedHost>, phases: &[PhaseResult]) -> Vec<EndsFinding> {
    match (link.own_host.as_ref(), server) {
        (Some(client), Some(server)) => compare(client, server, &path_load(link, phases)),
        _ => Vec::new(),
    }
}

/// Per direction: the rate the path carries (the link's ceiling when one is known, since a
/// buffer that is too small holds the measured rate down; otherwise the best measured) and
/// the largest loaded round trip any phase saw (the window must cover the queue too).
fn path_load(link: &LinkContext, phases: &[PhaseResult]) -> PathLoad {
    let rtt = phases
        .iter()
        .filter(|p| p.phase != Phase::Udp)
        .filter_map(loaded_rtt_ms)
        .fold(None, |m: Option<f64>, r| Some(m.map_or(r, |m| m.max(r))));
    let load = |direction: &str, measured: fn(&PhaseResult) -> f64| {
        let best = phases.iter().filter(|p| p.error.is_none()).map(measured).fold(0.0, f64::max);
        let rate_bps = link.ceiling_for(direction).map_or(best, |c| c.tcp_bps as f64);
        rtt.filter(|_| rate_bps > 0.0).map(|rtt_ms| DirectionLoad { rate_bps, rtt_ms })
    };
    PathLoad { upload: load("upload", |p| p.upload_bps), download: load("download", |p| p.download_bps) }
}

/// A phase's loaded round trip, ms: the probes' median, else the streams' own `tcpi_rtt`.
fn loaded_rtt_ms(p: &PhaseResult) -> Option<f64> {
    let l = p.latency.as_ref()?;
    l["loaded_ms"]["p50"].as_f64().or_else(|| l["stream_rtt_ms"]["p50"].as_f64())
}
