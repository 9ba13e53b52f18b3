//! Pure extraction of the stored columns from a `-J` report: headline figures, the interval
//! series and the per-stream totals.
//!
//! The headline figures are read from the report's [`TestOutcome`], which knows which sum of
//! `end` is which direction for client- and server-written documents and iperf 2 peers alike;
//! the interval and stream rows map each entry's `sender` flag to upload/download with
//! [`Side::direction`], so both sides' documents are stored alike.

use wireperf_protocol::TestOutcome;
use wireperf_protocol::outcome::Flow;
use wireperf_protocol::schema::{EndStream, IntervalStream, IntervalSum, TestReport};

use crate::model::{Direction, Figures, IntervalRow, Side, StreamRow};

fn add_opt<T: std::ops::Add<Output = T>>(a: Option<T>, b: Option<T>) -> Option<T> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a + b),
        (a, None) => a,
        (None, b) => b,
    }
}

/// A figure added up over the directions (bidir has two); `None` when no direction has it.
fn over_flows<T: std::ops::Add<Output = T>>(o: &TestOutcome, figure: impl Fn(&Flow) -> Option<T>) -> Option<T> {
    o.flows.iter().map(figure).fold(None, add_opt)
}

/// Per-phase figures beyond [`Figures`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PhaseFigures {
    /// Headline numbers.
    pub figures: Figures,
    /// Streams per direction.
    pub num_streams: Option<u32>,
    /// Goodput client → server.
    pub upload_bps: Option<f64>,
    /// Goodput server → client.
    pub download_bps: Option<f64>,
    /// UDP jitter, ms.
    pub jitter_ms: Option<f64>,
    /// UDP lost datagrams.
    pub lost_packets: Option<i64>,
    /// UDP datagrams (as the receiver counted them).
    pub packets: Option<i64>,
    /// UDP loss, percent.
    pub lost_percent: Option<f64>,
}

/// The stored figures of one report written by `side`.
pub fn phase_figures(report: &TestReport, side: Side) -> PhaseFigures {
    let o = TestOutcome::new(report, side);
    let figures = Figures {
        protocol: Some(o.protocol.clone()),
        direction: Some(o.direction.as_str().to_string()),
        duration: o.seconds(),
        sent_bytes: over_flows(&o, |f| f.sent.map(|t| t.bytes)),
        sent_bps: over_flows(&o, |f| f.sent.map(|t| t.bits_per_second)),
        received_bytes: over_flows(&o, |f| f.received.map(|t| t.bytes)),
        received_bps: over_flows(&o, |f| f.received.map(|t| t.bits_per_second)),
        retransmits: over_flows(&o, |f| f.retransmits),
        cpu_host: o.cpu.map(|c| c.host_percent),
        cpu_remote: o.cpu.map(|c| c.remote_percent),
        error: report.error.clone(),
    };
    let goodput = |d| o.flow(d).and_then(|f| f.goodput());
    let loss = o.flows.first().and_then(|f| f.udp).filter(|_| o.is_udp());
    PhaseFigures {
        figures,
        num_streams: o.streams,
        upload_bps: goodput(Direction::Upload),
        download_bps: goodput(Direction::Download),
        jitter_ms: loss.map(|u| u.jitter_ms),
        lost_packets: loss.and_then(|u| u.lost_packets),
        packets: loss.and_then(|u| u.receiver_packets),
        lost_percent: loss.and_then(|u| u.lost_percent),
    }
}

/// Sums the phases' figures into a run's: bytes and retransmits add up, rates are bytes over
/// total time, CPU is the highest phase's, protocol and direction list the distinct values.
pub fn run_figures(phases: &[Figures]) -> Figures {
    if let [one] = phases {
        return one.clone();
    }
    let mut f = Figures::default();
    let join = |pick: fn(&Figures) -> Option<&String>| {
        let mut seen: Vec<&str> = Vec::new();
        for p in phases.iter().filter_map(pick) {
            if !seen.contains(&p.as_str()) {
                seen.push(p);
            }
        }
        (!seen.is_empty()).then(|| seen.join("+"))
    };
    f.protocol = join(|p| p.protocol.as_ref());
    f.direction = join(|p| p.direction.as_ref());
    for p in phases {
        f.duration = add_opt(f.duration, p.duration);
        f.sent_bytes = add_opt(f.sent_bytes, p.sent_bytes);
        f.received_bytes = add_opt(f.received_bytes, p.received_bytes);
        f.retransmits = add_opt(f.retransmits, p.retransmits);
        f.cpu_host = max_opt(f.cpu_host, p.cpu_host);
        f.cpu_remote = max_opt(f.cpu_remote, p.cpu_remote);
        if f.error.is_none() {
            f.error.clone_from(&p.error);
        }
    }
    let rate = |bytes: Option<u64>| match (bytes, f.duration) {
        (Some(b), Some(d)) if d > 0.0 => Some(b as f64 * 8.0 / d),
        _ => None,
    };
    f.sent_bps = rate(f.sent_bytes);
    f.received_bps = rate(f.received_bytes);
    f
}

