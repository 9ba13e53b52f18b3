//! The end-of-test summary as iperf3 3.12 prints it (`iperf_print_results`).
//!
//! Order: separator; `Test Complete. Summary Results:` with `-V`; one header; then per
//! direction block (two in `--bidir`, client→server first): each stream's `sender` and
//! `receiver` lines, the `[SUM]` pair when `-P` > 1, and with `-V` the CPU line(s) (only
//! after the block this host sends in; twice in `--bidir`) and the congestion pair; on the
//! client, after the first block, the `--get-server-output` text.
//!
//! The server prints before the results exchange, so it prints only its own half: `receiver`
//! lines for what it received, `sender` lines for what it sent, and with `-V` a
//! `(… statistics not available)` line for the missing half.
//!
//! Data mapping (schema → line):
//! * TCP stream: `end.streams[i].sender` → sender line (`end` is the sender's elapsed time),
//!   `.receiver` → receiver line.
//! * UDP stream: `.udp` → sender line (jitter 0, lost 0, total = `packets`); the receiver
//!   line comes from wireperf's `.udp_receiver` (bytes, time and datagram count as the
//!   receiver saw them). A stock iperf3 document has no such object; the receiver line then
//!   falls back to `.udp`, whose bytes and time are the sender's (close, not exact).
//! * sums: `sum_sent`/`sum_received` for the client→server block, `*_bidir_reverse` for the
//!   other; UDP uses the same keys (iperf3's mixed `sum` is not printed as text).
//! * direction of a stream: the `sender` flag of its summaries.
//! * congestion: see [`congestion_keys`].

use super::lines::{self, LineHead, LineId};
use super::prefix::Printed;
use super::{Block, Role, TextContext};
use crate::cjson::try_to_cjson_string;
use wireperf_protocol::Protocol;
use wireperf_protocol::schema::{DropUnit, End, EndStream, Summary, TestReport};

/// The summary text (no prefixes; see [`render_summary_calls`] for `-T`/`--timestamps`).
pub fn render_summary(report: &TestReport, ctx: &TextContext) -> String {
    render_summary_calls(report, ctx).to_string()
}

/// The summary as iperf3's printing calls, so [`Printed::prefixed`] can add `-T` and
/// `--timestamps` exactly (the server output block is one call).
pub fn render_summary_calls(report: &TestReport, ctx: &TextContext) -> Printed {
    let end = &report.end;
    let mut out = Printed::new();
    out.report(lines::SEPARATOR);
    if ctx.verbose {
        out.report(lines::SUMMARY_INTRO);
    }
    out.report(summary_header(ctx));
    let (local_cc, remote_cc) = local_remote_congestion(end, ctx);
    for (i, block) in ctx.blocks().into_iter().enumerate() {
        let tag = ctx.role_tag(block.local_sends);
        for es in end.streams.iter().filter(|es| stream_sends(es) == Some(block.local_sends)) {
            match ctx.protocol {
                Protocol::Tcp => tcp_stream(&mut out, es, block, tag, ctx),
                Protocol::Udp => udp_stream(&mut out, es, block, tag, ctx),
            }
        }
        if ctx.num_streams > 1 {
            let (sent, received) = if block.reverse_sums {
                (&end.sum_sent_bidir_reverse, &end.sum_received_bidir_reverse)
            } else {
                (&end.sum_sent, &end.sum_received)
            };
            sums(&mut out, sent.as_ref(), received.as_ref(), block, tag, ctx);
        }
        if ctx.verbose {
            verbose_tail(&mut out, end, block, ctx, local_cc, remote_cc);
        }
        if i == 0 && ctx.role == Role::Client {
            server_output(&mut out, report);
        }
    }
    out
}

