//! Lays out and draws a [`LiveState`] into a ratatui frame.
//!
//! Drawing knows nothing of terminals or threads: [`draw`] takes the state and the seconds since
//! the last interval (so "time left" ticks between intervals), which is all a `TestBackend`
//! test needs.

use crate::hosts::FarHost;
use crate::state::{LiveState, Phase, StreamSeries};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::symbols::Marker;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Axis, Block, Cell, Chart, Dataset, GraphType, Paragraph, Row, Table};
use wireperf_report::units::format_unit;

/// Colours of the per-stream lines, in stream order (the sums are white).
const PALETTE: [Color; 6] = [Color::Cyan, Color::Green, Color::Yellow, Color::Magenta, Color::Blue, Color::Red];

/// A rate as iperf3 prints it: `941 Mbits/sec`.
pub fn rate(bps: f64) -> String {
    format!("{}s/sec", format_unit(bps / 8.0, 'a'))
}

fn bytes(n: u64) -> String {
    format!("{}s", format_unit(n as f64, 'A'))
}

fn stream_name(s: &StreamSeries) -> String {
    format!("[{:>3}] {}", s.id, if s.sender { "send" } else { "recv" })
}

/// Draws the whole screen.
pub fn draw(frame: &mut Frame<'_>, st: &LiveState, since_last: f64) {
    let table_rows = st.streams.len().clamp(1, 8) as u16 + 3;
    let [header, chart, figures, footer] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(8),
        Constraint::Length(table_rows.max(9)),
        Constraint::Length(1),
    ])
    .areas(frame.area());
    frame.render_widget(Paragraph::new(header_line(st, since_last)), header);
    draw_chart(frame, chart, st);
    let [table, hosts] = Layout::horizontal([Constraint::Min(40), Constraint::Length(42)]).areas(figures);
    draw_table(frame, table, st);
    draw_hosts(frame, hosts, st);
    let keys = if st.phase == Some(Phase::Done) {
        Line::from(vec![
            Span::styled(" any key ", Style::new().reversed()),
            Span::raw(" back to the summary (it follows by itself in a few seconds)"),
        ])
    } else {
        Line::from(vec![
            Span::styled(" p ", Style::new().reversed()),
            Span::raw(if st.frozen_at.is_some() { " resume chart  " } else { " pause chart  " }),
            Span::styled(" q ", Style::new().reversed()),
            Span::raw(" end the test (results are still printed and saved)"),
        ])
    };
    frame.render_widget(Paragraph::new(keys), footer);
}

fn header_line(st: &LiveState, since_last: f64) -> Line<'static> {
    let mut spans = vec![Span::styled("wireperf", Style::new().bold())];
    if let Some((host, port)) = &st.target {
        spans.push(Span::raw(format!(" → {host}:{port}")));
    }
    if let Some(p) = &st.protocol {
        spans.push(Span::raw(format!("  {p}")));
    }
    let phase = st.phase.unwrap_or(Phase::Connecting);
    spans.push(Span::raw("  phase: "));
    spans.push(Span::styled(phase.label(), Style::new().bold().fg(Color::Green)));
    let running = matches!(phase, Phase::Omitting | Phase::Running);
    let tick = if running { since_last } else { 0.0 };
    spans.push(Span::raw(format!("  {:.1} s elapsed", st.elapsed + tick)));
    if let Some(left) = st.time_left(tick) {
        spans.push(Span::raw(format!(", {left:.1} s left")));
    } else if st.bounds.bytes > 0 {
        spans.push(Span::raw(format!(", {} of {}", bytes(st.bytes), bytes(st.bounds.bytes))));
    } else if st.bounds.blocks > 0 {
        spans.push(Span::raw(format!(", until {} blocks", st.bounds.blocks)));
    }
    if st.frozen_at.is_some() {
        spans.push(Span::styled("  [chart paused]", Style::new().bold().fg(Color::Yellow)));
    }
    Line::from(spans)
}

