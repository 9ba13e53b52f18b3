//! [`TestOutcome`] on client- and server-written documents of each kind of test.

use super::*;
use crate::schema::{CpuUtilization, End, EndStream, HostPort, Interval, IntervalSum, Start, TestStart};

fn sum(bytes: u64, end: f64, sender: bool) -> Summary {
    Summary { end, seconds: end, bytes, bits_per_second: bytes as f64 * 8.0 / end, sender, ..Default::default() }
}

fn tcp_sent(bytes: u64, retransmits: u64, sender: bool) -> Summary {
    Summary { retransmits: Some(retransmits), ..sum(bytes, 2.0, sender) }
}

fn start(side: Side, protocol: &str, reverse: bool) -> Start {
    let peer = Some(HostPort { host: "h".into(), port: 5201 });
    let (connecting_to, accepted_connection) = match side {
        Side::Client => (peer, None),
        Side::Server => (None, peer),
    };
    Start {
        connecting_to,
        accepted_connection,
        test_start: Some(TestStart {
            protocol: protocol.into(),
            num_streams: 2,
            duration: 2,
            reverse: i32::from(reverse),
            ..Default::default()
        }),
        ..Default::default()
    }
}

fn report(side: Side, reverse: bool, end: End) -> TestReport {
    TestReport { start: start(side, "TCP", reverse), end, ..Default::default() }
}

/// A TCP test of one direction as either end writes it: the local host's `sender` flags.
fn one_way(side: Side, reverse: bool) -> TestReport {
    let local_sends = (side == Side::Client) != reverse;
    report(
        side,
        reverse,
        End {
            sum_sent: Some(tcp_sent(1000, 4, local_sends)),
            sum_received: Some(sum(900, 2.1, local_sends)),
            cpu_utilization_percent: Some(CpuUtilization {
                host_total: 50.0,
                remote_total: 12.5,
                ..Default::default()
            }),
            ..Default::default()
        },
    )
}

fn bidir(side: Side) -> TestReport {
    report(
        side,
        false,
        End {
            sum_sent: Some(tcp_sent(1000, 1, true)),
            sum_received: Some(sum(990, 2.0, true)),
            sum_sent_bidir_reverse: Some(tcp_sent(2000, 2, false)),
            sum_received_bidir_reverse: Some(sum(1980, 2.0, false)),
            ..Default::default()
        },
    )
}

#[test]
fn client_upload_has_one_flow_measured_at_both_ends() {
    let o = TestOutcome::from_report(&one_way(Side::Client, false));
    assert_eq!((o.written_by, o.peer, o.direction), (Side::Client, Peer::Iperf3, Direction::Upload));
    assert_eq!(o.flows.len(), 1);
    let f = o.flow(Direction::Upload).unwrap();
    let (s, r) = (f.sent.unwrap(), f.received.unwrap());
    assert_eq!((s.bytes, s.measured_by, s.counted_by), (1000, Side::Client, Counter::Sender));
    assert_eq!((r.bytes, r.measured_by, r.counted_by), (900, Side::Server, Counter::Receiver));
    assert_eq!(f.goodput(), Some(900.0 * 8.0 / 2.1));
    assert_eq!(f.retransmits, Some(4));
    assert_eq!(f.udp, None);
    assert_eq!(o.cpu, Some(Cpu { host_percent: 50.0, remote_percent: 12.5 }));
    assert_eq!((o.streams, o.seconds()), (Some(2), Some(2.1)));
}

#[test]
fn download_is_download_whoever_wrote_it() {
    for side in [Side::Client, Side::Server] {
        let o = TestOutcome::from_report(&one_way(side, true));
        assert_eq!(o.written_by, side);
        assert_eq!(o.direction, Direction::Download);
        let f = o.flow(Direction::Download).expect("a download flow");
        assert_eq!(f.sent.unwrap().measured_by, Side::Server, "{side:?}");
        assert_eq!(f.received.unwrap().measured_by, Side::Client, "{side:?}");
        assert!(o.flow(Direction::Upload).is_none());
    }
}

