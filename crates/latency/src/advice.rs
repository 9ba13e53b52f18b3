//! What to do when latency under load is bad: where the queue is, and the fix.
//!
//! The probes say *that* round trips grew; the local qdisc's backlog says *where*. When this
//! host's own qdisc on the test's interface held a standing queue while the test ran (its
//! backlog, sampled from `tc -s qdisc`, grew to a delay comparable to the added latency), the
//! queue is here and the fix is here. When it stayed near empty, the queue is beyond this host
//! (a router, a modem, the far host): the fix belongs on the bottleneck box. Either way the
//! fix is a queue that keeps itself short — `fq_codel` or `cake` — and, where the bottleneck
//! is a link the box does not own (a modem's uplink), a shaper slightly below that link's
//! rate so the queue forms where the good discipline runs.
//!
//! It reads a summary's grade and added latency, not the summary itself: `summary.rs` holds the
//! [`LocalQueue`] and calls [`advise`], so this module does not import it back.

use crate::grade::Grade;
use serde::{Deserialize, Serialize};

/// This host's qdisc backlog on the test's interface while the load ran.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LocalQueue {
    /// The interface.
    pub iface: String,
    /// The root qdisc's kind (`fq_codel`, `pfifo_fast`, `tbf`, ...).
    pub kind: String,
    /// Largest backlog seen, bytes.
    pub max_backlog: u64,
    /// Samples taken.
    pub samples: usize,
}

/// A grade at or below which advice is given.
pub const ADVISE_FROM: Grade = Grade::C;

/// The local backlog counts as "the queue is here" when it could explain at least this share
/// of the added latency at the test's rate.
const LOCAL_SHARE: f64 = 0.5;

/// Advice lines for a test with this `grade` and `added_ms` (a summary's); empty when the
/// grade is better than [`ADVISE_FROM`] (or unknown). `rate_bps` is the loaded direction's
/// measured rate (the queue's drain rate), `local` this host's qdisc samples (`None` when `tc`
/// could not be read: then the place is not named).
pub fn advise(grade: Option<Grade>, added_ms: Option<f64>, rate_bps: f64, local: Option<&LocalQueue>) -> Vec<String> {
    let (Some(grade), Some(added)) = (grade, added_ms) else { return Vec::new() };
    if grade < ADVISE_FROM {
        return Vec::new();
    }
    let mut out =
        vec![format!("latency under load is bad (grade {grade}): the load added {added:.1} ms to a round trip")];
    let shaper_mbit = (rate_bps * 0.9 / 1e6).floor().max(1.0);
    match local {
        Some(q) => {
            let local_ms = if rate_bps > 0.0 { q.max_backlog as f64 * 8.0 / rate_bps * 1000.0 } else { 0.0 };
            if local_ms >= LOCAL_SHARE * added {
                out.push(format!(
                    "the queue is on this host: {}'s {} qdisc held up to {} bytes ({local_ms:.1} ms at the test's rate)",
                    q.iface, q.kind, q.max_backlog
                ));
                out.push(format!("fix: tc qdisc replace dev {} root fq_codel", q.iface));
                out.push(format!(
                    "or, to keep the queue here when the link beyond is slower: tc qdisc replace dev {} root cake bandwidth {shaper_mbit}mbit",
                    q.iface
                ));
            } else {
                out.push(format!(
                    "the queue is beyond this host: {}'s {} qdisc held at most {} bytes ({local_ms:.1} ms) of the {added:.1} ms",
                    q.iface, q.kind, q.max_backlog
                ));
                out.push(format!(
                    "fix on the bottleneck (router, modem, the far host): tc qdisc replace dev WAN root cake bandwidth {shaper_mbit}mbit (a shaper slightly below the link's rate, so the queue forms where cake or fq_codel keeps it short)"
                ));
            }
        }
        None => {
            out.push("where the queue is was not measured (tc -s qdisc could not be read on this host)".to_string());
            out.push(format!(
                "fix on the bottleneck: fq_codel or cake, with a shaper slightly below the link rate, e.g. tc qdisc replace dev IFACE root cake bandwidth {shaper_mbit}mbit"
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The grade and added latency of a test whose idle and loaded round trips were these, ms
    /// (no loss), as a summary computes them.
    fn summary(idle: f64, loaded: f64) -> (Option<Grade>, Option<f64>) {
        let added = loaded - idle;
        (Some(Grade::from_added(added, 0.0)), Some(added))
    }

    fn advise_for(
        (grade, added): (Option<Grade>, Option<f64>),
        rate_bps: f64,
        local: Option<&LocalQueue>,
    ) -> Vec<String> {
        advise(grade, added, rate_bps, local)
    }

    fn q(max_backlog: u64) -> LocalQueue {
        LocalQueue { iface: "eth0".into(), kind: "pfifo_fast".into(), max_backlog, samples: 10 }
    }

    #[test]
    fn good_grade_gets_no_advice() {
        assert!(advise_for(summary(0.2, 10.0), 20e6, Some(&q(0))).is_empty());
    }

    #[test]
    fn a_local_standing_queue_is_named_with_its_fix() {
        // 60 ms added at 20 Mbit/s; 150 kB locally = 60 ms: the queue is here.
        let a = advise_for(summary(0.2, 60.2), 20e6, Some(&q(150_000)));
        assert!(a[1].starts_with("the queue is on this host: eth0's pfifo_fast"), "{a:?}");
        assert_eq!(a[2], "fix: tc qdisc replace dev eth0 root fq_codel");
        assert!(a[3].ends_with("cake bandwidth 18mbit"), "{a:?}");
    }

    #[test]
    fn an_empty_local_qdisc_puts_the_queue_beyond() {
        let a = advise_for(summary(0.2, 60.2), 20e6, Some(&q(3000)));
        assert!(a[1].starts_with("the queue is beyond this host"), "{a:?}");
        assert!(a[2].contains("cake bandwidth 18mbit"), "{a:?}");
    }

    #[test]
    fn unknown_local_queue_says_so() {
        let a = advise_for(summary(0.2, 300.0), 20e6, None);
        assert!(a[1].contains("was not measured"), "{a:?}");
    }
}