fn draw_chart(frame: &mut Frame<'_>, area: Rect, st: &LiveState) {
    let mut datasets = Vec::new();
    let many = st.streams.len() > 1;
    if many {
        for (n, s) in st.streams.iter().enumerate() {
            datasets.push(
                Dataset::default()
                    .name(stream_name(s))
                    .marker(Marker::Braille)
                    .graph_type(GraphType::Line)
                    .style(Style::new().fg(PALETTE[n % PALETTE.len()]))
                    .data(st.visible(&s.points)),
            );
        }
    }
    let sum_name = if st.sum_reverse.is_empty() { "SUM" } else { "SUM send" };
    datasets.push(
        Dataset::default()
            .name(sum_name)
            .marker(Marker::Braille)
            .graph_type(GraphType::Line)
            .style(Style::new().fg(if many { Color::White } else { PALETTE[0] }).add_modifier(Modifier::BOLD))
            .data(st.visible(&st.sum)),
    );
    if !st.sum_reverse.is_empty() {
        datasets.push(
            Dataset::default()
                .name("SUM recv")
                .marker(Marker::Braille)
                .graph_type(GraphType::Line)
                .style(Style::new().fg(Color::LightRed).add_modifier(Modifier::BOLD))
                .data(st.visible(&st.sum_reverse)),
        );
    }
    let shown = st.visible(&st.sum);
    let top = st
        .streams
        .iter()
        .flat_map(|s| st.visible(&s.points))
        .chain(shown)
        .chain(st.visible(&st.sum_reverse))
        .map(|p| p.1)
        .fold(0.0, f64::max);
    let y_max = if top > 0.0 { top * 1.1 } else { 1.0 };
    let planned = f64::from(st.bounds.omit + st.bounds.duration);
    let x_max = planned.max(shown.last().map_or(0.0, |p| p.0)).max(1.0);
    let title = if st.frozen_at.is_some() { " Throughput (paused) " } else { " Throughput " };
    let chart = Chart::new(datasets)
        .block(Block::bordered().title(title))
        .x_axis(Axis::default().title("s").bounds([0.0, x_max]).labels([
            "0".to_string(),
            format!("{:.0}", x_max / 2.0),
            format!("{x_max:.0}"),
        ]))
        .y_axis(Axis::default().bounds([0.0, y_max]).labels(["0".to_string(), rate(y_max / 2.0), rate(y_max)]))
        .legend_position(Some(ratatui::widgets::LegendPosition::TopLeft))
        .hidden_legend_constraints((Constraint::Ratio(1, 2), Constraint::Ratio(1, 2)));
    frame.render_widget(chart, area);
}

fn opt<T>(v: Option<T>, f: impl Fn(T) -> String) -> String {
    v.map_or_else(|| "n/a".to_string(), f)
}

fn draw_table(frame: &mut Frame<'_>, area: Rect, st: &LiveState) {
    let udp = st.protocol.as_deref() == Some("UDP");
    let header = if udp {
        Row::new(["Stream", "Rate", "Jitter", "Lost/Total"])
    } else {
        Row::new(["Stream", "Rate", "Retr", "RTT", "Cwnd"])
    }
    .style(Style::new().bold());
    let mut rows: Vec<Row<'_>> = st
        .streams
        .iter()
        .take(8)
        .enumerate()
        .map(|(n, s)| {
            let name = Cell::from(stream_name(s)).style(Style::new().fg(PALETTE[n % PALETTE.len()]));
            let l = &s.last;
            if udp {
                let lost = match (l.lost_packets, l.packets) {
                    (Some(lost), Some(total)) if !s.sender => {
                        format!("{lost}/{total} ({:.2}%)", l.lost_percent.unwrap_or(0.0))
                    }
                    _ => "receiver's figure".to_string(),
                };
                let jitter =
                    if s.sender { "n/a (sender)".to_string() } else { opt(l.jitter_ms, |j| format!("{j:.3} ms")) };
                Row::new(vec![name, Cell::from(rate(l.bits_per_second)), Cell::from(jitter), Cell::from(lost)])
            } else {
                Row::new(vec![
                    name,
                    Cell::from(rate(l.bits_per_second)),
                    Cell::from(opt(s.retransmits, |r| r.to_string())),
                    Cell::from(opt(l.rtt, |us| format!("{:.2} ms", us as f64 / 1000.0))),
                    Cell::from(opt(l.snd_cwnd, bytes)),
                ])
            }
        })
        .collect();
    if st.streams.len() > 8 {
        rows.push(Row::new([format!("… {} more", st.streams.len() - 8)]));
    }
    if let Some(&(_, bps)) = st.sum.last() {
        let retr = if udp { String::new() } else { opt(st.retransmits(), |r| r.to_string()) };
        rows.push(Row::new(vec!["SUM".to_string(), rate(bps), retr]).style(Style::new().bold()));
    }
    let widths: &[Constraint] = if udp {
        &[Constraint::Length(12), Constraint::Length(16), Constraint::Length(13), Constraint::Min(18)]
    } else {
        &[
            Constraint::Length(12),
            Constraint::Length(16),
            Constraint::Length(6),
            Constraint::Length(10),
            Constraint::Min(12),
        ]
    };
    let title = if udp { " Streams (UDP) " } else { " Streams (TCP) " };
    frame.render_widget(Table::new(rows, widths).header(header).block(Block::bordered().title(title)), area);
}

