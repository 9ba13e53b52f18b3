//! Every report line of iperf3 3.12 (`src/iperf_locale.c`), as functions.
//!
//! The data lines share a head, `[ID]ROLE T1-T2 sec  XFERs  RATEs/sec`, built by
//! [`LineHead`]; the functions below add each variant's tail. Trailing spaces are part of the
//! formats (e.g. 18 spaces before an empty flag) and are reproduced, since users diff and
//! parse this output.

use crate::units::{c_fixed, format_g, format_unit};

/// `[ ID] Interval           Transfer     Bitrate`
pub const HEADER_PLAIN: &str = "[ ID] Interval           Transfer     Bitrate\n";
/// Plain header, `--bidir`.
pub const HEADER_PLAIN_BIDIR: &str = "[ ID][Role] Interval           Transfer     Bitrate\n";
/// TCP summary header with retransmits.
pub const HEADER_RETR: &str = "[ ID] Interval           Transfer     Bitrate         Retr\n";
/// TCP summary header with retransmits, `--bidir`.
pub const HEADER_RETR_BIDIR: &str = "[ ID][Role] Interval           Transfer     Bitrate         Retr\n";
/// TCP interval header of a sender that reads retransmits and cwnd.
pub const HEADER_RETR_CWND: &str = "[ ID] Interval           Transfer     Bitrate         Retr  Cwnd\n";
/// Retr/Cwnd interval header, `--bidir`.
pub const HEADER_RETR_CWND_BIDIR: &str = "[ ID][Role] Interval           Transfer     Bitrate         Retr  Cwnd\n";
/// UDP receiver intervals and every UDP summary.
pub const HEADER_UDP: &str = "[ ID] Interval           Transfer     Bitrate         Jitter    Lost/Total Datagrams\n";
/// UDP header, `--bidir` (intervals and summary).
pub const HEADER_UDP_BIDIR: &str =
    "[ ID][Role] Interval           Transfer     Bitrate         Jitter    Lost/Total Datagrams\n";
/// UDP sender intervals.
pub const HEADER_UDP_SENDER: &str = "[ ID] Interval           Transfer     Bitrate         Total Datagrams\n";
/// The line between intervals (with `-P` > 1) and before the summary: 25 dashes.
pub const SEPARATOR: &str = "- - - - - - - - - - - - - - - - - - - - - - - - -\n";
/// `-V`, after the separator before the summary.
pub const SUMMARY_INTRO: &str = "Test Complete. Summary Results:\n";
/// The FLAG of intervals inside the `-O` period.
pub const OMITTED: &str = "(omitted)";
/// wireperf's FLAG on a UDP receiver interval whose jitter left out GRO-coalesced datagrams
/// (`wireperf_jitter_untimed` > 0): the figure is from a subset, not from every datagram.
pub const JITTER_PARTIAL: &str = "(jitter partial)";
/// FLAG of summary sender lines.
pub const SENDER: &str = "sender";
/// FLAG of summary receiver lines.
pub const RECEIVER: &str = "receiver";

/// Ten spaces: the UDP sender PAD in `--bidir`, which puts the datagram count under
/// `Lost/Total`.
const BIDIR_UDP_PAD: &str = "          ";

/// The bracketed id at the start of a data line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LineId {
    /// `[%3d]`: a stream.
    Stream(i32),
    /// `[SUM]`.
    Sum,
}

/// The columns every data line starts with.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LineHead<'a> {
    /// Stream id or `[SUM]`.
    pub id: LineId,
    /// `""`, or `[TX-C]`/`[RX-C]`/`[TX-S]`/`[RX-S]` in `--bidir`.
    pub role_tag: &'a str,
    /// Interval start, seconds (`%6.2f`).
    pub start: f64,
    /// Interval end, seconds (`%-6.2f`).
    pub end: f64,
    /// Bytes moved (adaptive bytes).
    pub bytes: u64,
    /// Rate in bytes per second (printed in `format`'s unit).
    pub bytes_per_sec: f64,
    /// The `-f` letter.
    pub format: char,
}

impl LineHead<'_> {
    /// `[  5][TX-C]   0.00-1.00   sec  2.24 GBytes  19.2 Gbits/sec`
    fn render(&self) -> String {
        let id = match self.id {
            LineId::Stream(n) => format!("[{n:>3}]"),
            LineId::Sum => "[SUM]".to_string(),
        };
        format!(
            "{id}{} {}-{} sec  {}s  {}s/sec",
            self.role_tag,
            c_fixed(self.start, 6, 2, false),
            c_fixed(self.end, 6, 2, true),
            format_unit(self.bytes as f64, 'A'),
            format_unit(self.bytes_per_sec, self.format),
        )
    }
}

/// Rate in bytes/s from the schema's bits/s (exact: both scalings are by a power of two).
pub fn bytes_per_sec(bits_per_second: f64) -> f64 {
    bits_per_second / 8.0
}

/// PLAIN: TCP receivers, senders without retransmit info, `[SUM]` without Retr.
pub fn plain(head: &LineHead<'_>, flag: &str) -> String {
    format!("{}                  {flag}\n", head.render())
}

/// RETR: TCP sender summary with retransmits (`%3u`). The gap before the flag is 3.18+'s:
/// 12 spaces on a stream's line, 13 on `[SUM]` (3.12–3.17 print 13 on both; iperf3 changed
/// the stream format in 3.18, and wireperf prints what the newest iperf3 prints).
pub fn retr(head: &LineHead<'_>, retransmits: u64, flag: &str) -> String {
    let gap = if head.id == LineId::Sum { 13 } else { 12 };
    format!("{}  {retransmits:>3}{:gap$}{flag}\n", head.render(), "")
}

