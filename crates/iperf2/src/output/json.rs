//! `-J`: the run as wireperf's iperf3-schema [`TestReport`], so history, suite and HTML
//! reports read iperf 2 runs like iperf3 ones.
//!
//! Mapping: each iperf 2 stream direction is a stream (`socket` = the bracketed id);
//! sending directions fill `sender`, receiving ones `receiver`; `sum_sent`/`sum_received` sum
//! them. UDP: the client's `udp` object carries its own bytes and time with the loss and
//! jitter of the server's report, and `udp_receiver` the report as the server measured it.

use super::Role;
use crate::event::{ConnInfo, Dir, Event, Sample};
use crate::wire::ServerReport;
use std::collections::BTreeMap;
use wireperf_protocol::schema::*;

/// Collects events into a [`TestReport`].
pub struct JsonCollector {
    role: Role,
    report: TestReport,
    intervals: BTreeMap<u64, Interval>,
    finals: Vec<Sample>,
    reports: BTreeMap<u32, ServerReport>,
    udp: bool,
}

fn rate(bytes: u64, secs: f64) -> f64 {
    if secs > 0.0 { bytes as f64 * 8.0 / secs } else { 0.0 }
}

impl JsonCollector {
    /// A collector with the `start` object already filled in by the caller.
    pub fn new(role: Role, start: Start, udp: bool) -> Self {
        JsonCollector {
            role,
            report: TestReport { start, ..TestReport::default() },
            intervals: BTreeMap::new(),
            finals: Vec::new(),
            reports: BTreeMap::new(),
            udp,
        }
    }

    /// Takes one event.
    pub fn handle(&mut self, e: &Event) {
        match e {
            Event::Connected(c) => self.connected(c),
            Event::Sample(s) if s.is_final => self.finals.push(s.clone()),
            Event::Sample(s) => self.interval(s),
            Event::ServerReport { id, report } => {
                self.reports.insert(*id, report.clone());
            }
            Event::UdpSent { .. } => {}
            Event::Warning(w) => {
                self.report.error.get_or_insert_with(|| w.clone());
            }
        }
    }

    fn connected(&mut self, c: &ConnInfo) {
        if self.role == Role::Server && self.report.start.accepted_connection.is_none() {
            self.report.start.accepted_connection =
                Some(HostPort { host: c.peer.ip().to_string(), port: c.peer.port() });
        }
        self.report.start.connected.push(Connected {
            socket: c.id as i32,
            local_host: c.local.ip().to_string(),
            local_port: c.local.port(),
            remote_host: c.peer.ip().to_string(),
            remote_port: c.peer.port(),
        });
    }

    fn interval(&mut self, s: &Sample) {
        let key = (s.start * 1000.0).round() as u64;
        let iv = self.intervals.entry(key).or_default();
        let secs = s.end - s.start;
        let u = s.udp;
        iv.streams.push(IntervalStream {
            socket: s.id as i32,
            start: s.start,
            end: s.end,
            seconds: secs,
            bytes: s.bytes,
            bits_per_second: rate(s.bytes, secs),
            retransmits: s.tcp.map(|t| t.retrans),
            snd_cwnd: s.tcp.map(|t| t.cwnd),
            rtt: s.tcp.map(|t| t.rtt_us),
            rttvar: s.tcp.map(|t| t.rttvar_us),
            jitter_ms: u.map(|u| u.jitter_ms),
            lost_packets: u.map(|u| u.lost),
            packets: u.map(|u| u.total).or(if self.udp { Some(s.ops as i64) } else { None }),
            lost_percent: u.map(|u| if u.total > 0 { 100.0 * u.lost as f64 / u.total as f64 } else { 0.0 }),
            sender: s.dir == Dir::Send,
            ..IntervalStream::default()
        });
    }

    fn summary(s: &Sample) -> Summary {
        let secs = s.end - s.start;
        let u = s.udp;
        Summary {
            socket: Some(s.id as i32),
            start: 0.0,
            end: s.end,
            seconds: secs,
            bytes: s.bytes,
            bits_per_second: rate(s.bytes, secs),
            retransmits: s.tcp.map(|t| t.retrans),
            max_snd_cwnd: s.tcp.map(|t| t.cwnd),
            mean_rtt: s.tcp.map(|t| t.rtt_us),
            jitter_ms: u.map(|u| u.jitter_ms),
            lost_packets: u.map(|u| u.lost),
            packets: u.map(|u| u.total),
            lost_percent: u.map(|u| if u.total > 0 { 100.0 * u.lost as f64 / u.total as f64 } else { 0.0 }),
            out_of_order: u.map(|u| u.out_of_order),
            sender: s.dir == Dir::Send,
            ..Summary::default()
        }
    }