/// Both hosts' CPU, the retransmits split and UDP loss: what the table's per-stream columns
/// cannot show.
fn draw_hosts(frame: &mut Frame<'_>, area: Rect, st: &LiveState) {
    let mut lines = Vec::new();
    let process = match st.local_cpu.last() {
        Some(&(_, now)) => {
            let mean = st.local_cpu.iter().map(|p| p.1).sum::<f64>() / st.local_cpu.len() as f64;
            format!("wireperf {now:.1} %, mean {mean:.1} %")
        }
        None => "no interval yet".to_string(),
    };
    lines.push(Line::from(format!("This host: {process}")));
    if let Some(h) = st.local_host {
        lines.push(Line::from(format!("           host {:.1} % busy", h.busy_pct)));
    }
    match st.far {
        FarHost::Waiting => lines.push(Line::from("Far host:  with the results")),
        FarHost::NotSeen => lines.push(Line::from("Far host:  far side not seen")),
        FarHost::Seen(c) => {
            lines.push(Line::from(match c.process_pct {
                Some(p) => format!("Far host:  wireperf {p:.1} %"),
                None => "Far host:  wireperf".to_string(),
            }));
            lines.push(Line::from(format!("           host {:.1} % busy", c.busy_pct)));
        }
    }
    if let Some(c) = &st.final_cpu {
        lines.push(Line::from(format!("iperf3 CPU: {:.1} % here, {:.1} % there", c.host_total, c.remote_total)));
    }
    if st.protocol.as_deref() == Some("UDP") {
        lines.extend(udp_lines(st).into_iter().map(Line::from));
    } else {
        lines.push(Line::from(retransmit_line(st)));
    }
    frame.render_widget(Paragraph::new(lines).block(Block::bordered().title(" Hosts ")), area);
}

/// The retransmits so far as real and spurious (their sum is the table's `Retr`).
fn retransmit_line(st: &LiveState) -> String {
    match (st.split_basis(), st.split) {
        (Some(_), Some(s)) => format!("Retransmits: {} real, {} spurious", s.real, s.spurious),
        (Some(_), None) => "Retransmits: not split (no DSACK)".to_string(),
        (None, _) if !st.client_sends => "Retransmits: the server's, at the end".to_string(),
        (None, _) => "Retransmits: n/a".to_string(),
    }
}

