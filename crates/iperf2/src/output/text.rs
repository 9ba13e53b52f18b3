//! iperf 2's text layout (2.1.8, fast-sampling build: times with four decimals).
//!
//! A column header is printed before the first line of each kind, and again whenever another
//! kind of line (or a connection line) came in between, which is what iperf 2's reporter does
//! in practice when streams interleave.

use super::csv;
use super::sums::{Sum, Sums};
use super::{Format, Role};
use crate::event::{ConnInfo, Dir, Event, Sample, Tag, UdpFigures};
use crate::units::{bits_adaptive, bytes_adaptive, g2};
use crate::wire::{SERVER_HEADER_EXTEND, ServerReport};
use std::collections::HashMap;
use std::io::Write;

const H_BW: &str = "[ ID] Interval       Transfer     Bandwidth";
const H_JL: &str = "[ ID] Interval       Transfer     Bandwidth        Jitter   Lost/Total Datagrams";
const H_READ_E: &str = "[ ID] Interval            Transfer    Bandwidth       Reads=Dist";
const H_WRITE_E: &str =
    "[ ID] Interval            Transfer    Bandwidth       Write/Err  Rtry     Cwnd/RTT(var)        NetPwr";
const H_PPS_E: &str = "[ ID] Interval            Transfer     Bandwidth      Write/Err  PPS";
const H_JL_E: &str =
    "[ ID] Interval            Transfer     Bandwidth        Jitter   Lost/Total  Latency avg/min/max/stdev PPS NetPwr";

/// Prints text or CSV lines as events arrive.
pub struct TextRenderer {
    format: Format,
    role: Role,
    enhanced: bool,
    last_header: Option<&'static str>,
    conns: HashMap<u32, ConnInfo>,
    sums: Sums,
    out: Box<dyn Write + Send>,
}

/// `[  1] `, or `[ *1] ` for the reversed leg of a stream.
pub fn id_str(id: u32, tag: Tag) -> String {
    let inner = if tag == Tag::Reverse { format!("*{id}") } else { id.to_string() };
    format!("[{inner:>3}] ")
}

fn rate(bytes: u64, secs: f64) -> f64 {
    if secs > 0.0 { bytes as f64 * 8.0 / secs } else { 0.0 }
}

/// The part every bandwidth line shares: `0.0000-1.0000 sec  1.65 GBytes  14.1 Gbits/sec`.
pub fn bw(start: f64, end: f64, bytes: u64) -> String {
    format!(
        "{start:.4}-{end:.4} sec  {}s  {}s/sec",
        bytes_adaptive(bytes as f64),
        bits_adaptive(rate(bytes, end - start))
    )
}

fn jitter_loss(u: &UdpFigures) -> String {
    let pct = if u.total > 0 { 100.0 * u.lost as f64 / u.total as f64 } else { 0.0 };
    format!("  {:6.3} ms {}/{} ({}%)", u.jitter_ms, u.lost, u.total, g2(pct))
}

impl TextRenderer {
    /// A renderer writing to stdout (through `wireperf_sys::stdout`: quiet when the reader goes).
    pub fn new(format: Format, role: Role, enhanced: bool) -> Self {
        Self::with_writer(format, role, enhanced, Box::new(wireperf_sys::stdout::Stdout))
    }

    /// A renderer writing to `out` (tests).
    pub fn with_writer(format: Format, role: Role, enhanced: bool, out: Box<dyn Write + Send>) -> Self {
        TextRenderer { format, role, enhanced, last_header: None, conns: HashMap::new(), sums: Sums::default(), out }
    }

    fn line(&mut self, s: &str) {
        let _ = writeln!(self.out, "{s}");
        let _ = self.out.flush();
    }

    fn header(&mut self, h: &'static str) {
        if self.last_header != Some(h) {
            self.line(h);
            self.last_header = Some(h);
        }
    }

    /// Renders one event.
    pub fn handle(&mut self, e: &Event) {
        match e {
            Event::Connected(c) => self.connected(c),
            Event::Sample(s) => self.sample(s),
            Event::UdpSent { id, datagrams } => {
                if self.format == Format::Text {
                    self.line(&format!("[{id:3}] Sent {datagrams} datagrams"));
                    self.last_header = None;
                }
            }
            Event::ServerReport { id, report } => {
                if self.format == Format::Text {
                    self.server_report(*id, report);
                }
            }
            Event::Warning(w) => {
                eprintln!("{w}");
            }
        }
    }

    fn connected(&mut self, c: &ConnInfo) {
        self.conns.insert(c.id, c.clone());
        if self.format != Format::Text {
            return;
        }
        let mut extra = String::new();
        match c.tag {
            Tag::FullDuplex => extra.push_str(" (full-duplex)"),
            Tag::Reverse => extra.push_str(" (reverse)"),
            Tag::Plain => {}
        }
        if self.enhanced
            && let Some(v) = &c.peer_version
        {
            extra.push_str(&format!(" (peer {v})"));
        }
        let star = if self.role == Role::Server && c.tag == Tag::Reverse { Tag::Reverse } else { Tag::Plain };
        self.line(&format!(
            "{}local {} port {} connected with {} port {}{extra}",
            id_str(c.id, star),
            c.local.ip(),
            c.local.port(),
            c.peer.ip(),
            c.peer.port()
        ));
        self.last_header = None;
    }

