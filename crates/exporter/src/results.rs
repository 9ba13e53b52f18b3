//! The numbers a probe publishes, read from the engine's `-J` report.
//!
//! The engine already computes every total for the text and JSON outputs; this module only
//! picks them out of [`TestReport::end`] so the exporter never computes a number twice. A test
//! has one flow (upload, or download with `reverse`) or two (`bidir`); each flow has the
//! sender's and the receiver's view of the same bytes.

use wireperf_protocol::schema::{Summary, TestReport};

/// Which way a flow's bytes travel, seen from the exporter (the client).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// Exporter → target (iperf3's default).
    Upload,
    /// Target → exporter (`reverse`, and the second flow of `bidir`).
    Download,
}

impl Direction {
    /// The value of the `direction` label.
    pub fn label(self) -> &'static str {
        match self {
            Direction::Upload => "upload",
            Direction::Download => "download",
        }
    }
}

/// One side's total of a flow.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Side {
    /// Bytes counted.
    pub bytes: u64,
    /// Seconds they took.
    pub seconds: f64,
    /// Their rate.
    pub bits_per_second: f64,
}

impl From<&Summary> for Side {
    fn from(s: &Summary) -> Self {
        Self { bytes: s.bytes, seconds: s.seconds, bits_per_second: s.bits_per_second }
    }
}

/// UDP receiver statistics of a flow.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct UdpStats {
    /// Jitter, milliseconds (iperf3's unit).
    pub jitter_ms: f64,
    /// Datagrams lost.
    pub lost_packets: i64,
    /// Datagrams sent.
    pub packets: i64,
    /// Lost, percent.
    pub lost_percent: f64,
}

impl UdpStats {
    fn from_summary(s: &Summary) -> Option<Self> {
        let jitter_ms = s.jitter_ms?;
        Some(Self {
            jitter_ms,
            lost_packets: s.lost_packets.unwrap_or(0),
            packets: s.packets.unwrap_or(0),
            lost_percent: s.lost_percent.unwrap_or(0.0),
        })
    }
}

/// One direction of a test.
#[derive(Clone, Debug, PartialEq)]
pub struct Flow {
    /// Which way.
    pub direction: Direction,
    /// The sender's totals.
    pub sent: Side,
    /// The receiver's totals.
    pub received: Side,
    /// TCP retransmits counted by the sender (absent for UDP or when unknown).
    pub retransmits: Option<u64>,
    /// UDP loss and jitter (absent for TCP).
    pub udp: Option<UdpStats>,
}

/// CPU use of both ends, as fractions of one CPU's worth (iperf3's percent / 100).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Cpu {
    /// This host (the exporter).
    pub local: f64,
    /// The target.
    pub remote: f64,
}

/// Everything a successful probe publishes.
#[derive(Clone, Debug, PartialEq)]
pub struct ProbeResults {
    /// `TCP` or `UDP`.
    pub protocol: String,
    /// Streams per direction.
    pub streams: u32,
    /// One flow, or two for `bidir`; the first is the one iperf3's `sum_sent`/`sum_received`
    /// describe.
    pub flows: Vec<Flow>,
    /// CPU use, when reported.
    pub cpu: Option<Cpu>,
    /// The address the data streams reached (tells which node answered when the target is
    /// a load-balanced name).
    pub peer: Option<String>,
}

/// Why a report cannot be published.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("the test report has no end totals")]
pub struct NoTotals;

impl ProbeResults {
    /// Reads the totals of a finished client test. `reverse` tells which way the first flow
    /// went (the report's `test_start.reverse` says the same, but a partial report may lack it).
    pub fn from_report(report: &TestReport, reverse: bool) -> Result<Self, NoTotals> {
        let end = &report.end;
        let first_dir = if reverse { Direction::Download } else { Direction::Upload };
        let mut flows = Vec::with_capacity(2);
        let (sent, received) = (end.sum_sent.as_ref(), end.sum_received.as_ref());
        // UDP's loss and jitter live in `sum` (and again in `sum_received`).
        let first = flow(first_dir, sent.or(end.sum.as_ref()), received.or(end.sum.as_ref()), end.sum.as_ref())
            .ok_or(NoTotals)?;
        flows.push(first);
        let second = flow(
            Direction::Download,
            end.sum_sent_bidir_reverse.as_ref(),
            end.sum_received_bidir_reverse.as_ref(),
            end.sum_bidir_reverse.as_ref(),
        );
        flows.extend(second);
        let ts = report.start.test_start.as_ref();
        Ok(Self {
            protocol: ts.map_or_else(|| "TCP".to_string(), |t| t.protocol.clone()),
            streams: ts.map_or(1, |t| t.num_streams),
            flows,
            cpu: end
                .cpu_utilization_percent
                .as_ref()
                .map(|c| Cpu { local: c.host_total / 100.0, remote: c.remote_total / 100.0 }),
            peer: report.start.connected.first().map(|c| c.remote_host.clone()),
        })
    }