fn max_opt(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, None) => a,
        (None, b) => b,
    }
}

fn sum_row(index: u32, s: &IntervalSum, streams: &[&IntervalStream], side: Side) -> IntervalRow {
    let cwnds: Vec<u64> = streams.iter().filter_map(|st| st.snd_cwnd).collect();
    let rtts: Vec<u64> = streams.iter().filter_map(|st| st.rtt).collect();
    IntervalRow {
        index,
        stream: None,
        direction: Some(side.direction(s.sender)),
        start: s.start,
        end: s.end,
        bytes: s.bytes,
        bits_per_second: s.bits_per_second,
        retransmits: s.retransmits,
        cwnd: (!cwnds.is_empty()).then(|| cwnds.iter().sum()),
        rtt: (!rtts.is_empty()).then(|| rtts.iter().sum::<u64>() / rtts.len() as u64),
        jitter_ms: s.jitter_ms,
        lost_packets: s.lost_packets,
        packets: s.packets,
        omitted: s.omitted,
    }
}

/// The interval series: per interval, the sum of each direction and every stream.
pub fn interval_rows(report: &TestReport, side: Side) -> Vec<IntervalRow> {
    let mut rows = Vec::new();
    for (i, iv) in report.intervals.iter().enumerate() {
        let index = u32::try_from(i).unwrap_or(u32::MAX);
        let sums = std::iter::once(&iv.sum).chain(iv.sum_bidir_reverse.as_ref());
        for s in sums {
            let members: Vec<&IntervalStream> = iv.streams.iter().filter(|st| st.sender == s.sender).collect();
            rows.push(sum_row(index, s, &members, side));
        }
        for st in &iv.streams {
            rows.push(IntervalRow {
                index,
                stream: Some(st.socket),
                direction: Some(side.direction(st.sender)),
                start: st.start,
                end: st.end,
                bytes: st.bytes,
                bits_per_second: st.bits_per_second,
                retransmits: st.retransmits,
                cwnd: st.snd_cwnd,
                rtt: st.rtt,
                jitter_ms: st.jitter_ms,
                lost_packets: st.lost_packets,
                packets: st.packets,
                omitted: st.omitted,
            });
        }
    }
    rows
}

/// Per-stream totals from `end.streams`.
pub fn stream_rows(report: &TestReport, side: Side) -> Vec<StreamRow> {
    report.end.streams.iter().filter_map(|s| stream_row(s, side)).collect()
}

