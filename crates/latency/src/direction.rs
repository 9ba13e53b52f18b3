//! Which direction's queue the load filled: the added latency split into client → server and
//! server → client, from the echo replies' server timestamps.
//!
//! An echo reply says when the server received the probe, on the server's clock. So for each
//! probe `up = server time − send time` is the one-way time out plus the clocks' offset, and
//! `down = round trip − up` the one-way time back minus the same offset. The offset is not
//! known (no clock sync), but it is the same for every probe of a test (drift over a test is
//! microseconds), so it cancels in the difference between the loaded and the idle medians:
//! `up_added = p50(up, loaded) − p50(up, idle)`, and likewise down. The two add up to the
//! round trip's added latency. This is what tells, inside `--bidir`, whether the upload's or
//! the download's queue is the deep one.

use crate::percentile::{nearest_rank, sorted};
use crate::sample::{Phase, Probe};
use serde::{Deserialize, Serialize};

/// The added latency per direction, ms.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct OneWayAdded {
    /// Client → server: the queue in front of the upload.
    pub up_ms: f64,
    /// Server → client: the queue in front of the download.
    pub down_ms: f64,
    /// Loaded probes with a server timestamp they come from.
    pub samples: usize,
}

/// The split, when idle and loaded probes with server timestamps came back; `None` otherwise
/// (connect probes carry no timestamp).
pub fn one_way_added(probes: &[Probe]) -> Option<OneWayAdded> {
    let split = |idle: bool| -> (Vec<f64>, Vec<f64>) {
        probes
            .iter()
            .filter(|p| (p.phase == Phase::Idle) == idle)
            .filter_map(|p| Some((p.up_ms?, p.rtt_ms? - p.up_ms?)))
            .unzip()
    };
    let (idle_up, idle_down) = split(true);
    let (up, down) = split(false);
    let p50 = |v: &[f64]| nearest_rank(&sorted(v), 50.0);
    let r = |x: f64| (x * 1000.0).round() / 1000.0;
    Some(OneWayAdded {
        up_ms: r(p50(&up)? - p50(&idle_up)?),
        down_ms: r(p50(&down)? - p50(&idle_down)?),
        samples: up.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sample::Method;

    fn p(phase: Phase, rtt: f64, up: f64) -> Probe {
        Probe { up_ms: Some(up), ..Probe::new(0.0, phase, Some(rtt), Method::UdpEcho) }
    }

    #[test]
    fn the_offset_cancels_and_the_deep_direction_shows() {
        // Server clock 5000 ms ahead; idle 0.2 ms round trip split evenly; under load the
        // upload's queue adds 60 ms, the download's 2 ms.
        let off = 5000.0;
        let mut v: Vec<Probe> = (0..5).map(|_| p(Phase::Idle, 0.2, off + 0.1)).collect();
        v.extend((0..5).map(|_| p(Phase::Bidir, 62.2, off + 60.1)));
        let s = one_way_added(&v).unwrap();
        assert!((s.up_ms - 60.0).abs() < 1e-6 && (s.down_ms - 2.0).abs() < 1e-6, "{s:?}");
        assert_eq!(s.samples, 5);
        // A negative offset (server behind) gives the same split.
        let w: Vec<Probe> = v.iter().map(|q| Probe { up_ms: q.up_ms.map(|u| u - 2.0 * off), ..*q }).collect();
        assert_eq!(one_way_added(&w), Some(s));
    }

    #[test]
    fn no_timestamps_no_split() {
        let v = vec![Probe::new(0.0, Phase::Idle, Some(0.2), Method::TcpConnect); 3];
        assert_eq!(one_way_added(&v), None);
        let only_idle = vec![p(Phase::Idle, 0.2, 0.1)];
        assert_eq!(one_way_added(&only_idle), None);
    }
}