#[test]
fn server_written_upload_is_an_upload() {
    let o = TestOutcome::from_report(&one_way(Side::Server, false));
    assert_eq!(o.written_by, Side::Server);
    assert_eq!(o.flows.iter().map(|f| f.direction).collect::<Vec<_>>(), [Direction::Upload]);
    assert_eq!(o.flow(Direction::Upload).unwrap().received.unwrap().measured_by, Side::Server);
}

#[test]
fn bidir_first_flow_is_the_writers_sending_direction() {
    let c = TestOutcome::from_report(&bidir(Side::Client));
    assert_eq!(c.direction, Direction::Bidir);
    let dirs: Vec<_> = c.flows.iter().map(|f| (f.direction, f.received.unwrap().bytes, f.retransmits)).collect();
    assert_eq!(dirs, [(Direction::Upload, 990, Some(1)), (Direction::Download, 1980, Some(2))]);

    // The server sends on its `sum_sent`: the same keys mean the opposite directions.
    let s = TestOutcome::from_report(&bidir(Side::Server));
    let dirs: Vec<_> = s.flows.iter().map(|f| (f.direction, f.received.unwrap().bytes)).collect();
    assert_eq!(dirs, [(Direction::Download, 990), (Direction::Upload, 1980)]);
    assert_eq!(s.flow(Direction::Upload).unwrap().sent.unwrap().measured_by, Side::Client);
}

#[test]
fn an_explicit_writer_overrides_start() {
    let o = TestOutcome::new(&bidir(Side::Client), Side::Server);
    assert_eq!(o.flows[0].direction, Direction::Download);
}

fn udp_client() -> TestReport {
    let loss = |s: Summary, packets| Summary {
        jitter_ms: Some(0.25),
        lost_packets: Some(3),
        packets: Some(packets),
        lost_percent: Some(1.0),
        ..s
    };
    let end = End {
        sum: Some(loss(sum(1000, 2.05, true), 300)),
        sum_sent: Some(Summary {
            jitter_ms: Some(0.0),
            lost_packets: Some(0),
            packets: Some(300),
            ..sum(1000, 2.0, true)
        }),
        sum_received: Some(loss(sum(990, 2.05, false), 297)),
        ..Default::default()
    };
    TestReport { start: start(Side::Client, "UDP", false), end, ..Default::default() }
}

#[test]
fn udp_loss_comes_from_the_receiver_and_counts_against_what_was_sent() {
    let o = TestOutcome::from_report(&udp_client());
    assert!(o.is_udp());
    let f = o.flow(Direction::Upload).unwrap();
    let u = f.udp.unwrap();
    assert_eq!((u.jitter_ms, u.lost_packets, u.lost_percent), (0.25, Some(3), Some(1.0)));
    assert_eq!((u.packets, u.receiver_packets), (Some(300), Some(297)));
    assert_eq!(u.measured_by, Side::Server);
    assert_eq!(f.retransmits, None, "UDP has no retransmits");
    assert_eq!(f.received.unwrap().bytes, 990);
}

#[test]
fn old_udp_documents_with_only_sum_use_it_for_both_counts_marked_as_the_senders() {
    let mut r = udp_client();
    r.end.sum_sent = None;
    r.end.sum_received = None;
    let o = TestOutcome::from_report(&r);
    let f = &o.flows[0];
    let got = f.received.unwrap();
    assert_eq!((got.bytes, got.counted_by, got.measured_by), (1000, Counter::Sender, Side::Client));
    assert_eq!(f.sent.unwrap().bytes, 1000);
    assert_eq!(f.udp.unwrap().packets, Some(300));
}

#[test]
fn an_empty_end_has_no_flows_and_the_requested_time() {
    let o = TestOutcome::from_report(&report(Side::Client, false, End::default()));
    assert!(o.flows.is_empty());
    assert_eq!(o.seconds(), Some(2.0));
    assert_eq!(TestOutcome::from_report(&TestReport::default()).seconds(), None);
}