/// The summary header: Retr when either direction's sender reports retransmits (TCP),
/// the Jitter/Lost header for UDP; `[Role]` variants in `--bidir`.
pub fn summary_header(ctx: &TextContext) -> &'static str {
    let retr = ctx.blocks().into_iter().any(|b| ctx.summary_retransmits(b));
    match (ctx.protocol, ctx.bidir, retr) {
        (Protocol::Tcp, false, true) => lines::HEADER_RETR,
        (Protocol::Tcp, true, true) => lines::HEADER_RETR_BIDIR,
        (Protocol::Tcp, false, false) => lines::HEADER_PLAIN,
        (Protocol::Tcp, true, false) => lines::HEADER_PLAIN_BIDIR,
        (Protocol::Udp, false, _) => lines::HEADER_UDP,
        (Protocol::Udp, true, _) => lines::HEADER_UDP_BIDIR,
    }
}

/// Whether this host sends on the stream, from the `sender` flag of its summaries.
fn stream_sends(es: &EndStream) -> Option<bool> {
    es.udp.as_ref().or(es.sender.as_ref()).or(es.receiver.as_ref()).map(|s| s.sender)
}

fn head<'a>(id: LineId, tag: &'a str, s: &Summary, ctx: &TextContext) -> LineHead<'a> {
    LineHead {
        id,
        role_tag: tag,
        start: s.start,
        end: s.end,
        bytes: s.bytes,
        bytes_per_sec: lines::bytes_per_sec(s.bits_per_second),
        format: ctx.format,
    }
}

fn stream_id(es: &EndStream) -> LineId {
    let socket = [&es.sender, &es.receiver, &es.udp, &es.udp_receiver].into_iter().flatten().find_map(|s| s.socket);
    LineId::Stream(socket.unwrap_or(0))
}

/// On the server, the half of a stream it did not measure is skipped (`-V`: "not available").
fn server_lacks_sender(ctx: &TextContext, block: Block) -> bool {
    ctx.is_server() && !block.local_sends
}

fn server_lacks_receiver(ctx: &TextContext, block: Block) -> bool {
    ctx.is_server() && block.local_sends
}

fn tcp_stream(out: &mut Printed, es: &EndStream, block: Block, tag: &str, ctx: &TextContext) {
    let id = stream_id(es);
    if server_lacks_sender(ctx, block) {
        if ctx.verbose {
            out.report(lines::sender_not_available(id));
        }
    } else if let Some(s) = &es.sender {
        let h = head(id, tag, s, ctx);
        out.report(if ctx.summary_retransmits(block) {
            lines::retr(&h, s.retransmits.unwrap_or(0), lines::SENDER)
        } else {
            lines::plain(&h, lines::SENDER)
        });
    }
    diskfile(out, es, block);
    if server_lacks_receiver(ctx, block) {
        if ctx.verbose {
            out.report(lines::receiver_not_available(id));
        }
    } else if let Some(r) = &es.receiver {
        out.report(lines::plain(&head(id, tag, r, ctx), lines::RECEIVER));
    }
}

fn udp_stream(out: &mut Printed, es: &EndStream, block: Block, tag: &str, ctx: &TextContext) {
    let id = stream_id(es);
    let Some(u) = es.udp.as_ref().or(es.udp_receiver.as_ref()) else {
        return;
    };
    if server_lacks_sender(ctx, block) {
        if ctx.verbose {
            out.report(lines::sender_not_available(id));
        }
    } else {
        let h = head(id, tag, u, ctx);
        out.report(lines::udp(&h, 0.0, 0, u.packets.unwrap_or(0), 0.0, lines::SENDER));
    }
    if let Some(n) = u.out_of_order.filter(|&n| n > 0) {
        out.report(lines::out_of_order(tag, u.start, u.end, n));
    }
    diskfile(out, es, block);
    if server_lacks_receiver(ctx, block) {
        if ctx.verbose {
            out.report(lines::receiver_not_available(id));
        }
        return;
    }
    let r = es.udp_receiver.as_ref().unwrap_or(u);
    let lost = r.lost_packets.unwrap_or(0);
    let total = r.packets.unwrap_or(0);
    let pct = r.lost_percent.unwrap_or_else(|| super::interval::percent(lost, total));
    let h = head(id, tag, r, ctx);
    out.report(lines::udp(&h, r.jitter_ms.unwrap_or(0.0), lost, total, pct, lines::RECEIVER));
    if let Some(line) = loss_split(id, tag, r) {
        out.report(line);
    }
    if let Some(line) = jitter_note(id, tag, r) {
        out.report(line);
    }
}

