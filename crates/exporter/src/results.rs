//! The numbers a probe publishes: the engine's `-J` report read as a [`TestOutcome`].
//!
//! The outcome already knows each direction's sender's and receiver's counts, retransmits,
//! UDP loss and CPU; this module only keeps the directions a probe can publish, so the
//! exporter never computes a number twice. A test has one flow (upload, or download with
//! `reverse`) or two (`bidir`).

use wireperf_protocol::outcome::Side;
pub use wireperf_protocol::outcome::{Direction, Flow, TestOutcome};
use wireperf_protocol::schema::TestReport;

/// Everything a successful probe publishes.
#[derive(Clone, Debug, PartialEq)]
pub struct ProbeResults {
    /// The test as the exporter (the client) saw it, with only the flows whose sender's and
    /// receiver's counts are both known; the first is the one iperf3's `sum_sent`/`sum_received`
    /// describe.
    pub outcome: TestOutcome,
    /// The address the data streams reached (tells which node answered when the target is
    /// a load-balanced name).
    pub peer: Option<String>,
    /// Latency under load, when the probe asked for it (`latency=1`) and probes were sent.
    pub latency: Option<wireperf_latency::LatencySummary>,
    /// A series' summary, when the probe ran two or more tests (`repeat=N`); every other field
    /// then describes the series' last test.
    pub series: Option<crate::series::Series>,
}

/// Why a report cannot be published.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("the test report has no end totals")]
pub struct NoTotals;

/// Both ends' counts are known.
fn publishable(f: &Flow) -> bool {
    f.sent.is_some() && f.received.is_some()
}

impl ProbeResults {
    /// Reads the totals of a finished client test.
    pub fn from_report(report: &TestReport) -> Result<Self, NoTotals> {
        let mut outcome = TestOutcome::new(report, Side::Client);
        if !outcome.flows.first().is_some_and(publishable) {
            return Err(NoTotals);
        }
        outcome.flows.retain(publishable);
        Ok(Self {
            outcome,
            peer: report.start.connected.first().map(|c| c.remote_host.clone()),
            latency: None,
            series: None,
        })
    }

    /// The flows, first as iperf3 names it.
    pub fn flows(&self) -> &[Flow] {
        &self.outcome.flows
    }

    /// Streams per direction (1 when the report does not say).
    pub fn streams(&self) -> u32 {
        self.outcome.streams.unwrap_or(1)
    }

    /// CPU use of (this host, the target) as fractions of one CPU's worth (iperf3's percent / 100).
    pub fn cpu(&self) -> Option<(f64, f64)> {
        self.outcome.cpu.map(|c| (c.host_percent / 100.0, c.remote_percent / 100.0))
    }

    /// Whether this was a UDP test.
    pub fn is_udp(&self) -> bool {
        self.outcome.is_udp()
    }
}

/// A test's flows, as [`crate::series::Series::of`] reads them.
impl AsRef<[Flow]> for ProbeResults {
    fn as_ref(&self) -> &[Flow] {
        self.flows()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wireperf_protocol::schema::{CpuUtilization, End, Start, Summary, TestStart};

    fn sum(bytes: u64, secs: f64, retr: Option<u64>) -> Summary {
        Summary {
            bytes,
            seconds: secs,
            bits_per_second: bytes as f64 * 8.0 / secs,
            retransmits: retr,
            ..Default::default()
        }
    }

    fn report(end: End, protocol: &str, reverse: bool) -> TestReport {
        let start = Start {
            test_start: Some(TestStart {
                protocol: protocol.into(),
                num_streams: 2,
                reverse: i32::from(reverse),
                ..Default::default()
            }),
            ..Default::default()
        };
        TestReport { start, end, ..Default::default() }
    }

    #[test]
    fn tcp_upload_reads_both_sums_and_cpu() {
        let end = End {
            sum_sent: Some(sum(1000, 1.0, Some(7))),
            sum_received: Some(sum(900, 1.5, None)),
            cpu_utilization_percent: Some(CpuUtilization {
                host_total: 50.0,
                remote_total: 12.5,
                ..Default::default()
            }),
            ..Default::default()
        };
        let r = ProbeResults::from_report(&report(end, "TCP", false)).unwrap();
        assert_eq!(r.flows().len(), 1);
        let f = &r.flows()[0];
        assert_eq!(f.direction, Direction::Upload);
        let (s, rx) = (f.sent.unwrap(), f.received.unwrap());
        assert_eq!((s.bytes, rx.bytes, rx.seconds), (1000, 900, 1.5));
        assert_eq!(f.retransmits, Some(7));
        assert_eq!(f.udp, None);
        assert_eq!(r.cpu(), Some((0.5, 0.125)));
        assert_eq!((r.streams(), r.is_udp()), (2, false));
    }

    #[test]
    fn reverse_and_bidir_name_their_directions() {
        let end =
            End { sum_sent: Some(sum(1, 1.0, None)), sum_received: Some(sum(1, 1.0, None)), ..Default::default() };
        let r = ProbeResults::from_report(&report(end, "TCP", true)).unwrap();
        assert_eq!(r.flows()[0].direction, Direction::Download);

        let end = End {
            sum_sent: Some(sum(10, 1.0, Some(1))),
            sum_received: Some(sum(10, 1.0, None)),
            sum_sent_bidir_reverse: Some(sum(20, 1.0, Some(2))),
            sum_received_bidir_reverse: Some(sum(19, 1.0, None)),
            ..Default::default()
        };
        let r = ProbeResults::from_report(&report(end, "TCP", false)).unwrap();
        let dirs: Vec<_> =
            r.flows().iter().map(|f| (f.direction, f.received.map(|t| t.bytes), f.retransmits)).collect();
        assert_eq!(dirs, vec![(Direction::Upload, Some(10), Some(1)), (Direction::Download, Some(19), Some(2))]);
    }

    #[test]
    fn udp_takes_loss_and_jitter_from_the_sum() {
        let udp_sum = Summary {
            jitter_ms: Some(0.25),
            lost_packets: Some(3),
            packets: Some(300),
            lost_percent: Some(1.0),
            ..sum(1000, 1.0, None)
        };
        let end = End {
            sum: Some(udp_sum),
            sum_sent: Some(sum(1000, 1.0, Some(0))),
            sum_received: Some(sum(990, 1.0, None)),
            ..Default::default()
        };
        let r = ProbeResults::from_report(&report(end, "UDP", false)).unwrap();
        let u = r.flows()[0].udp.unwrap();
        assert_eq!((u.jitter_ms, u.lost_packets, u.packets, u.lost_percent), (0.25, Some(3), Some(300), Some(1.0)));
        assert_eq!(r.flows()[0].retransmits, None, "UDP has no retransmits");
        assert!(r.is_udp());
    }

    #[test]
    fn a_report_without_totals_is_refused() {
        assert_eq!(ProbeResults::from_report(&TestReport::default()), Err(NoTotals));
    }

    #[test]
    fn a_half_known_second_flow_is_not_published() {
        let end = End {
            sum_sent: Some(sum(10, 1.0, Some(1))),
            sum_received: Some(sum(10, 1.0, None)),
            sum_sent_bidir_reverse: Some(sum(20, 1.0, Some(2))),
            ..Default::default()
        };
        let r = ProbeResults::from_report(&report(end, "TCP", false)).unwrap();
        assert_eq!(r.flows().len(), 1);
    }
}