/// The receiver's loss and jitter: this host's while it receives, the report's at the end.
fn udp_lines(st: &LiveState) -> Vec<String> {
    let lines = |lost: i64, packets: i64, jitter: f64| {
        let pct = if packets > 0 { 100.0 * lost as f64 / packets as f64 } else { 0.0 };
        vec![format!("UDP loss: {lost}/{packets} ({pct:.2}%)"), format!("    jitter {jitter:.3} ms")]
    };
    if let Some(u) = st.flows.iter().find_map(|f| f.udp) {
        return lines(u.lost_packets.unwrap_or(0), u.packets.unwrap_or(0), u.jitter_ms);
    }
    match st.udp_received {
        Some(u) => lines(u.lost, u.packets, u.jitter_ms),
        None => vec!["UDP loss, jitter: at the end".to_string(), "    (the receiver's figures)".to_string()],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hosts::{HostCpu, HostsNow, RetransmitSplit};
    use crate::state::tests::{tcp_interval, tcp_start};
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;
    use wireperf_engine::Event;
    use wireperf_protocol::schema::{Interval, IntervalStream, IntervalSum, Start, TestStart};

    fn screen(st: &LiveState, w: u16, h: u16) -> String {
        let mut term = Terminal::new(TestBackend::new(w, h)).expect("test backend");
        term.draw(|f| draw(f, st, 0.0)).expect("draw");
        let buf = term.backend().buffer();
        let mut out = String::new();
        for y in 0..buf.area.height {
            for x in 0..buf.area.width {
                out.push_str(buf[(x, y)].symbol());
            }
            out.push('\n');
        }
        out
    }

    /// The screen with every run of spaces made one, so assertions do not spell column widths.
    fn squash(s: &str) -> String {
        s.split('\n').map(|l| l.split_whitespace().collect::<Vec<_>>().join(" ")).collect::<Vec<_>>().join("\n")
    }

    #[test]
    fn tcp_run_shows_chart_streams_sum_and_time_left() {
        let mut st = LiveState::new();
        st.apply(&Event::Connecting { host: "127.0.0.1", port: 5201 });
        st.apply(&Event::TestStart(&tcp_start(2, 4)));
        st.apply(&Event::Interval(&tcp_interval(0.0, &[1e9, 2e9])));
        st.record_local_cpu(12.5);
        st.apply(&Event::Interval(&tcp_interval(1.0, &[3e9, 2e9])));
        st.record_local_cpu(7.5);
        let raw = screen(&st, 110, 30);
        let s = squash(&raw);
        assert!(s.contains("wireperf → 127.0.0.1:5201 TCP phase: running 2.0 s elapsed, 2.0 s left"), "{raw}");
        assert!(s.contains("Throughput"), "{s}");
        // The chart's lines are Braille dots; the y axis tops at 110 % of the highest point.
        let dots = raw.chars().filter(|c| ('\u{2801}'..='\u{28ff}').contains(c)).count();
        assert!(dots > 20, "no chart lines drawn:\n{raw}");
        assert!(s.contains("│5.50 Gbits/sec│"), "y axis tops at 110 % of the highest point:\n{raw}");
        assert!(s.contains("│[ 5] send│"), "legend:\n{raw}");
        // Stream 5: 3 Gbit/s now, 1+1 retransmits, 2.50 ms RTT, 1.25 MBytes cwnd.
        assert!(s.contains("│[ 5] send 3.00 Gbits/sec 2 2.50 ms 1.25 MBytes │"), "{raw}");
        assert!(s.contains("│[ 7] send 2.00 Gbits/sec 4 2.50 ms 1.25 MBytes │"), "{raw}");
        assert!(s.contains("│SUM 5.00 Gbits/sec 6 │"), "{raw}");
        assert!(s.contains("This host: wireperf 7.5 %, mean 10.0 %"), "{raw}");
        assert!(s.contains("Far host: with the results"), "{raw}");
        assert!(s.contains("Retransmits: not split (no DSACK)"), "{raw}");
        assert!(s.contains("p pause chart q end the test"), "{raw}");
    }

    #[test]
    fn paused_chart_says_so() {
        let mut st = LiveState::new();
        st.apply(&Event::TestStart(&tcp_start(1, 3)));
        st.apply(&Event::Interval(&tcp_interval(0.0, &[1e9])));
        st.toggle_pause();
        let s = screen(&st, 100, 24);
        assert!(s.contains("Throughput (paused)"), "{s}");
        assert!(s.contains("[chart paused]"), "{s}");
        assert!(s.contains(" p  resume chart"), "{s}");
    }

    #[test]
    fn udp_receiver_shows_loss_and_jitter_and_sender_says_not_here() {
        let start = Start {
            test_start: Some(TestStart { protocol: "UDP".into(), num_streams: 1, duration: 5, ..TestStart::default() }),
            ..Start::default()
        };
        let recv = IntervalStream {
            socket: 5,
            seconds: 1.0,
            bits_per_second: 1e6,
            jitter_ms: Some(0.042),
            lost_packets: Some(3),
            packets: Some(100),
            lost_percent: Some(3.0),
            sender: false,
            ..IntervalStream::default()
        };
        let i = Interval {
            streams: vec![recv],
            sum: IntervalSum {
                seconds: 1.0,
                bits_per_second: 1e6,
                jitter_ms: Some(0.042),
                lost_packets: Some(3),
                packets: Some(100),
                ..IntervalSum::default()
            },
            sum_bidir_reverse: None,
        };
        let mut st = LiveState::new();
        st.apply(&Event::TestStart(&start));
        st.apply(&Event::Interval(&i));
        st.apply(&Event::Interval(&i));
        let s = squash(&screen(&st, 110, 24));
        assert!(s.contains("UDP loss: 6/200 (3.00%)") && s.contains("jitter 0.042 ms"), "{s}");
        assert!(s.contains("Streams (UDP)"), "{s}");
        assert!(s.contains("│[ 5] recv 1.00 Mbits/sec 0.042 ms 3/100 (3.00%) │"), "{s}");
        assert!(!s.contains("Retr"), "{s}");
    }

    #[test]
    fn finished_test_shows_both_hosts_cpu() {
        let mut st = LiveState::new();
        st.apply(&Event::TestStart(&tcp_start(1, 1)));
        st.apply(&Event::Interval(&tcp_interval(0.0, &[1e9])));
        let mut report = wireperf_protocol::schema::TestReport::default();
        report.end.cpu_utilization_percent = Some(wireperf_protocol::schema::CpuUtilization {
            host_total: 41.5,
            remote_total: 3.25,
            ..Default::default()
        });
        st.apply(&Event::End(&report));
        let s = screen(&st, 100, 24);
        assert!(s.contains("phase: done"), "{s}");
        let s = squash(&s);
        assert!(s.contains("iperf3 CPU: 41.5 % here, 3.2 % there"), "{s}");
        assert!(s.contains("Far host: far side not seen"), "{s}");
        assert!(s.contains("any key back to the summary"), "{s}");
    }

    #[test]
    fn hosts_box_shows_both_hosts_and_the_retransmit_split() {
        let mut st = LiveState::new();
        st.apply(&Event::TestStart(&tcp_start(2, 4)));
        st.apply(&Event::Interval(&tcp_interval(0.0, &[1e9, 2e9])));
        st.record_local_cpu(20.0);
        st.record_hosts(HostsNow {
            local: Some(HostCpu { busy_pct: 55.5, process_pct: None }),
            split: Some(RetransmitSplit { real: 1, spurious: 2 }),
        });
        st.far = FarHost::Seen(HostCpu { busy_pct: 12.25, process_pct: Some(40.0) });
        let s = squash(&screen(&st, 110, 30));
        assert!(s.contains("This host: wireperf 20.0 %, mean 20.0 %"), "{s}");
        assert!(s.contains("host 55.5 % busy"), "{s}");
        assert!(s.contains("Far host: wireperf 40.0 %"), "{s}");
        assert!(s.contains("host 12.2 % busy"), "{s}");
        assert!(s.contains("Retransmits: 1 real, 2 spurious"), "{s}");
    }

    #[test]
    fn udp_sender_waits_for_the_receivers_loss_and_jitter() {
        let start = Start {
            test_start: Some(TestStart { protocol: "UDP".into(), num_streams: 1, duration: 5, ..TestStart::default() }),
            ..Start::default()
        };
        let mut st = LiveState::new();
        st.apply(&Event::TestStart(&start));
        let s = squash(&screen(&st, 100, 24));
        assert!(s.contains("UDP loss, jitter: at the end"), "{s}");
        let mut report = wireperf_protocol::schema::TestReport { start, ..Default::default() };
        report.end.sum = Some(wireperf_protocol::schema::Summary {
            jitter_ms: Some(0.5),
            lost_packets: Some(2),
            packets: Some(400),
            lost_percent: Some(0.5),
            ..Default::default()
        });
        st.apply(&Event::End(&report));
        let s = squash(&screen(&st, 100, 24));
        assert!(s.contains("UDP loss: 2/400 (0.50%)") && s.contains("jitter 0.500 ms"), "{s}");
    }
}
