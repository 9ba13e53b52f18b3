//! A series of tests (`repeat=N`) summarized per direction: the mean throughput, its spread
//! and its 95 % confidence interval (Student t, from `wireperf-stats`).
//!
//! Why a series in one scrape: one test of a busy path differs from the next by 10-20 %, so a
//! single gauge cannot tell a real change from noise; the interval of a series can, and an
//! alert on its upper bound (`ci_high < threshold`) fires only when the path is slow beyond its
//! noise. The throughput is the receiver's rate, the one `wireperf_received_bits_per_second`
//! publishes for each test, so the series' mean is the mean of those gauges.

use wireperf_protocol::outcome::{Direction, Flow};
use wireperf_stats::Summary;

/// Confidence level of the series' interval, percent.
pub const LEVEL: f64 = 95.0;

/// One direction's throughput over the series.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DirectionSeries {
    /// `upload` or `download`.
    pub direction: Direction,
    /// The receiver's rate (bit/s) of every test that measured this direction. Its `n` is the
    /// tests counted: a `bidir` test whose second flow the report does not fully know is left
    /// out of that direction (as its gauges are).
    pub throughput: Summary,
}

/// The series of a probe that ran two or more tests, every one of them successful (a failed
/// test ends the probe).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Series {
    /// Per direction, in the order the tests report them.
    pub directions: Vec<DirectionSeries>,
}

impl Series {
    /// Summarizes `tests` per direction. A test is anything that lends its flows (a probe's
    /// `ProbeResults`), so this module needs nothing of `results`, which holds a `Series`.
    pub fn of<T: AsRef<[Flow]>>(tests: &[T]) -> Self {
        let mut order: Vec<Direction> = Vec::new();
        for f in tests.iter().flat_map(|t| t.as_ref()) {
            if !order.contains(&f.direction) {
                order.push(f.direction);
            }
        }
        let directions = order
            .into_iter()
            .filter_map(|direction| {
                let rates: Vec<f64> = tests
                    .iter()
                    .flat_map(|t| t.as_ref())
                    .filter(|f| f.direction == direction)
                    .filter_map(|f| f.received.map(|r| r.bits_per_second))
                    .collect();
                Some(DirectionSeries { direction, throughput: Summary::of(&rates, LEVEL)? })
            })
            .collect();
        Self { directions }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::{ProbeResults, TestOutcome};
    use wireperf_protocol::outcome::{Counter, Peer, Side, Tally};

    fn tally(bps: f64, counted_by: Counter) -> Option<Tally> {
        Some(Tally {
            bytes: (bps / 8.0) as u64,
            seconds: 1.0,
            end: 1.0,
            bits_per_second: bps,
            counted_by,
            measured_by: Side::Client,
        })
    }

    fn test(rates: &[(Direction, f64)]) -> ProbeResults {
        let flows = rates
            .iter()
            .map(|&(direction, bps)| Flow {
                direction,
                sent: tally(bps, Counter::Sender),
                received: tally(bps, Counter::Receiver),
                retransmits: Some(0),
                udp: None,
            })
            .collect();
        let outcome = TestOutcome {
            written_by: Side::Client,
            peer: Peer::Iperf3,
            protocol: "TCP".into(),
            direction: Direction::Upload,
            streams: Some(1),
            requested_seconds: Some(1),
            flows,
            cpu: None,
        };
        ProbeResults { outcome, peer: None, latency: None, series: None }
    }

    #[test]
    fn each_direction_gets_its_mean_and_interval() {
        use Direction::{Download, Upload};
        let tests = [test(&[(Upload, 90.0), (Download, 10.0)]), test(&[(Upload, 100.0)]), test(&[(Upload, 110.0)])];
        let s = Series::of(&tests);
        let dirs: Vec<_> = s.directions.iter().map(|d| (d.direction, d.throughput.n)).collect();
        assert_eq!(dirs, vec![(Upload, 3), (Download, 1)]);
        let up = s.directions[0].throughput;
        assert_eq!((up.mean, up.sd), (100.0, 10.0));
        let (lo, hi) = up.ci.unwrap();
        // t(0.975, 2) = 4.303: 100 ± 4.303 · 10 / √3.
        assert!((lo - 75.158).abs() < 0.01 && (hi - 124.842).abs() < 0.01, "{lo} {hi}");
        assert_eq!(s.directions[1].throughput.ci, None, "one test has no interval");
    }

    #[test]
    fn no_tests_no_series() {
        assert_eq!(Series::of::<ProbeResults>(&[]), Series::default());
    }
}
