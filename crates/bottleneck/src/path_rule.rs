//! `path-bottleneck`: the box between the hosts is the ceiling.
//!
//! A full link's queue fills, whatever sits at the narrow point: with a loss-based sender
//! (Reno, CUBIC) until it overflows, with BBR a little. When neither host limited the test
//! (no CPU bound to it, no window or buffer, no NIC or socket drops, no ceiling of its own
//! interface), the rate held flat and the round trips rose under load, the narrow point is
//! between the hosts: a router's shaper or port, a switch, a modem. Loss that comes with such a
//! queue is its overflow, not a bad cable, so this rule takes `path-loss`'s place and cites its
//! figures; `path-loss` stays for loss without a filling queue.

use crate::diagnosis::{Direction, Hosts, Limit, RoundTrips, Side, ids, limit, pct};
use wireperf_doctor::goodput::format_bps;

/// The probes' loaded median at least this much above their idle one, ms (and
/// [`RISE_RATIO`] times it): a queue, not a scheduler's hiccup.
const PROBE_RISE_MS: f64 = 0.5;
/// The sender's mean smoothed round trip at least this much above its minimum, ms (and
/// [`RISE_RATIO`] times it). Lower than the probes' bound: it is the flow's own round trip,
/// not a separate flow's, and BBR keeps its queue to about one round trip of the base.
const TCP_RISE_MS: f64 = 0.25;
/// Loaded at least this many times the base.
const RISE_RATIO: f64 = 2.0;
/// The rate held flat: the intervals after the first (slow start) within this share of their
/// median.
const FLAT_SPREAD: f64 = 0.25;

/// How the round trips rose under the load, when they did.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct QueueRise {
    /// The round trip without the queue, ms.
    pub base_ms: f64,
    /// The round trip with it, ms.
    pub loaded_ms: f64,
    /// Which measurement saw it.
    pub by: RiseSource,
}

/// The measurement that saw a queue rise.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RiseSource {
    /// Echo probes' one-way split: the delay added in this direction alone.
    OneWay,
    /// The probes' round-trip medians (a separate flow through the same queue).
    Probes,
    /// The sender's own smoothed round trip against its minimum.
    Tcp,
}

impl QueueRise {
    /// `loaded / base`.
    pub fn ratio(&self) -> f64 {
        self.loaded_ms / self.base_ms.max(0.001)
    }
}

/// The rise of the round trips under load, in this order of trust: the one-way delay this
/// direction's load added (the only figure that holds when both directions are loaded), the
/// probes' medians (a separate flow through the same queue), else the sender's own TCP round
/// trips. With both directions loaded and no one-way split, none is said.
pub fn queue_rise(rt: &RoundTrips) -> Option<QueueRise> {
    let rose = |base: f64, loaded: f64, floor: f64| loaded - base >= floor && loaded >= RISE_RATIO * base;
    if let (Some(idle), Some(added)) = (rt.probe_idle_ms, rt.one_way_added_ms) {
        let loaded = idle + added;
        return rose(idle, loaded, PROBE_RISE_MS).then_some(QueueRise {
            base_ms: idle,
            loaded_ms: loaded,
            by: RiseSource::OneWay,
        });
    }
    if rt.shared_with_other_direction {
        return None;
    }
    if let (Some(idle), Some(loaded)) = (rt.probe_idle_ms, rt.probe_loaded_ms)
        && rose(idle, loaded, PROBE_RISE_MS)
    {
        return Some(QueueRise { base_ms: idle, loaded_ms: loaded, by: RiseSource::Probes });
    }
    let (min, mean) = (rt.tcp_min_rtt_us? as f64 / 1000.0, rt.tcp_mean_rtt_us? as f64 / 1000.0);
    rose(min, mean, TCP_RISE_MS).then_some(QueueRise { base_ms: min, loaded_ms: mean, by: RiseSource::Tcp })
}

/// The largest share by which an interval after the first strays from their median; `None`
/// with fewer than two such intervals.
pub fn spread(intervals: &[f64]) -> Option<f64> {
    let rest = intervals.get(1..).filter(|r| r.len() >= 2)?;
    let mut sorted = rest.to_vec();
    sorted.sort_by(f64::total_cmp);
    let median = sorted[sorted.len() / 2];
    (median > 0.0).then(|| rest.iter().map(|x| (x - median).abs() / median).fold(0.0, f64::max))
}