/// `[  5]` or `[SUM]`.
fn bracketed(id: LineId) -> String {
    match id {
        LineId::Stream(n) => format!("[{n:>3}]"),
        LineId::Sum => "[SUM]".to_string(),
    }
}

/// wireperf's line after a UDP receiver summary whose jitter left datagrams out: those that
/// arrived GRO-coalesced share one receive time, so their transit times are unknown and the
/// jitter printed was measured on the others only. Said, rather than letting a figure computed
/// from fewer (or no) datagrams pass for a measurement of all.
pub fn jitter_note(id: LineId, tag: &str, r: &Summary) -> Option<String> {
    let untimed = r.wireperf_jitter_untimed.filter(|&n| n > 0)?;
    let received = u64::try_from(r.packets.unwrap_or(0) - r.lost_packets.unwrap_or(0)).unwrap_or(0);
    let id = bracketed(id);
    Some(format!(
        "{id}{tag} jitter not measured exactly: {untimed} of {received} datagrams arrived GRO-coalesced without a \
         receive time of their own (WIREPERF_UDP_OFFLOAD=off times every datagram)\n"
    ))
}

/// wireperf's own line after a UDP receiver summary, only when the receiver counted socket
/// drops or duplicates: it splits iperf3's single "lost" figure into loss on the path and
/// datagrams the receiving socket dropped (its buffer was full), which have different fixes.
pub fn loss_split(id: LineId, tag: &str, r: &Summary) -> Option<String> {
    let drops = r.receiver_socket_drops.unwrap_or(0);
    let dups = r.duplicates.unwrap_or(0);
    if drops == 0 && dups == 0 {
        return None;
    }
    let lost = u64::try_from(r.lost_packets.unwrap_or(0)).unwrap_or(0);
    let id = bracketed(id);
    let mut parts = Vec::new();
    // The kernel counts a dropped GRO packet once, however many datagrams it held: with GRO on
    // (said by the receiver; older wireperf receivers only showed it by coalesced arrivals)
    // the socket's figure is packets, and only a bound on the path's share can be given.
    let packets = r.wireperf_receiver_socket_drops_unit == Some(DropUnit::Packets)
        || (r.wireperf_receiver_socket_drops_unit.is_none() && r.wireperf_jitter_untimed.unwrap_or(0) > 0);
    if drops > 0 && packets {
        parts.push(format!(
            "{lost} lost; the receiving socket dropped {drops} packets (UDP GRO on: a dropped packet may hold \
             several datagrams), so at most {} were lost on the path (raise -w or lower -b; \
             WIREPERF_UDP_OFFLOAD=off counts socket drops per datagram)",
            lost.saturating_sub(drops)
        ));
    } else if drops > 0 {
        parts.push(format!(
            "{} lost on the path, {drops} dropped by the receiving socket (raise -w or lower -b)",
            lost.saturating_sub(drops)
        ));
    }
    if dups > 0 {
        parts.push(format!("{dups} duplicate datagrams received"));
    }
    let label = if drops > 0 { "loss split: " } else { "" };
    Some(format!("{id}{tag} {label}{}\n", parts.join("; ")))
}

fn diskfile(out: &mut Printed, es: &EndStream, block: Block) {
    if let Some(d) = &es.diskfile {
        let (bytes, pct) = if block.local_sends { (d.sent, d.percent_sent) } else { (d.received, d.percent_received) };
        out.report(lines::diskfile(bytes, d.size, pct, &d.filename));
    }
}