    /// Whether this was a UDP test.
    pub fn is_udp(&self) -> bool {
        self.protocol.eq_ignore_ascii_case("udp")
    }
}

fn flow(dir: Direction, sent: Option<&Summary>, received: Option<&Summary>, sum: Option<&Summary>) -> Option<Flow> {
    let (s, r) = (sent?, received?);
    // `sum` is iperf3's classic UDP summary (packets = datagrams sent); the receiver's sum is
    // the fallback.
    let udp = sum.and_then(UdpStats::from_summary).or_else(|| UdpStats::from_summary(r));
    Some(Flow {
        direction: dir,
        sent: Side::from(s),
        received: Side::from(r),
        retransmits: if udp.is_some() { None } else { s.retransmits },
        udp,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use wireperf_protocol::schema::{CpuUtilization, End, Start, TestStart};

    fn sum(bytes: u64, secs: f64, retr: Option<u64>) -> Summary {
        Summary {
            bytes,
            seconds: secs,
            bits_per_second: bytes as f64 * 8.0 / secs,
            retransmits: retr,
            ..Default::default()
        }
    }

    fn report(end: End, protocol: &str) -> TestReport {
        let start = Start {
            test_start: Some(TestStart { protocol: protocol.into(), num_streams: 2, ..Default::default() }),
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
        let r = ProbeResults::from_report(&report(end, "TCP"), false).unwrap();
        assert_eq!(r.flows.len(), 1);
        let f = &r.flows[0];
        assert_eq!(f.direction, Direction::Upload);
        assert_eq!((f.sent.bytes, f.received.bytes, f.received.seconds), (1000, 900, 1.5));
        assert_eq!(f.retransmits, Some(7));
        assert_eq!(f.udp, None);
        assert_eq!(r.cpu, Some(Cpu { local: 0.5, remote: 0.125 }));
        assert_eq!((r.streams, r.is_udp()), (2, false));
    }

    #[test]
    fn reverse_and_bidir_name_their_directions() {
        let end =
            End { sum_sent: Some(sum(1, 1.0, None)), sum_received: Some(sum(1, 1.0, None)), ..Default::default() };
        let r = ProbeResults::from_report(&report(end, "TCP"), true).unwrap();
        assert_eq!(r.flows[0].direction, Direction::Download);

        let end = End {
            sum_sent: Some(sum(10, 1.0, Some(1))),
            sum_received: Some(sum(10, 1.0, None)),
            sum_sent_bidir_reverse: Some(sum(20, 1.0, Some(2))),
            sum_received_bidir_reverse: Some(sum(19, 1.0, None)),
            ..Default::default()
        };
        let r = ProbeResults::from_report(&report(end, "TCP"), false).unwrap();
        let dirs: Vec<_> = r.flows.iter().map(|f| (f.direction, f.received.bytes, f.retransmits)).collect();
        assert_eq!(dirs, vec![(Direction::Upload, 10, Some(1)), (Direction::Download, 19, Some(2))]);
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
        let r = ProbeResults::from_report(&report(end, "UDP"), false).unwrap();
        let f = &r.flows[0];
        assert_eq!(f.udp, Some(UdpStats { jitter_ms: 0.25, lost_packets: 3, packets: 300, lost_percent: 1.0 }));
        assert_eq!(f.retransmits, None, "UDP has no retransmits");
        assert!(r.is_udp());
    }

    #[test]
    fn a_report_without_totals_is_refused() {
        assert_eq!(ProbeResults::from_report(&TestReport::default(), false), Err(NoTotals));
    }
}
