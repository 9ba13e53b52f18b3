//! Run metadata, the per-phase summary table and the comparison table.

use std::cmp::Ordering;
use std::fmt::Write as _;

use wireperf_protocol::schema::TestReport;

use wireperf_protocol::outcome::words::rate;

use super::figures::{self, Direction};
use crate::escape::xml;
use crate::svg::series::shared_phases;
use crate::view::RunView;

/// `—` for a missing figure.
const NONE: &str = "<span class=\"muted\">—</span>";

fn opt(v: Option<String>) -> String {
    v.map_or_else(|| NONE.to_string(), |s| xml(&s))
}

/// The run's facts as a definition grid (what ran, where, with what).
pub fn run_meta(run: &RunView) -> String {
    let first = run.phases.first().map(|(_, r)| r);
    let start = first.map(|r| &r.start);
    let peer = start.and_then(|s| {
        s.connecting_to.as_ref().or(s.accepted_connection.as_ref()).map(|h| format!("{} port {}", h.host, h.port))
    });
    let params = start.and_then(|s| s.test_start.as_ref()).map(|t| {
        format!(
            "{}, {} stream{}, {} s per phase{}",
            t.protocol,
            t.num_streams,
            if t.num_streams == 1 { "" } else { "s" },
            t.duration,
            if t.omit > 0 { format!(" (first {} s omitted)", t.omit) } else { String::new() }
        )
    });
    let congestion = first.and_then(|r| r.end.sender_tcp_congestion.clone());
    let items: [(&str, Option<String>); 7] = [
        ("Time", Some(run.time.clone()).filter(|s| !s.is_empty())),
        ("Host", Some(run.host.clone()).filter(|s| !s.is_empty())),
        ("Peer", peer),
        ("Test", params),
        ("Congestion control", congestion),
        ("Software", start.map(|s| s.version.clone()).filter(|s| !s.is_empty())),
        ("System", start.map(|s| s.system_info.clone()).filter(|s| !s.is_empty())),
    ];
    let mut out = String::from("<dl class=\"meta\">");
    for (k, v) in items {
        if let Some(v) = v {
            let _ = write!(out, "<div><dt>{k}</dt><dd>{}</dd></div>", xml(&v));
        }
    }
    out.push_str("</dl>");
    out
}

fn cpu(report: &TestReport) -> Option<String> {
    report.end.cpu_utilization_percent.as_ref().map(|c| format!("{:.1}% / {:.1}%", c.host_total, c.remote_total))
}

fn udp_loss(d: &Direction) -> Option<String> {
    let u = d.flow.udp?;
    let lost = u.lost_packets?;
    let total = u.packets?;
    Some(format!("{lost}/{total} ({:.2}%)", u.lost_percent.unwrap_or_default()))
}

/// One row per phase and direction: duration, transfer, both rates, retransmits, UDP jitter
/// and loss, CPU.
pub fn summary_table(run: &RunView) -> String {
    let mut out = String::from(
        "<div class=\"table-wrap\"><table class=\"summary\"><thead><tr>\
         <th>Phase</th><th>Direction</th><th class=\"num\">Time</th><th class=\"num\">Transfer</th>\
         <th class=\"num\">Sender</th><th class=\"num\">Receiver</th><th class=\"num\">Retransmits</th>\
         <th class=\"num\">Jitter</th><th class=\"num\">Lost</th><th class=\"num\">CPU local / remote</th>\
         </tr></thead><tbody>",
    );
    for (name, report) in &run.phases {
        if let Some(err) = &report.error {
            let _ = write!(
                out,
                "<tr><td class=\"phase\">{}</td><td class=\"error\" colspan=\"9\">error: {}</td></tr>",
                xml(name),
                xml(err)
            );
            continue;
        }
        for d in figures::directions(report) {
            let best = d.flow.best();
            let _ = write!(
                out,
                "<tr><td class=\"phase\">{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>\
                 <td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>\
                 <td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
                xml(name),
                d.label,
                opt(best.map(|t| figures::seconds(t.end))),
                opt(best.map(|t| figures::bytes(t.bytes))),
                opt(d.flow.sent.map(|t| rate(t.bits_per_second))),
                opt(d.flow.received.map(|t| rate(t.bits_per_second))),
                opt(d.retransmits().map(figures::count)),
                opt(d.flow.udp.map(|u| format!("{:.3} ms", u.jitter_ms))),
                opt(udp_loss(&d)),
                opt(cpu(report)),
            );
        }
    }
    out.push_str("</tbody></table></div>");
    out
}