    fn from_report(r: &ServerReport) -> Summary {
        let secs = r.stop.to_f64();
        Summary {
            end: secs,
            seconds: secs,
            bytes: r.total_bytes,
            bits_per_second: rate(r.total_bytes, secs),
            jitter_ms: Some(r.jitter.to_f64() * 1e3),
            lost_packets: Some(r.errors),
            packets: Some(r.datagrams),
            lost_percent: Some(r.lost_percent()),
            out_of_order: Some(r.out_of_order),
            sender: false,
            ..Summary::default()
        }
    }

    fn sum(v: &[&Sample], sender: bool) -> Option<Summary> {
        if v.is_empty() {
            return None;
        }
        let end = v.iter().map(|s| s.end).fold(0.0, f64::max);
        let bytes = v.iter().map(|s| s.bytes).sum();
        let retrans: Option<u64> = v.iter().map(|s| s.tcp.map(|t| t.retrans)).sum();
        Some(Summary {
            end,
            seconds: end,
            bytes,
            bits_per_second: rate(bytes, end),
            retransmits: retrans,
            sender,
            ..Summary::default()
        })
    }

    /// The finished document.
    pub fn finish(mut self) -> TestReport {
        self.report.intervals = std::mem::take(&mut self.intervals).into_values().collect();
        for iv in &mut self.report.intervals {
            let mut dirs = [(true, IntervalSum::default(), 0usize), (false, IntervalSum::default(), 0)];
            for st in &iv.streams {
                let d = if st.sender { &mut dirs[0] } else { &mut dirs[1] };
                d.1.start = st.start;
                d.1.end = d.1.end.max(st.end);
                d.1.bytes += st.bytes;
                d.2 += 1;
            }
            for d in &mut dirs {
                d.1.seconds = d.1.end - d.1.start;
                d.1.bits_per_second = rate(d.1.bytes, d.1.seconds);
                d.1.sender = d.0;
            }
            let [send, recv] = dirs;
            match (send.2 > 0, recv.2 > 0) {
                (true, true) => {
                    iv.sum = send.1;
                    iv.sum_bidir_reverse = Some(recv.1);
                }
                (false, true) => iv.sum = recv.1,
                _ => iv.sum = send.1,
            }
        }
        let mut end = End::default();
        for s in &self.finals {
            let mut es = EndStream::default();
            if self.udp {
                let mut u = Self::summary(s);
                if let Some(r) = self.reports.get(&s.id) {
                    let rs = Self::from_report(r);
                    u.jitter_ms = rs.jitter_ms;
                    u.lost_packets = rs.lost_packets;
                    u.packets = rs.packets;
                    u.lost_percent = rs.lost_percent;
                    u.out_of_order = rs.out_of_order;
                    es.udp_receiver = Some(Summary { socket: Some(s.id as i32), ..rs });
                }
                es.udp = Some(u);
            } else if s.dir == Dir::Send {
                es.sender = Some(Self::summary(s));
            } else {
                es.receiver = Some(Self::summary(s));
            }
            end.streams.push(es);
        }
        let sent: Vec<&Sample> = self.finals.iter().filter(|s| s.dir == Dir::Send).collect();
        let recv: Vec<&Sample> = self.finals.iter().filter(|s| s.dir == Dir::Recv).collect();
        end.sum_sent = Self::sum(&sent, true);
        end.sum_received = Self::sum(&recv, false);
        if self.udp {
            let mut sum = end.sum_sent.clone().or_else(|| end.sum_received.clone());
            if let Some(sm) = sum.as_mut() {
                let rs: Vec<Summary> = self.reports.values().map(Self::from_report).collect();
                let src: Vec<(i64, i64, f64)> = if rs.is_empty() {
                    recv.iter().filter_map(|s| s.udp.map(|u| (u.lost, u.total, u.jitter_ms))).collect()
                } else {
                    rs.iter()
                        .map(|r| (r.lost_packets.unwrap_or(0), r.packets.unwrap_or(0), r.jitter_ms.unwrap_or(0.0)))
                        .collect()
                };
                if !src.is_empty() {
                    let lost: i64 = src.iter().map(|x| x.0).sum();
                    let total: i64 = src.iter().map(|x| x.1).sum();
                    sm.lost_packets = Some(lost);
                    sm.packets = Some(total);
                    sm.lost_percent = Some(if total > 0 { 100.0 * lost as f64 / total as f64 } else { 0.0 });
                    sm.jitter_ms = Some(src.iter().map(|x| x.2).sum::<f64>() / src.len() as f64);
                }
            }
            end.sum = sum;
        }
        self.report.end = end;
        self.report
    }
}
