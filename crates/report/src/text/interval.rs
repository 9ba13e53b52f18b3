//! One reporting interval as iperf3 prints it (`iperf_print_intermediate` and
//! `print_interval_results` in 3.12's `iperf_api.c`).
//!
//! Layout rules, all observable in the captured samples:
//! * before the first interval line of the test: the header; before later intervals the
//!   separator, but only with more than one stream per direction;
//! * per direction block: each stream's line, then `[SUM]` when `-P` > 1;
//! * `--bidir`: the client prints TX then RX, the server RX then TX (the client→server
//!   direction first on both);
//! * TCP streams this host sends on show Retr and Cwnd when the OS reports them, others the
//!   plain line; UDP senders show the datagram count, receivers jitter and loss.

use super::lines::{self, LineHead, LineId};
use super::{Block, TextContext};
use wireperf_protocol::Protocol;
use wireperf_protocol::schema::{Interval, IntervalStream, IntervalSum};

/// The text of one interval. `first` is true for the first interval printed in the test
/// (including an `-O` omitted one: the header is not repeated when the real measurement
/// restarts at 0.00); it selects the header instead of the separator.
pub fn render_interval(interval: &Interval, ctx: &TextContext, first: bool) -> String {
    let mut out = String::new();
    let mut started = false;
    for block in ctx.blocks() {
        for stream in interval.streams.iter().filter(|s| s.sender == block.local_sends) {
            if !started {
                out.push_str(&lead_in(ctx, first));
                started = true;
            }
            out.push_str(&stream_line(stream, ctx));
        }
        if ctx.num_streams > 1 {
            let sum = if block.reverse_sums { interval.sum_bidir_reverse.as_ref() } else { Some(&interval.sum) };
            if let Some(sum) = sum {
                out.push_str(&sum_line(sum, block, ctx));
            }
        }
    }
    out
}

/// Every interval of a finished test, in order (replaying a stored report).
pub fn render_intervals(intervals: &[Interval], ctx: &TextContext) -> String {
    intervals.iter().enumerate().map(|(i, iv)| render_interval(iv, ctx, i == 0)).collect()
}

/// iperf3's rule for dropping the last interval: one that is shorter than 10 % of the
/// reporting interval and moved no bytes on any stream is neither printed nor put in the
/// JSON (it comes from the control messages racing the data at the end of a test).
pub fn is_negligible_interval(interval: &Interval, reporting_interval_secs: f64) -> bool {
    !interval.streams.iter().any(|s| s.end - s.start >= reporting_interval_secs * 0.10 || s.bytes > 0)
}

/// The header (first interval) or the separator (later ones, with `-P` > 1).
fn lead_in(ctx: &TextContext, first: bool) -> String {
    if first {
        interval_header(ctx).to_string()
    } else if ctx.num_streams > 1 {
        lines::SEPARATOR.to_string()
    } else {
        String::new()
    }
}

/// The interval header iperf3 picks for this side.
pub fn interval_header(ctx: &TextContext) -> &'static str {
    match (ctx.protocol, ctx.bidir) {
        (Protocol::Tcp, false) if ctx.interval_retransmits() => lines::HEADER_RETR_CWND,
        (Protocol::Tcp, true) if ctx.interval_retransmits() => lines::HEADER_RETR_CWND_BIDIR,
        (Protocol::Tcp, false) => lines::HEADER_PLAIN,
        (Protocol::Tcp, true) => lines::HEADER_PLAIN_BIDIR,
        (Protocol::Udp, true) => lines::HEADER_UDP_BIDIR,
        (Protocol::Udp, false) if ctx.local_sends() => lines::HEADER_UDP_SENDER,
        (Protocol::Udp, false) => lines::HEADER_UDP,
    }
}

fn flag(omitted: bool) -> &'static str {
    if omitted { lines::OMITTED } else { "" }
}

/// A UDP receiver line's FLAG: `(omitted)` as iperf3, then wireperf's `(jitter partial)` when
/// some of the interval's datagrams had no receive time of their own (GRO), so the jitter beside
/// it was not measured on all of them.
fn udp_receiver_flag(omitted: bool, untimed: Option<u64>) -> String {
    match (flag(omitted), untimed.unwrap_or(0) > 0) {
        (f, false) => f.to_string(),
        ("", true) => lines::JITTER_PARTIAL.to_string(),
        (f, true) => format!("{f} {}", lines::JITTER_PARTIAL),
    }
}

