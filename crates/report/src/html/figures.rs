//! The end-of-test numbers of a phase, one row per direction, and how to print them.
//!
//! Read from the report's [`TestOutcome`], the one place that knows which sum of `end` is which
//! direction: the page recomputes nothing, so its numbers are the ones the text output printed.

use wireperf_protocol::TestOutcome;
use wireperf_protocol::outcome::{Flow, words};
use wireperf_protocol::schema::TestReport;

use crate::units::format_unit;

/// One direction of one phase.
#[derive(Clone, Debug, PartialEq)]
pub struct Direction {
    /// `↑ upload` or `↓ download`.
    pub label: &'static str,
    /// Its figures.
    pub flow: Flow,
}

impl Direction {
    /// What the receiver got (the number a user means by "speed"), else the sender's.
    pub fn goodput(&self) -> Option<f64> {
        self.flow.best().map(|t| t.bits_per_second)
    }

    /// TCP retransmits of the sender.
    pub fn retransmits(&self) -> Option<u64> {
        self.flow.retransmits
    }
}

fn label(d: wireperf_protocol::outcome::Direction) -> &'static str {
    if d == wireperf_protocol::outcome::Direction::Download { "↓ download" } else { "↑ upload" }
}

/// The directions of a phase: one, or two for `--bidir`. A report without totals still has
/// one row (of its test's direction) to say so.
pub fn directions(report: &TestReport) -> Vec<Direction> {
    let o = TestOutcome::from_report(report);
    let mut out: Vec<Direction> =
        o.flows.into_iter().map(|flow| Direction { label: label(flow.direction), flow }).collect();
    if out.is_empty() {
        let direction = match o.direction {
            wireperf_protocol::outcome::Direction::Bidir => o.written_by.direction(true),
            d => d,
        };
        let flow = Flow { direction, sent: None, received: None, retransmits: None, udp: None };
        out.push(Direction { label: label(direction), flow });
    }
    out
}

/// `6.38 GBytes`.
pub fn bytes(n: u64) -> String {
    // Byte counts of one test are far below 2^53: the conversion is exact.
    format!("{}s", format_unit(n as f64, 'A').trim())
}

/// `1,386`.
pub use wireperf_protocol::outcome::words::count;

/// `4.00 s`.
pub fn seconds(s: f64) -> String {
    format!("{s:.2} s")
}

/// `+5.2%` / `−11.9%` change of `value` against `base`; `None` when base is 0.
pub fn change(value: f64, base: f64) -> Option<(String, std::cmp::Ordering)> {
    let pct = words::percent_change(base, value)?;
    let rounded = (pct * 10.0).round() / 10.0;
    let ord = rounded.partial_cmp(&0.0).unwrap_or(std::cmp::Ordering::Equal);
    let text = match ord {
        std::cmp::Ordering::Greater => format!("+{rounded:.1}%"),
        std::cmp::Ordering::Less => format!("−{:.1}%", -rounded),
        std::cmp::Ordering::Equal => "±0.0%".to_string(),
    };
    Some((text, ord))
}

/// Largest cwnd over the sending streams (bytes).
pub fn max_cwnd(report: &TestReport) -> Option<u64> {
    report
        .end
        .streams
        .iter()
        .filter_map(|s| s.sender.as_ref().and_then(|x| x.max_snd_cwnd))
        // A receiving client's report has zeros here: iperf3 has no TCP_INFO of the sender.
        .filter(|c| *c > 0)
        .max()
}

/// Mean of the sending streams' mean RTTs, microseconds.
pub fn mean_rtt_us(report: &TestReport) -> Option<u64> {
    let rtts: Vec<u64> = report
        .end
        .streams
        .iter()
        .filter_map(|s| s.sender.as_ref().and_then(|x| x.mean_rtt))
        .filter(|r| *r > 0)
        .collect();
    if rtts.is_empty() { None } else { Some(rtts.iter().sum::<u64>() / rtts.len() as u64) }
}

#[cfg(test)]
mod tests {
    use super::*;

    use wireperf_protocol::schema::{End, HostPort, Summary, TestStart};

    fn one_way(accepted: bool, reverse: i32) -> TestReport {
        let mut r = TestReport::default();
        let peer = Some(HostPort { host: "h".into(), port: 5201 });
        if accepted {
            r.start.accepted_connection = peer;
        } else {
            r.start.connecting_to = peer;
        }
        r.start.test_start = Some(TestStart { protocol: "TCP".into(), reverse, ..Default::default() });
        let s = Summary { end: 1.0, bytes: 1, bits_per_second: 8.0, ..Default::default() };
        r.end = End { sum_sent: Some(s.clone()), sum_received: Some(s), ..Default::default() };
        r
    }

    /// Regression: a server-written (`iperf3 -s -J`) document of a plain upload was labelled
    /// `↓ download`, and a `-R` one `↑ upload`: the label flipped on the writer as a bidir test's does.
    #[test]
    fn server_written_one_way_tests_keep_their_direction() {
        let labels = |r: &TestReport| directions(r).iter().map(|d| d.label).collect::<Vec<_>>();
        assert_eq!(labels(&one_way(true, 0)), ["↑ upload"]);
        assert_eq!(labels(&one_way(true, 1)), ["↓ download"]);
        assert_eq!(labels(&one_way(false, 0)), ["↑ upload"]);
        assert_eq!(labels(&one_way(false, 1)), ["↓ download"]);
    }

    /// Regression: an iperf 2 full-duplex document's `sum_received` (the client's download) was
    /// shown as the upload's receiver, so the upload row printed the download's rate.
    #[test]
    fn iperf2_full_duplex_shows_each_direction_with_its_own_rate() {
        let mut r = one_way(false, 0);
        r.start.version = format!("wireperf 0.1.0 {}", wireperf_protocol::outcome::IPERF2_MODE);
        r.end.sum_received.as_mut().unwrap().bits_per_second = 16.0;
        r.intervals.push(wireperf_protocol::schema::Interval {
            sum_bidir_reverse: Some(Default::default()),
            ..Default::default()
        });
        let d: Vec<_> = directions(&r).iter().map(|d| (d.label, d.goodput())).collect();
        assert_eq!(d, [("↑ upload", Some(8.0)), ("↓ download", Some(16.0))]);
    }

    #[test]
    fn a_report_without_totals_keeps_one_empty_row() {
        let d = directions(&TestReport::default());
        assert_eq!((d.len(), d[0].label, d[0].goodput()), (1, "↑ upload", None));
    }

    #[test]
    fn numbers_read_well() {
        assert_eq!(count(0), "0");
        assert_eq!(count(1386), "1,386");
        assert_eq!(count(1234567), "1,234,567");
        assert_eq!(bytes(2 * 1024 * 1024), "2.00 MBytes");
        assert_eq!(change(90.0, 100.0).map(|c| c.0), Some("−10.0%".to_string()));
        assert_eq!(change(105.0, 100.0).map(|c| c.0), Some("+5.0%".to_string()));
        assert_eq!(change(1.0, 0.0), None);
    }
}