fn stream_row(s: &EndStream, side: Side) -> Option<StreamRow> {
    if let Some(u) = &s.udp {
        // iperf3's single UDP object: the sender's bytes and rate with the receiver's jitter
        // and loss on the sending host; the receiver's bytes on the receiving host.
        let rx = s.udp_receiver.as_ref();
        let (sent, recv) = if u.sender { (Some(u), rx) } else { (None, Some(u)) };
        return Some(StreamRow {
            stream: u.socket.unwrap_or_default(),
            direction: Some(side.direction(u.sender)),
            sent_bytes: sent.map(|x| x.bytes),
            sent_bps: sent.map(|x| x.bits_per_second),
            received_bytes: recv.map(|x| x.bytes),
            received_bps: recv.map(|x| x.bits_per_second),
            jitter_ms: u.jitter_ms,
            lost_packets: u.lost_packets,
            packets: u.packets,
            lost_percent: u.lost_percent,
            ..StreamRow::default()
        });
    }
    let any = s.sender.as_ref().or(s.receiver.as_ref())?;
    let tx = s.sender.as_ref();
    Some(StreamRow {
        stream: any.socket.unwrap_or_default(),
        direction: Some(side.direction(any.sender)),
        sent_bytes: tx.map(|x| x.bytes),
        sent_bps: tx.map(|x| x.bits_per_second),
        received_bytes: s.receiver.as_ref().map(|x| x.bytes),
        received_bps: s.receiver.as_ref().map(|x| x.bits_per_second),
        retransmits: tx.and_then(|x| x.retransmits),
        max_cwnd: tx.and_then(|x| x.max_snd_cwnd),
        max_rtt: tx.and_then(|x| x.max_rtt),
        min_rtt: tx.and_then(|x| x.min_rtt),
        mean_rtt: tx.and_then(|x| x.mean_rtt),
        ..StreamRow::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use wireperf_protocol::schema::{End, HostPort, Interval, Summary, TestStart};

    fn tcp(reverse: i32) -> TestReport {
        let mut r = TestReport::default();
        r.start.connecting_to = Some(HostPort { host: "h".into(), port: 5201 });
        r.start.test_start = Some(TestStart { protocol: "TCP".into(), reverse, duration: 2, ..Default::default() });
        r.end = End {
            sum_sent: Some(Summary {
                end: 2.0,
                bytes: 100,
                bits_per_second: 400.0,
                retransmits: Some(3),
                sender: true,
                ..Default::default()
            }),
            sum_received: Some(Summary { end: 2.1, bytes: 90, bits_per_second: 342.0, ..Default::default() }),
            ..Default::default()
        };
        r
    }

    #[test]
    fn download_goodput_lands_in_download_column() {
        let f = phase_figures(&tcp(1), Side::Client);
        assert_eq!(f.download_bps, Some(342.0));
        assert_eq!(f.upload_bps, None);
        assert_eq!(f.figures.duration, Some(2.1));
        assert_eq!(f.figures.retransmits, Some(3));
        assert_eq!(f.figures.direction.as_deref(), Some("download"));
    }

    /// Regression: an iperf 2 full-duplex document's `sum_received` is the client's download,
    /// but it was read as the receiver's count of the upload and stored as upload goodput.
    #[test]
    fn iperf2_full_duplex_download_rate_is_not_stored_as_upload() {
        let mut r = tcp(0);
        r.start.version = format!("wireperf 0.1.0 {}", wireperf_protocol::outcome::IPERF2_MODE);
        let iv = |sender| IntervalSum { bytes: 1, sender, ..Default::default() };
        r.intervals.push(Interval { streams: vec![], sum: iv(true), sum_bidir_reverse: Some(iv(false)) });
        let f = phase_figures(&r, Side::Client);
        assert_eq!(f.figures.direction.as_deref(), Some("bidir"));
        assert_eq!(f.upload_bps, None, "iperf 2 reports no receiver's count of the upload");
        assert_eq!(f.download_bps, Some(342.0));
        assert_eq!((f.figures.sent_bytes, f.figures.received_bytes), (Some(100), Some(90)));
    }

    #[test]
    fn run_figures_sum_bytes_and_divide_by_total_time() {
        let a = phase_figures(&tcp(0), Side::Client).figures;
        let b = phase_figures(&tcp(1), Side::Client).figures;
        let f = run_figures(&[a, b]);
        assert_eq!(f.received_bytes, Some(180));
        assert_eq!(f.direction.as_deref(), Some("upload+download"));
        assert_eq!(f.protocol.as_deref(), Some("TCP"));
        let bps = f.received_bps.unwrap();
        assert!((bps - 180.0 * 8.0 / 4.2).abs() < 1e-9, "{bps}");
    }

    #[test]
    fn sum_rows_total_cwnd_and_average_rtt_over_their_streams() {
        let mut r = tcp(0);
        let st = |socket, cwnd, rtt| IntervalStream {
            socket,
            snd_cwnd: Some(cwnd),
            rtt: Some(rtt),
            sender: true,
            ..Default::default()
        };
        r.intervals.push(Interval {
            streams: vec![st(5, 1000, 10), st(7, 3000, 30)],
            sum: IntervalSum { bytes: 8, sender: true, ..Default::default() },
            sum_bidir_reverse: None,
        });
        let rows = interval_rows(&r, Side::Client);
        assert_eq!(rows.len(), 3);
        assert_eq!((rows[0].stream, rows[0].cwnd, rows[0].rtt), (None, Some(4000), Some(20)));
        assert_eq!(rows[2].stream, Some(7));
    }
}