fn stream_line(s: &IntervalStream, ctx: &TextContext) -> String {
    let head = LineHead {
        id: LineId::Stream(s.socket),
        role_tag: ctx.role_tag(s.sender),
        start: s.start,
        end: s.end,
        bytes: s.bytes,
        bytes_per_sec: lines::bytes_per_sec(s.bits_per_second),
        format: ctx.format,
    };
    let f = flag(s.omitted);
    match ctx.protocol {
        Protocol::Tcp if ctx.interval_retransmits() && s.sender => {
            lines::retr_cwnd(&head, s.retransmits.unwrap_or(0), s.snd_cwnd.unwrap_or(0), f)
        }
        Protocol::Tcp => lines::plain(&head, f),
        Protocol::Udp if s.sender => lines::udp_sender(&head, ctx.bidir, s.packets.unwrap_or(0), f),
        Protocol::Udp => {
            let lost = s.lost_packets.unwrap_or(0);
            let total = s.packets.unwrap_or(0);
            let pct = s.lost_percent.unwrap_or_else(|| percent(lost, total));
            let f = udp_receiver_flag(s.omitted, s.wireperf_jitter_untimed);
            lines::udp(&head, s.jitter_ms.unwrap_or(0.0), lost, total, pct, &f)
        }
    }
}

fn sum_line(sum: &IntervalSum, block: Block, ctx: &TextContext) -> String {
    let head = LineHead {
        id: LineId::Sum,
        role_tag: ctx.role_tag(block.local_sends),
        start: sum.start,
        end: sum.end,
        bytes: sum.bytes,
        bytes_per_sec: lines::bytes_per_sec(sum.bits_per_second),
        format: ctx.format,
    };
    let f = flag(sum.omitted);
    match ctx.protocol {
        Protocol::Tcp if ctx.interval_retransmits() && block.local_sends => {
            lines::retr(&head, sum.retransmits.unwrap_or(0), f)
        }
        Protocol::Tcp => lines::plain(&head, f),
        Protocol::Udp if block.local_sends => lines::udp_sender(&head, ctx.bidir, sum.packets.unwrap_or(0), f),
        Protocol::Udp => {
            let lost = sum.lost_packets.unwrap_or(0);
            let total = sum.packets.unwrap_or(0);
            let pct = sum.lost_percent.unwrap_or_else(|| percent(lost, total));
            let f = udp_receiver_flag(sum.omitted, sum.wireperf_jitter_untimed);
            lines::udp(&head, sum.jitter_ms.unwrap_or(0.0), lost, total, pct, &f)
        }
    }
}

/// iperf3's loss percentage: `100.0 * lost / total`, 0 when nothing was counted.
pub(crate) fn percent(lost: i64, total: i64) -> f64 {
    if total > 0 { 100.0 * lost as f64 / total as f64 } else { 0.0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn udp_receiver_interval_says_when_its_jitter_is_partial() {
        let params = wireperf_protocol::TestParams::default();
        let ctx = TextContext { protocol: Protocol::Udp, ..TextContext::new(super::super::Role::Server, &params) };
        let rx = |untimed, omitted| IntervalStream {
            end: 1.0,
            seconds: 1.0,
            jitter_ms: Some(0.002),
            lost_packets: Some(0),
            packets: Some(1000),
            wireperf_jitter_untimed: untimed,
            omitted,
            ..Default::default()
        };
        assert!(stream_line(&rx(Some(936), false), &ctx).ends_with(" ms  0/1000 (0%)  (jitter partial)\n"));
        assert!(stream_line(&rx(Some(936), true), &ctx).ends_with("  (omitted) (jitter partial)\n"));
        // Every datagram timed, or a peer that does not say (stock iperf3): iperf3's line as is.
        for untimed in [Some(0), None] {
            assert!(stream_line(&rx(untimed, false), &ctx).ends_with(" ms  0/1000 (0%)  \n"));
        }
    }

    #[test]
    fn negligible_last_interval() {
        let mut iv = Interval::default();
        iv.streams.push(IntervalStream { start: 2.0, end: 2.004, ..Default::default() });
        assert!(is_negligible_interval(&iv, 1.0));
        iv.streams[0].bytes = 1;
        assert!(!is_negligible_interval(&iv, 1.0));
        iv.streams[0].bytes = 0;
        iv.streams[0].end = 2.2;
        assert!(!is_negligible_interval(&iv, 1.0));
    }
}