    fn sample(&mut self, s: &Sample) {
        let udp = self.conns.get(&s.id).is_some_and(|c| c.udp);
        if self.format == Format::Csv {
            if let Some(c) = self.conns.get(&s.id) {
                let l = csv::sample_line(c, s, udp && self.role == Role::Client);
                self.line(&l);
            }
        } else {
            let (h, l) = self.sample_text(s, udp);
            self.header(h);
            self.line(&l);
        }
        if let Some(sum) = self.sums.add(s) {
            self.sum_line(s, &sum);
        }
    }

    fn sample_text(&self, s: &Sample, udp: bool) -> (&'static str, String) {
        let head = format!("{}{}", id_str(s.id, s.tag), bw(s.start, s.end, s.bytes));
        let secs = s.end - s.start;
        match (udp, s.dir, self.enhanced) {
            (true, Dir::Recv, e) => {
                let u = s.udp.unwrap_or_default();
                let mut l = format!("{head}{}", jitter_loss(&u));
                if e {
                    let [avg, min, max, sd] = u.latency_ms.unwrap_or_default();
                    let pps = if secs > 0.0 { u.received as f64 / secs } else { 0.0 };
                    let np = netpwr(rate(s.bytes, secs) / 8.0, avg * 1e3);
                    l.push_str(&format!(" {avg:.3}/{min:.3}/{max:.3}/{sd:.3} ms {pps:.0} pps {np}"));
                    return (H_JL_E, l);
                }
                (H_JL, l)
            }
            (true, Dir::Send, true) => {
                let pps = if secs > 0.0 { s.ops as f64 / secs } else { 0.0 };
                (H_PPS_E, format!("{head}  {}/{} {pps:8.0} pps", s.ops, s.errs))
            }
            (false, Dir::Send, true) => {
                let t = s.tcp.unwrap_or_default();
                let np = netpwr(rate(s.bytes, secs) / 8.0, t.rtt_us as f64);
                let l = format!(
                    "{head}  {}/{} {:10} {:8}K/{}({}) us  {np}",
                    s.ops,
                    s.errs,
                    t.retrans,
                    t.cwnd / 1024,
                    t.rtt_us,
                    t.rttvar_us
                );
                (H_WRITE_E, l)
            }
            (false, Dir::Recv, true) => {
                let h = s.hist.map(|x| x.to_string()).join(":");
                (H_READ_E, format!("{head}  {}={h}", s.ops))
            }
            (_, _, false) => (H_BW, head),
        }
    }

    fn sum_line(&mut self, s: &Sample, sum: &Sum) {
        if self.format == Format::Csv {
            if let Some(c) = self.conns.get(&s.id) {
                let l = csv::sum_line(c, sum);
                self.line(&l);
            }
            return;
        }
        let mut l = format!("[SUM] {}", bw(sum.start, sum.end, sum.bytes));
        if self.enhanced && s.dir == Dir::Recv && !self.conns.get(&s.id).is_some_and(|c| c.udp) {
            l.push_str(&format!("  {}={}", sum.ops, sum.hist.map(|x| x.to_string()).join(":")));
        }
        self.line(&l);
    }

    fn server_report(&mut self, id: u32, r: &ServerReport) {
        self.line(&format!("[{id:3}] Server Report:"));
        let secs = r.stop.to_f64();
        let u = UdpFigures {
            jitter_ms: r.jitter.to_f64() * 1e3,
            lost: r.errors,
            total: r.datagrams,
            out_of_order: r.out_of_order,
            received: 0,
            latency_ms: None,
        };
        let head = format!("{}{}{}", id_str(id, Tag::Plain), bw(0.0, secs, r.total_bytes), jitter_loss(&u));
        if self.enhanced && r.flags & SERVER_HEADER_EXTEND != 0 {
            let [min, max, _sum, mean, m2, _] = r.transit.map(|t| t.to_f64());
            let cnt = r.cnt_transit.max(0) as f64;
            let sd = if cnt > 1.0 { (m2 * 1e-12 / (cnt - 1.0)).sqrt() } else { 0.0 };
            let np = netpwr(rate(r.total_bytes, secs) / 8.0, mean * 1e6);
            self.line(H_JL_E);
            self.line(&format!(
                "{head} {:.3}/{:.3}/{:.3}/{:.3} ms {} pps {np}",
                mean * 1e3,
                min * 1e3,
                max * 1e3,
                sd * 1e3,
                r.cnt_ipg
            ));
        } else {
            self.line(H_JL);
            self.line(&head);
        }
        if r.out_of_order > 0 {
            self.line(&format!(
                "{}0.0000-{secs:.4} sec  {} datagrams received out-of-order",
                id_str(id, Tag::Plain),
                r.out_of_order
            ));
        }
        self.last_header = None;
    }
}

/// iperf 2's "network power": bytes per second over the RTT or latency in microseconds.
fn netpwr(bytes_per_sec: f64, micros: f64) -> String {
    if micros > 0.0 { format!("{:.0}", bytes_per_sec / micros) } else { "0".into() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_match_iperf2() {
        assert_eq!(id_str(1, Tag::Plain), "[  1] ");
        assert_eq!(id_str(1, Tag::Reverse), "[ *1] ");
        let l = format!("{}{}", id_str(1, Tag::Plain), bw(0.0, 1.0, 13_107_200));
        assert_eq!(l, "[  1] 0.0000-1.0000 sec  12.5 MBytes   105 Mbits/sec");
        let u = UdpFigures { jitter_ms: 0.002, lost: 0, total: 8919, ..Default::default() };
        assert_eq!(jitter_loss(&u), "   0.002 ms 0/8919 (0%)");
    }
}