/// What wireperf's iperf 2 client writes: local counts only, marked in `version`.
fn iperf2_client(sent: bool, received: bool) -> TestReport {
    let mut r = report(Side::Client, received && !sent, End::default());
    r.start.version = format!("wireperf 0.1.0 {IPERF2_MODE}");
    r.end.sum_sent = sent.then(|| sum(1000, 2.0, true));
    r.end.sum_received = received.then(|| sum(800, 2.0, false));
    if sent && received {
        let iv = |sender| IntervalSum { bytes: 1, sender, ..Default::default() };
        r.intervals.push(Interval { sum: iv(true), sum_bidir_reverse: Some(iv(false)), ..Default::default() });
    }
    r
}

#[test]
fn iperf2_upload_has_only_the_senders_count() {
    let o = TestOutcome::from_report(&iperf2_client(true, false));
    assert_eq!(o.peer, Peer::Iperf2);
    let f = o.flow(Direction::Upload).unwrap();
    assert_eq!(f.received, None);
    assert_eq!(f.goodput(), None, "no receiver measured it");
    let best = f.best().unwrap();
    assert_eq!((best.bytes, best.counted_by, best.measured_by), (1000, Counter::Sender, Side::Client));
}

#[test]
fn iperf2_full_duplex_sums_are_opposite_directions() {
    let o = TestOutcome::from_report(&iperf2_client(true, true));
    assert_eq!(o.direction, Direction::Bidir);
    let up = o.flow(Direction::Upload).unwrap();
    let down = o.flow(Direction::Download).unwrap();
    assert_eq!((up.sent.map(|t| t.bytes), up.received), (Some(1000), None));
    assert_eq!((down.sent, down.received.map(|t| t.bytes)), (None, Some(800)));
    assert_eq!(down.received.unwrap().measured_by, Side::Client);
}

#[test]
fn iperf2_download_is_received_by_the_client() {
    let o = TestOutcome::from_report(&iperf2_client(false, true));
    assert_eq!(o.direction, Direction::Download);
    assert_eq!(o.flows.len(), 1);
    assert_eq!(o.flow(Direction::Download).unwrap().goodput(), Some(3200.0));
}

#[test]
fn iperf2_udp_loss_from_server_reports_belongs_to_the_sent_flow() {
    let mut r = iperf2_client(true, false);
    r.start.test_start.as_mut().unwrap().protocol = "UDP".into();
    let report_sum =
        Summary { jitter_ms: Some(0.5), lost_packets: Some(2), packets: Some(100), ..sum(1000, 2.0, true) };
    r.end.sum = Some(report_sum.clone());
    r.end.streams.push(EndStream {
        udp: Some(report_sum.clone()),
        udp_receiver: Some(report_sum),
        ..Default::default()
    });
    let o = TestOutcome::from_report(&r);
    let f = o.flow(Direction::Upload).unwrap();
    let u = f.udp.unwrap();
    assert_eq!((u.lost_packets, u.packets, u.measured_by), (Some(2), Some(100), Side::Server));
    let got = f.received.expect("the server report's count");
    assert_eq!((got.bytes, got.counted_by, got.measured_by), (1000, Counter::Receiver, Side::Server));
}

#[test]
fn iperf2_udp_without_a_server_report_has_no_receivers_count() {
    let mut r = iperf2_client(true, false);
    r.start.test_start.as_mut().unwrap().protocol = "UDP".into();
    r.end.sum = r.end.sum_sent.clone();
    let o = TestOutcome::from_report(&r);
    let f = o.flow(Direction::Upload).unwrap();
    assert_eq!((f.received, f.udp), (None, None), "the sum copies the sender's count; it is not the receiver's");
}

#[test]
fn iperf2_two_way_tests_without_intervals_are_bidir() {
    // `-d`/`-r` or no `-i`: nothing but the two sums tells.
    let mut r = iperf2_client(true, true);
    r.intervals.clear();
    assert_eq!(TestOutcome::from_report(&r).direction, Direction::Bidir);
}

#[test]
fn side_maps_sender_flags_to_directions() {
    assert_eq!(Side::Server.direction(true), Direction::Download);
    assert_eq!(Side::Client.direction(true), Direction::Upload);
    assert_eq!(Side::Server.direction(false), Direction::Upload);
    assert_eq!(Direction::parse("bidir"), Some(Direction::Bidir));
    assert_eq!(Direction::parse(Direction::Download.as_str()), Some(Direction::Download));
}