/// Adds `path-bottleneck` when the evidence holds (see the module's doc), and then removes
/// `path-loss`, whose retransmits it cites as the queue's overflow. `host_bound`: a host's CPU
/// was shown to hold the test (starved, busy with it, or one CPU saturated by the network
/// stack), a queue then fills on that host, not between the hosts.
pub fn path_bottleneck(dir: &Direction, hosts: Hosts<'_>, host_bound: bool, found: &mut Vec<Limit>) {
    if dir.udp || host_bound || dir.bits_per_second <= 0.0 {
        return;
    }
    let host_ceiling = [ids::SHAPER, ids::LINK, ids::USB_BUS];
    if found.iter().any(|l| host_ceiling.contains(&l.limit.as_str())) {
        return;
    }
    let (Some(rise), Some(spread)) = (queue_rise(&dir.round_trips), spread(&dir.interval_bps)) else { return };
    if spread > FLAT_SPREAD {
        return;
    }
    let rate = format_bps(dir.bits_per_second as u64);
    let added = rise.loaded_ms - rise.base_ms;
    let mut ev =
        vec![format!("the rate held flat at {rate} (every interval after the first within {} of it)", pct(spread))];
    let rt = &dir.round_trips;
    let p99 = rt.probe_loaded_p99_ms.map_or(String::new(), |p| format!(", p99 {p:.2} ms"));
    ev.push(match rise.by {
        RiseSource::OneWay => format!(
            "the load added {added:.2} ms one way, {} (echo probes' timestamps; round trip idle {:.2} ms{}): a queue filled between the hosts",
            dir.label(),
            rise.base_ms,
            rt.probe_loaded_p99_ms.map_or(String::new(), |p| format!(", loaded p99 {p:.2} ms"))
        ),
        RiseSource::Probes => format!(
            "round trips rose under load from {:.2} ms idle to {:.2} ms (probe medians{p99}): a queue filled between the hosts",
            rise.base_ms, rise.loaded_ms
        ),
        RiseSource::Tcp => format!(
            "the sender's TCP round trip rose from {:.2} ms (its minimum) to {:.2} ms on average: a queue filled between the hosts",
            rise.base_ms, rise.loaded_ms
        ),
    });
    let seen: Vec<&str> = [Side::Client, Side::Server]
        .into_iter()
        .filter(|s| hosts.of(*s).is_some_and(|h| h.usable()))
        .map(Side::as_str)
        .collect();
    ev.push(match seen.as_slice() {
        [] => "no limit of either host showed in the sender's TCP_INFO (neither host's CPUs were seen)".to_string(),
        [one] => format!("neither host's window or buffers held it, and the {one}'s CPUs and NIC counters stayed clear (the other host was not seen)"),
        _ => "neither host's CPUs, windows, buffers or NIC counters held it".to_string(),
    });
    let mut strength = 0.8 + 0.1 * ((rise.ratio() - RISE_RATIO) / 8.0).clamp(0.0, 1.0);
    if let Some(i) = found.iter().position(|l| l.limit == ids::PATH_LOSS) {
        let lost = found.remove(i);
        if let Some(first) = lost.evidence.first() {
            ev.push(format!(
                "{first}: the queue's overflow, as a loss-based sender fills any queue, not a faulty link"
            ));
        }
        strength = strength.max(lost.strength + 0.01);
    }
    let fix = vec![
        format!(
            "the path between the hosts carries about {rate}: look at the box between them (router, switch, modem): its shaper or QoS rate, the speed of its ports (ethtool on each), its CPU while a test runs"
        ),
        format!(
            "its queue adds {added:.1} ms under load: smart queue management on that box (fq_codel or cake at just under {rate}) keeps the rate and drops the delay"
        ),
        "verify: test with the box bypassed (one cable between the hosts); the rate rises past it".to_string(),
    ];
    found.push(limit(ids::PATH_BOTTLENECK, Side::Path, strength, ev, fix));
}