fn sums(
    out: &mut Printed,
    sent: Option<&Summary>,
    received: Option<&Summary>,
    block: Block,
    tag: &str,
    ctx: &TextContext,
) {
    let tcp = ctx.protocol == Protocol::Tcp;
    if server_lacks_sender(ctx, block) {
        if tcp && ctx.verbose {
            out.report(lines::sender_not_available(LineId::Sum));
        }
    } else if let Some(s) = sent {
        let h = head(LineId::Sum, tag, s, ctx);
        out.report(if !tcp {
            lines::udp(&h, 0.0, 0, s.packets.unwrap_or(0), 0.0, lines::SENDER)
        } else if ctx.summary_retransmits(block) {
            lines::retr(&h, s.retransmits.unwrap_or(0), lines::SENDER)
        } else {
            lines::plain(&h, lines::SENDER)
        });
    }
    if server_lacks_receiver(ctx, block) {
        if tcp && ctx.verbose {
            out.report(lines::receiver_not_available(LineId::Sum));
        }
    } else if let Some(r) = received {
        let h = head(LineId::Sum, tag, r, ctx);
        out.report(if tcp {
            lines::plain(&h, lines::RECEIVER)
        } else {
            let lost = r.lost_packets.unwrap_or(0);
            let total = r.packets.unwrap_or(0);
            let pct = r.lost_percent.unwrap_or_else(|| super::interval::percent(lost, total));
            lines::udp(&h, r.jitter_ms.unwrap_or(0.0), lost, total, pct, lines::RECEIVER)
        });
    }
}

fn verbose_tail(
    out: &mut Printed,
    end: &End,
    block: Block,
    ctx: &TextContext,
    local_cc: Option<&str>,
    remote_cc: Option<&str>,
) {
    if let Some(c) = end.cpu_utilization_percent.as_ref().filter(|_| block.local_sends) {
        let local = [c.host_total, c.host_user, c.host_system];
        let remote = [c.remote_total, c.remote_user, c.remote_system];
        out.report(lines::cpu(lines::SENDER, local, remote));
        if ctx.bidir {
            out.report(lines::cpu(lines::RECEIVER, local, remote));
        }
    }
    if ctx.protocol == Protocol::Tcp {
        let (snd, rcv) = if block.local_sends { (local_cc, remote_cc) } else { (remote_cc, local_cc) };
        if let Some(s) = snd {
            out.report(lines::snd_congestion(s));
        }
        if let Some(r) = rcv {
            out.report(lines::rcv_congestion(r));
        }
    }
}

fn server_output(out: &mut Printed, report: &TestReport) {
    if let Some(json) = &report.server_output_json {
        let text = try_to_cjson_string(json).unwrap_or_default();
        out.report(format!("\nServer JSON output:\n{text}\n"));
    }
    if let Some(text) = &report.server_output_text {
        out.report(format!("\nServer output:\n{text}\n"));
    }
}

/// Which keys iperf3 puts the two congestion-control names under in `end`.
///
/// iperf3 fills `sender_tcp_congestion`/`receiver_tcp_congestion` while handling its *last*
/// direction block, so in `--bidir` they describe the server→client direction: on the client
/// `sender_tcp_congestion` is the *remote* algorithm. Returns `(sender_tcp_congestion,
/// receiver_tcp_congestion)` for this host's (`local`) and the peer's (`remote`) algorithm;
/// the engine should fill `End` with it, and the text renderer reads it back the same way.
pub fn congestion_keys<'a>(
    ctx: &TextContext,
    local: Option<&'a str>,
    remote: Option<&'a str>,
) -> (Option<&'a str>, Option<&'a str>) {
    if last_block_local_sends(ctx) { (local, remote) } else { (remote, local) }
}

fn last_block_local_sends(ctx: &TextContext) -> bool {
    ctx.blocks().last().is_some_and(|b| b.local_sends)
}