/// RETR_CWND: TCP sender interval with retransmits and congestion window (bytes).
pub fn retr_cwnd(head: &LineHead<'_>, retransmits: u64, cwnd: u64, flag: &str) -> String {
    format!("{}  {retransmits:>3}   {}s       {flag}\n", head.render(), format_unit(cwnd as f64, 'A'))
}

/// UDP: receiver intervals and all UDP summaries: jitter (`%5.3f` ms), lost/total, loss
/// percentage (`%.2g`).
pub fn udp(head: &LineHead<'_>, jitter_ms: f64, lost: i64, total: i64, lost_percent: f64, flag: &str) -> String {
    format!(
        "{}  {} ms  {lost}/{total} ({}%)  {flag}\n",
        head.render(),
        c_fixed(jitter_ms, 5, 3, false),
        format_g(lost_percent, 2)
    )
}

/// UDP_SENDER: sender intervals: datagram count, padded in `--bidir`.
pub fn udp_sender(head: &LineHead<'_>, bidir: bool, datagrams: i64, flag: &str) -> String {
    let pad = if bidir { BIDIR_UDP_PAD } else { "" };
    format!("{} {pad} {datagrams}  {flag}\n", head.render())
}

/// `[SUM]ROLE  0.0- 2.0 sec  N datagrams received out-of-order` (3.12 uses the `[SUM]` form
/// even after a single stream's summary).
pub fn out_of_order(role_tag: &str, start: f64, end: f64, count: i64) -> String {
    format!(
        "[SUM]{role_tag} {}-{} sec  {count} datagrams received out-of-order\n",
        c_fixed(start, 4, 1, false),
        c_fixed(end, 4, 1, false)
    )
}

/// `[  5] (sender statistics not available)` (server, `-V`).
pub fn sender_not_available(id: LineId) -> String {
    format!("{} (sender statistics not available)\n", bare_id(id))
}

/// `[  5] (receiver statistics not available)` (server, `-V`).
pub fn receiver_not_available(id: LineId) -> String {
    format!("{} (receiver statistics not available)\n", bare_id(id))
}

fn bare_id(id: LineId) -> String {
    match id {
        LineId::Stream(n) => format!("[{n:>3}]"),
        LineId::Sum => "[SUM]".to_string(),
    }
}

/// `CPU Utilization: local/sender 36.6% (0.3%u/36.3%s), remote/receiver 35.2% (2.2%u/32.9%s)`.
///
/// `local_role` is this host's role in the block (`sender` or `receiver`); the remote gets
/// the other word. Figures are `[total, user, system]` percent.
pub fn cpu(local_role: &str, local: [f64; 3], remote: [f64; 3]) -> String {
    let remote_role = if local_role == SENDER { RECEIVER } else { SENDER };
    format!(
        "CPU Utilization: local/{local_role} {:.1}% ({:.1}%u/{:.1}%s), remote/{remote_role} {:.1}% ({:.1}%u/{:.1}%s)\n",
        local[0], local[1], local[2], remote[0], remote[1], remote[2]
    )
}

/// `snd_tcp_congestion bbr`.
pub fn snd_congestion(name: &str) -> String {
    format!("snd_tcp_congestion {name}\n")
}

/// `rcv_tcp_congestion bbr`.
pub fn rcv_congestion(name: &str) -> String {
    format!("rcv_tcp_congestion {name}\n")
}

/// `        Sent 1.00 GBytes / 1.00 GBytes (100%) of /tmp/file` (`-F`).
pub fn diskfile(bytes: u64, size: u64, percent: u64, filename: &str) -> String {
    format!(
        "        Sent {}s / {}s ({percent}%) of {filename}\n",
        format_unit(bytes as f64, 'A'),
        format_unit(size as f64, 'A')
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn head(id: LineId, tag: &str, start: f64, end: f64, bytes: u64, bps: f64) -> String {
        plain(&LineHead { id, role_tag: tag, start, end, bytes, bytes_per_sec: bps / 8.0, format: 'a' }, "")
    }

    #[test]
    fn interval_column_widths() {
        let l = head(LineId::Stream(5), "", 0.0, 1.0, 0, 0.0);
        assert_eq!(l, "[  5]   0.00-1.00   sec  0.00 Bytes  0.00 bits/sec                  \n");
        let l = head(LineId::Stream(12), "[RX-C]", 5.0, 10.0, 0, 0.0);
        assert!(l.starts_with("[ 12][RX-C]   5.00-10.00  sec"), "{l}");
        let l = head(LineId::Sum, "", 100.0, 101.0, 0, 0.0);
        assert!(l.starts_with("[SUM] 100.00-101.00 sec"), "{l}");
    }

    #[test]
    fn small_lines() {
        assert_eq!(out_of_order("", 0.0, 2.0, 3), "[SUM]  0.0- 2.0 sec  3 datagrams received out-of-order\n");
        assert_eq!(sender_not_available(LineId::Stream(5)), "[  5] (sender statistics not available)\n");
        assert_eq!(receiver_not_available(LineId::Sum), "[SUM] (receiver statistics not available)\n");
        assert_eq!(
            cpu(RECEIVER, [50.5, 0.7, 49.8], [46.7, 0.4, 46.3]),
            "CPU Utilization: local/receiver 50.5% (0.7%u/49.8%s), remote/sender 46.7% (0.4%u/46.3%s)\n"
        );
        assert_eq!(
            diskfile(1 << 20, 1 << 21, 50, "/tmp/f"),
            "        Sent 1.00 MBytes / 2.00 MBytes (50%) of /tmp/f\n"
        );
    }
}
