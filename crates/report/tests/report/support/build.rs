//! Short constructors for schema values, so a captured sample's numbers can be typed in as
//! they read: `"2.24G"` bytes (binary, via `parse_size`), `"19.2G"` bit/s (decimal, via
//! `parse_rate`).

use wireperf_protocol::schema::{Connected, EndStream, HostPort, IntervalStream, IntervalSum, Start, Summary};
use wireperf_report::{parse_rate, parse_size};

/// Bytes from `"2.24G"`, `"869M"`, `"0"`.
pub fn b(s: &str) -> u64 {
    parse_size(s).expect("size in a test fixture")
}

/// Bits per second from `"19.2G"`, `"100M"`.
pub fn r(s: &str) -> f64 {
    parse_rate(s).expect("rate in a test fixture") as f64
}

fn pct(lost: i64, total: i64) -> f64 {
    if total > 0 { 100.0 * lost as f64 / total as f64 } else { 0.0 }
}

fn stream(id: i32, t: (f64, f64), xfer: &str, rate: &str, sender: bool) -> IntervalStream {
    IntervalStream {
        socket: id,
        start: t.0,
        end: t.1,
        seconds: t.1 - t.0,
        bytes: b(xfer),
        bits_per_second: r(rate),
        sender,
        ..Default::default()
    }
}

/// TCP stream this host sends on, with Retr and Cwnd.
pub fn tx(id: i32, t: (f64, f64), xfer: &str, rate: &str, retr: u64, cwnd: &str) -> IntervalStream {
    IntervalStream { retransmits: Some(retr), snd_cwnd: Some(b(cwnd)), ..stream(id, t, xfer, rate, true) }
}

/// TCP stream this host receives on.
pub fn rx(id: i32, t: (f64, f64), xfer: &str, rate: &str) -> IntervalStream {
    stream(id, t, xfer, rate, false)
}

/// UDP stream this host sends on.
pub fn utx(id: i32, t: (f64, f64), xfer: &str, rate: &str, packets: i64) -> IntervalStream {
    IntervalStream { packets: Some(packets), ..stream(id, t, xfer, rate, true) }
}

/// UDP stream this host receives on.
#[allow(clippy::too_many_arguments)]
pub fn urx(id: i32, t: (f64, f64), xfer: &str, rate: &str, jitter: f64, lost: i64, packets: i64) -> IntervalStream {
    IntervalStream {
        jitter_ms: Some(jitter),
        lost_packets: Some(lost),
        packets: Some(packets),
        lost_percent: Some(pct(lost, packets)),
        ..stream(id, t, xfer, rate, false)
    }
}

/// Marks an interval stream as inside `-O`.
pub fn omitted(mut s: IntervalStream) -> IntervalStream {
    s.omitted = true;
    s
}

fn sum(t: (f64, f64), xfer: &str, rate: &str, sender: bool) -> IntervalSum {
    IntervalSum {
        start: t.0,
        end: t.1,
        seconds: t.1 - t.0,
        bytes: b(xfer),
        bits_per_second: r(rate),
        sender,
        ..Default::default()
    }
}

/// TCP interval sum of this host's sending streams.
pub fn sum_tx(t: (f64, f64), xfer: &str, rate: &str, retr: u64) -> IntervalSum {
    IntervalSum { retransmits: Some(retr), ..sum(t, xfer, rate, true) }
}

/// TCP interval sum of this host's receiving streams.
pub fn sum_rx(t: (f64, f64), xfer: &str, rate: &str) -> IntervalSum {
    sum(t, xfer, rate, false)
}

/// UDP interval sum, sending.
pub fn usum_tx(t: (f64, f64), xfer: &str, rate: &str, packets: i64) -> IntervalSum {
    IntervalSum { packets: Some(packets), ..sum(t, xfer, rate, true) }
}

/// UDP interval sum, receiving.
pub fn usum_rx(t: (f64, f64), xfer: &str, rate: &str, jitter: f64, lost: i64, packets: i64) -> IntervalSum {
    IntervalSum {
        jitter_ms: Some(jitter),
        lost_packets: Some(lost),
        packets: Some(packets),
        lost_percent: Some(pct(lost, packets)),
        ..sum(t, xfer, rate, false)
    }
}

/// Marks an interval sum as inside `-O`.
pub fn sum_omitted(mut s: IntervalSum) -> IntervalSum {
    s.omitted = true;
    s
}

/// One side of a summary: `0.00-end`, bytes, rate.
pub fn side(end: f64, xfer: &str, rate: &str) -> Summary {
    Summary { start: 0.0, end, seconds: end, bytes: b(xfer), bits_per_second: r(rate), ..Default::default() }
}

/// A TCP sender side with retransmits.
pub fn side_retr(end: f64, xfer: &str, rate: &str, retr: u64) -> Summary {
    Summary { retransmits: Some(retr), ..side(end, xfer, rate) }
}

/// A UDP side: jitter, lost, datagrams.
pub fn uside(end: f64, xfer: &str, rate: &str, jitter: f64, lost: i64, packets: i64) -> Summary {
    Summary {
        jitter_ms: Some(jitter),
        lost_packets: Some(lost),
        packets: Some(packets),
        lost_percent: Some(pct(lost, packets)),
        out_of_order: Some(0),
        ..side(end, xfer, rate)
    }
}

fn tag(mut s: Summary, id: Option<i32>, local_sends: bool) -> Summary {
    s.socket = id;
    s.sender = local_sends;
    s
}

/// A TCP `end.streams` entry.
pub fn tcp_end(id: i32, local_sends: bool, sender: Summary, receiver: Summary) -> EndStream {
    EndStream {
        sender: Some(tag(sender, Some(id), local_sends)),
        receiver: Some(tag(receiver, Some(id), local_sends)),
        ..Default::default()
    }
}

/// A UDP `end.streams` entry: iperf3's `udp` object (sender's bytes and time) plus
/// wireperf's `udp_receiver`.
pub fn udp_end(id: i32, local_sends: bool, sender: Summary, receiver: Summary) -> EndStream {
    EndStream {
        udp: Some(tag(sender, Some(id), local_sends)),
        udp_receiver: Some(tag(receiver, Some(id), local_sends)),
        ..Default::default()
    }
}

/// A sum object (`sum_sent`…), flagged with the direction.
pub fn sum_side(s: Summary, local_sends: bool) -> Option<Summary> {
    Some(tag(s, None, local_sends))
}

/// `start` of a client on 127.0.0.1 talking to port 5391, with these local stream ports.
pub fn client_start(streams: &[(i32, u16)]) -> Start {
    Start {
        connecting_to: Some(HostPort { host: "127.0.0.1".into(), port: 5391 }),
        connected: streams
            .iter()
            .map(|&(socket, port)| Connected {
                socket,
                local_host: "127.0.0.1".into(),
                local_port: port,
                remote_host: "127.0.0.1".into(),
                remote_port: 5391,
            })
            .collect(),
        ..Default::default()
    }
}

/// `start` of the server on port 5391 accepting a client control connection from
/// `ctrl_port`, with the client's stream ports.
pub fn server_start(ctrl_port: u16, streams: &[(i32, u16)]) -> Start {
    Start {
        accepted_connection: Some(HostPort { host: "127.0.0.1".into(), port: ctrl_port }),
        connected: streams
            .iter()
            .map(|&(socket, port)| Connected {
                socket,
                local_host: "127.0.0.1".into(),
                local_port: 5391,
                remote_host: "127.0.0.1".into(),
                remote_port: port,
            })
            .collect(),
        ..Default::default()
    }
}