/// The inverse of [`congestion_keys`]: `(local, remote)` from `end`.
fn local_remote_congestion<'a>(end: &'a End, ctx: &TextContext) -> (Option<&'a str>, Option<&'a str>) {
    let snd = end.sender_tcp_congestion.as_deref();
    let rcv = end.receiver_tcp_congestion.as_deref();
    if last_block_local_sends(ctx) { (snd, rcv) } else { (rcv, snd) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wireperf_protocol::TestParams;

    #[test]
    fn congestion_keys_round_trip() {
        for bidir in [false, true] {
            for reverse in [false, true] {
                for role in [Role::Client, Role::Server] {
                    let params = TestParams { bidirectional: bidir, reverse, ..TestParams::default() };
                    let ctx = TextContext::new(role, &params);
                    let (s, r) = congestion_keys(&ctx, Some("local"), Some("remote"));
                    let end = End {
                        sender_tcp_congestion: s.map(str::to_string),
                        receiver_tcp_congestion: r.map(str::to_string),
                        ..End::default()
                    };
                    assert_eq!(local_remote_congestion(&end, &ctx), (Some("local"), Some("remote")));
                }
            }
        }
        let bidir_client = TextContext { bidir: true, ..TextContext::new(Role::Client, &TestParams::default()) };
        assert_eq!(congestion_keys(&bidir_client, Some("cubic"), Some("bbr")), (Some("bbr"), Some("cubic")));
    }

    #[test]
    fn loss_split_line() {
        let r = Summary { lost_packets: Some(42), receiver_socket_drops: Some(30), ..Summary::default() };
        assert_eq!(
            loss_split(LineId::Stream(5), "", &r).as_deref(),
            Some("[  5] loss split: 12 lost on the path, 30 dropped by the receiving socket (raise -w or lower -b)\n")
        );
        let r = Summary { duplicates: Some(3), ..Summary::default() };
        assert_eq!(
            loss_split(LineId::Stream(5), "[RX-C]", &r).as_deref(),
            Some("[  5][RX-C] 3 duplicate datagrams received\n")
        );
        assert_eq!(loss_split(LineId::Stream(5), "", &Summary::default()), None);
        // GRO: the socket's count is of packets, so no datagram split is claimed.
        let r = Summary {
            lost_packets: Some(420),
            receiver_socket_drops: Some(9),
            wireperf_jitter_untimed: Some(5000),
            ..Summary::default()
        };
        let line = loss_split(LineId::Sum, "", &r).unwrap();
        assert!(line.starts_with("[SUM] loss split: 420 lost; the receiving socket dropped 9 packets"), "{line}");
        assert!(line.contains("at most 411 were lost on the path"), "{line}");
        assert!(!line.contains("on the path,"), "{line}");
        // The receiver's own word decides: packets even when nothing arrived coalesced ...
        let said = Summary {
            wireperf_jitter_untimed: Some(0),
            wireperf_receiver_socket_drops_unit: Some(DropUnit::Packets),
            ..r.clone()
        };
        assert_eq!(loss_split(LineId::Sum, "", &said), Some(line));
        // ... and datagrams (GRO off) give the exact split.
        let off = Summary { wireperf_receiver_socket_drops_unit: Some(DropUnit::Datagrams), ..r };
        assert_eq!(
            loss_split(LineId::Sum, "", &off).as_deref(),
            Some("[SUM] loss split: 411 lost on the path, 9 dropped by the receiving socket (raise -w or lower -b)\n")
        );
    }

    #[test]
    fn jitter_note_says_when_datagrams_had_no_receive_time() {
        let r = Summary {
            packets: Some(100),
            lost_packets: Some(4),
            wireperf_jitter_untimed: Some(90),
            ..Summary::default()
        };
        assert_eq!(
            jitter_note(LineId::Sum, "", &r).as_deref(),
            Some(
                "[SUM] jitter not measured exactly: 90 of 96 datagrams arrived GRO-coalesced without a receive time \
                 of their own (WIREPERF_UDP_OFFLOAD=off times every datagram)\n"
            )
        );
        let every = Summary { wireperf_jitter_untimed: Some(0), ..r.clone() };
        assert_eq!(jitter_note(LineId::Sum, "", &every), None);
        assert_eq!(jitter_note(LineId::Sum, "", &Summary::default()), None);
    }
}
