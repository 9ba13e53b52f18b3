//! The end-of-test numbers of a phase, one row per direction, and how to print them.
//!
//! Read straight from the `end` object the engine (or iperf3) wrote: the page recomputes
//! nothing, so its numbers are the ones the text output printed.

use wireperf_protocol::schema::{Summary, TestReport};

use crate::units::format_unit;

/// One direction of one phase.
#[derive(Clone, Debug, PartialEq)]
pub struct Direction<'a> {
    /// `↑ upload` or `↓ download`.
    pub label: &'static str,
    /// The sending side's totals.
    pub sent: Option<&'a Summary>,
    /// The receiving side's totals.
    pub received: Option<&'a Summary>,
    /// UDP: the summary carrying jitter and loss.
    pub udp: Option<&'a Summary>,
}

impl Direction<'_> {
    /// What the receiver got (the number a user means by "speed"), else the sender's.
    pub fn goodput(&self) -> Option<f64> {
        self.received.or(self.udp).or(self.sent).map(|s| s.bits_per_second)
    }

    /// TCP retransmits of the sender.
    pub fn retransmits(&self) -> Option<u64> {
        self.sent.and_then(|s| s.retransmits)
    }
}

/// True when the forward direction of this report is client → server.
fn forward_is_upload(report: &TestReport) -> bool {
    let reverse = report.start.test_start.as_ref().is_some_and(|t| t.reverse != 0);
    let client = report.start.accepted_connection.is_none();
    reverse != client
}

fn label(upload: bool) -> &'static str {
    if upload { "↑ upload" } else { "↓ download" }
}

/// The directions of a phase: one, or two for `--bidir`.
pub fn directions(report: &TestReport) -> Vec<Direction<'_>> {
    let end = &report.end;
    let up = forward_is_upload(report);
    let mut out = vec![Direction {
        label: label(up),
        sent: end.sum_sent.as_ref(),
        received: end.sum_received.as_ref(),
        udp: end.sum.as_ref(),
    }];
    if end.sum_sent_bidir_reverse.is_some() || end.sum_received_bidir_reverse.is_some() {
        out.push(Direction {
            label: label(!up),
            sent: end.sum_sent_bidir_reverse.as_ref(),
            received: end.sum_received_bidir_reverse.as_ref(),
            udp: end.sum_bidir_reverse.as_ref(),
        });
    }
    out
}

/// `13.7 Gbit/s`.
pub fn rate(bits_per_second: f64) -> String {
    format!("{}/s", format_unit(bits_per_second / 8.0, 'a').trim())
}

/// `6.38 GBytes`.
pub fn bytes(n: u64) -> String {
    // Byte counts of one test are far below 2^53: the conversion is exact.
    format!("{}s", format_unit(n as f64, 'A').trim())
}

/// `1,386`.
pub fn count(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `4.00 s`.
pub fn seconds(s: f64) -> String {
    format!("{s:.2} s")
}

/// `+5.2%` / `−11.9%` change of `value` against `base`; `None` when base is 0.
pub fn change(value: f64, base: f64) -> Option<(String, std::cmp::Ordering)> {
    if base.is_nan() || base <= 0.0 {
        return None;
    }
    let pct = (value / base - 1.0) * 100.0;
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

    #[test]
    fn numbers_read_well() {
        assert_eq!(count(0), "0");
        assert_eq!(count(1386), "1,386");
        assert_eq!(count(1234567), "1,234,567");
        assert_eq!(rate(13.7e9), "13.7 Gbit/s");
        assert_eq!(bytes(2 * 1024 * 1024), "2.00 MBytes");
        assert_eq!(change(90.0, 100.0).map(|c| c.0), Some("−10.0%".to_string()));
        assert_eq!(change(105.0, 100.0).map(|c| c.0), Some("+5.0%".to_string()));
        assert_eq!(change(1.0, 0.0), None);
    }
}