/// One line under a phase heading: `13.7 Gbit/s ↑ · 1,386 retransmits · cwnd up to 2.56 MBytes`.
pub fn phase_figures(report: &TestReport) -> String {
    let mut parts = Vec::new();
    for d in figures::directions(report) {
        if let Some(g) = d.goodput() {
            parts.push(format!("{} {}", d.label, rate(g)));
        }
        if let Some(r) = d.retransmits() {
            parts.push(format!("{} retransmits", figures::count(r)));
        }
    }
    if let Some(c) = figures::max_cwnd(report) {
        parts.push(format!("cwnd up to {}", figures::bytes(c)));
    }
    if let Some(rtt) = figures::mean_rtt_us(report) {
        // µs → ms for display only; sub-microsecond precision is not in the data anyway.
        parts.push(format!("RTT {:.2} ms", rtt as f64 / 1000.0));
    }
    if let Some(l) = &report.wireperf_latency {
        parts.extend(latency_figures(l));
    }
    xml(&parts.join(" · "))
}

/// `--latency`'s headline figures as the client computed them (read, not recomputed).
fn latency_figures(l: &serde_json::Value) -> Vec<String> {
    let ms = |p: &str| l.pointer(p).and_then(serde_json::Value::as_f64);
    let mut out = Vec::new();
    if let (Some(i), Some(d)) = (ms("/idle_ms/p50"), ms("/loaded_ms/p50")) {
        out.push(format!("probe RTT idle {i:.2} ms, loaded {d:.2} ms"));
    }
    if let Some(r) = ms("/rpm") {
        out.push(format!("{r:.0} RPM"));
    }
    if let Some(g) = l.get("grade").and_then(serde_json::Value::as_str) {
        out.push(format!("latency grade {g}"));
    }
    out
}

/// Phases shared by two or more runs, one row per direction, the first run as baseline.
pub fn comparison_table(runs: &[RunView]) -> String {
    let mut out =
        String::from("<div class=\"table-wrap\"><table class=\"compare\"><thead><tr><th>Phase</th><th>Direction</th>");
    for run in runs {
        let _ = write!(out, "<th class=\"num\">{}</th>", xml(&run.display_name()));
    }
    out.push_str("</tr></thead><tbody>");
    for phase in shared_phases(runs) {
        let per_run: Vec<Vec<Direction>> =
            runs.iter().map(|r| r.phase(&phase).map(figures::directions).unwrap_or_default()).collect();
        let rows = per_run.iter().map(Vec::len).max().unwrap_or(0);
        for row in 0..rows {
            let label = per_run.iter().find_map(|d| d.get(row).map(|d| d.label)).unwrap_or("");
            let _ = write!(out, "<tr><td class=\"phase\">{}</td><td>{label}</td>", xml(&phase));
            let base = per_run.first().and_then(|d| d.get(row)).and_then(Direction::goodput);
            for (i, dirs) in per_run.iter().enumerate() {
                let Some(d) = dirs.get(row) else {
                    let _ = write!(out, "<td class=\"num\">{NONE}</td>");
                    continue;
                };
                out.push_str("<td class=\"num\">");
                out.push_str(&opt(d.goodput().map(rate)));
                let change = d.goodput().zip(base).and_then(|(v, b)| figures::change(v, b)).filter(|_| i > 0);
                if let Some((text, ord)) = change {
                    let class = match ord {
                        Ordering::Greater => "up",
                        Ordering::Less => "down",
                        Ordering::Equal => "same",
                    };
                    let _ = write!(out, "<span class=\"delta {class}\">{text}</span>");
                }
                if let Some(r) = d.retransmits() {
                    let _ = write!(out, "<span class=\"delta same\">{} retr</span>", figures::count(r));
                }
                out.push_str("</td>");
            }
            out.push_str("</tr>");
        }
    }
    out.push_str("</tbody></table></div>");
    out
}
