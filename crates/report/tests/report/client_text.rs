//! Client samples of iperf3 3.12 (reference §1.8) rebuilt from schema values, byte for byte:
//! the basic TCP and UDP layouts (`-R`, `--bidir`, `-P 2`). `-V`, `-f`, `-T`, `--timestamps`,
//! `-O`, `-n` and `--get-server-output` are in `client_variants`.

use crate::support::build::*;
use crate::support::fixture;
use wireperf_protocol::schema::{End, Interval, IntervalStream, IntervalSum, Start, TestReport};
use wireperf_protocol::{Protocol, TestParams};
use wireperf_report::text::preamble::{self, VerboseExtras};
use wireperf_report::{Role, TextContext, render_intervals, render_summary};

pub(crate) fn ctx(protocol: Protocol, parallel: u32, reverse: bool, bidir: bool) -> TextContext {
    let params = TestParams { protocol, parallel, reverse, bidirectional: bidir, ..TestParams::default() };
    TextContext {
        local_has_retransmits: true,
        remote_sender_has_retransmits: protocol == Protocol::Tcp,
        ..TextContext::new(Role::Client, &params)
    }
}

pub(crate) fn iv(streams: Vec<IntervalStream>) -> Interval {
    Interval { streams, ..Default::default() }
}

pub(crate) fn iv_sum(streams: Vec<IntervalStream>, sum: IntervalSum) -> Interval {
    Interval { streams, sum, sum_bidir_reverse: None }
}

pub(crate) fn iv_bidir(streams: Vec<IntervalStream>, sum: IntervalSum, reverse: IntervalSum) -> Interval {
    Interval { streams, sum, sum_bidir_reverse: Some(reverse) }
}

/// Everything a non-verbose client prints.
pub(crate) fn client_text(report: &TestReport, ctx: &TextContext) -> String {
    let mut s = preamble::render_client_preamble(&report.start, ctx, &VerboseExtras::default()).to_string();
    s.push_str(&render_intervals(&report.intervals, ctx));
    s.push_str(&render_summary(report, ctx));
    s.push_str(preamble::done());
    s
}

pub(crate) fn report(start: Start, intervals: Vec<Interval>, end: End) -> TestReport {
    TestReport { start, intervals, end, ..Default::default() }
}

fn tcp_default_report() -> TestReport {
    report(
        client_start(&[(5, 56646)]),
        vec![
            iv(vec![tx(5, (0.0, 1.0), "2.24G", "19.2G", 1, "2.00M")]),
            iv(vec![tx(5, (1.0, 2.0), "2.22G", "19.0G", 0, "2.12M")]),
        ],
        End {
            streams: vec![tcp_end(5, true, side_retr(2.0, "4.46G", "19.1G", 1), side(2.0, "4.46G", "19.1G"))],
            ..Default::default()
        },
    )
}

#[test]
fn tcp_default() {
    let c = ctx(Protocol::Tcp, 1, false, false);
    assert_eq!(client_text(&tcp_default_report(), &c), fixture("client_tcp_default.txt"));
}

#[test]
fn tcp_reverse() {
    let r = report(
        client_start(&[(5, 51132)]),
        vec![iv(vec![rx(5, (0.0, 1.0), "1.90G", "16.3G")]), iv(vec![rx(5, (1.0, 2.05), "1.54G", "12.6G")])],
        End {
            streams: vec![tcp_end(5, false, side_retr(2.05, "3.45G", "14.4G", 19), side(2.05, "3.44G", "14.4G"))],
            ..Default::default()
        },
    );
    let c = ctx(Protocol::Tcp, 1, true, false);
    assert_eq!(client_text(&r, &c), fixture("client_tcp_reverse.txt"));
}

#[test]
fn tcp_bidir() {
    let r = report(
        client_start(&[(5, 51152), (7, 51164)]),
        vec![
            iv(vec![tx(5, (0.0, 1.02), "869M", "7.11G", 19, "2.50M"), rx(7, (0.0, 1.02), "628M", "5.14G")]),
            iv(vec![tx(5, (1.02, 2.0), "1.08G", "9.48G", 1, "2.50M"), rx(7, (1.02, 2.0), "975M", "8.38G")]),
        ],
        End {
            streams: vec![
                tcp_end(5, true, side_retr(2.0, "1.93G", "8.26G", 20), side(2.0, "1.92G", "8.25G")),
                tcp_end(7, false, side_retr(2.0, "1.57G", "6.73G", 37), side(2.0, "1.56G", "6.71G")),
            ],
            ..Default::default()
        },
    );
    let c = ctx(Protocol::Tcp, 1, false, true);
    assert_eq!(client_text(&r, &c), fixture("client_tcp_bidir.txt"));
}

#[test]
fn tcp_parallel_2() {
    let r = report(
        client_start(&[(5, 51186), (7, 51188)]),
        vec![
            iv_sum(
                vec![tx(5, (0.0, 1.0), "1.15G", "9.84G", 9, "2.25M"), tx(7, (0.0, 1.0), "1.12G", "9.56G", 5, "1.75M")],
                sum_tx((0.0, 1.0), "2.27G", "19.4G", 14),
            ),
            iv_sum(
                vec![tx(5, (1.0, 2.0), "1.03G", "8.91G", 0, "2.75M"), tx(7, (1.0, 2.0), "1.01G", "8.72G", 0, "2.75M")],
                sum_tx((1.0, 2.0), "2.05G", "17.6G", 0),
            ),
        ],
        End {
            streams: vec![
                tcp_end(5, true, side_retr(2.0, "2.18G", "9.38G", 9), side(2.0, "2.18G", "9.37G")),
                tcp_end(7, true, side_retr(2.0, "2.13G", "9.14G", 5), side(2.0, "2.13G", "9.13G")),
            ],
            sum_sent: sum_side(side_retr(2.0, "4.31G", "18.5G", 14), true),
            sum_received: sum_side(side(2.0, "4.31G", "18.5G"), true),
            ..Default::default()
        },
    );
    let c = ctx(Protocol::Tcp, 2, false, false);
    assert_eq!(client_text(&r, &c), fixture("client_tcp_p2.txt"));
}

#[test]
fn tcp_bidir_parallel_2() {
    let r = report(
        client_start(&[(5, 60434), (7, 60442), (9, 60450), (12, 60452)]),
        vec![
            iv_bidir(
                vec![
                    tx(5, (0.0, 1.0), "932M", "7.81G", 0, "1023K"),
                    tx(7, (0.0, 1.0), "921M", "7.71G", 0, "2.25M"),
                    rx(9, (0.0, 1.0), "459M", "3.84G"),
                    rx(12, (0.0, 1.0), "485M", "4.06G"),
                ],
                sum_tx((0.0, 1.0), "1.81G", "15.5G", 0),
                sum_rx((0.0, 1.0), "944M", "7.91G"),
            ),
            iv_bidir(
                vec![
                    tx(5, (1.0, 2.0), "966M", "8.12G", 0, "895K"),
                    tx(7, (1.0, 2.0), "962M", "8.09G", 0, "767K"),
                    rx(9, (1.0, 2.0), "462M", "3.88G"),
                    rx(12, (1.0, 2.0), "487M", "4.09G"),
                ],
                sum_tx((1.0, 2.0), "1.88G", "16.2G", 0),
                sum_rx((1.0, 2.0), "949M", "7.98G"),
            ),
        ],
        End {
            streams: vec![
                tcp_end(5, true, side_retr(2.0, "1.85G", "7.96G", 0), side(2.0, "1.85G", "7.93G")),
                tcp_end(7, true, side_retr(2.0, "1.84G", "7.90G", 0), side(2.0, "1.84G", "7.87G")),
                tcp_end(9, false, side_retr(2.0, "925M", "3.88G", 3), side(2.0, "921M", "3.85G")),
                tcp_end(12, false, side_retr(2.0, "976M", "4.09G", 0), side(2.0, "972M", "4.07G")),
            ],
            sum_sent: sum_side(side_retr(2.0, "3.69G", "15.9G", 0), true),
            sum_received: sum_side(side(2.0, "3.69G", "15.8G"), true),
            sum_sent_bidir_reverse: sum_side(side_retr(2.0, "1.86G", "7.97G", 3), false),
            sum_received_bidir_reverse: sum_side(side(2.0, "1.85G", "7.92G"), false),
            ..Default::default()
        },
    );
    let c = ctx(Protocol::Tcp, 2, false, true);
    assert_eq!(client_text(&r, &c), fixture("client_tcp_bidir_p2.txt"));
}

#[test]
fn udp_100m_with_loss() {
    let r = report(
        client_start(&[(5, 50296)]),
        vec![iv(vec![utx(5, (0.0, 1.0), "11.9M", "100M", 382)]), iv(vec![utx(5, (1.0, 2.0), "11.9M", "99.9M", 381)])],
        End {
            streams: vec![udp_end(
                5,
                true,
                uside(2.0, "23.8M", "100M", 0.939, 30, 763),
                uside(2.0, "22.9M", "96.1M", 0.939, 30, 763),
            )],
            ..Default::default()
        },
    );
    let c = ctx(Protocol::Udp, 1, false, false);
    assert_eq!(client_text(&r, &c), fixture("client_udp_100m.txt"));
}

#[test]
fn udp_reverse() {
    let r = report(
        client_start(&[(5, 33608)]),
        vec![
            iv(vec![urx(5, (0.0, 1.0), "11.9M", "100M", 0.040, 0, 382)]),
            iv(vec![urx(5, (1.0, 2.0), "11.9M", "99.9M", 0.012, 0, 381)]),
        ],
        End {
            streams: vec![udp_end(
                5,
                false,
                uside(2.0, "23.8M", "100M", 0.012, 0, 763),
                uside(2.0, "23.8M", "100M", 0.012, 0, 763),
            )],
            ..Default::default()
        },
    );
    let c = ctx(Protocol::Udp, 1, true, false);
    assert_eq!(client_text(&r, &c), fixture("client_udp_reverse.txt"));
}

#[test]
fn udp_parallel_2() {
    let r = report(
        client_start(&[(5, 37646), (7, 34117)]),
        vec![
            iv_sum(
                vec![utx(5, (0.0, 1.0), "5.97M", "50.1M", 191), utx(7, (0.0, 1.0), "5.97M", "50.1M", 191)],
                usum_tx((0.0, 1.0), "11.9M", "100M", 382),
            ),
            iv_sum(
                vec![utx(5, (1.0, 2.0), "5.97M", "50.1M", 191), utx(7, (1.0, 2.0), "5.97M", "50.1M", 191)],
                usum_tx((1.0, 2.0), "11.9M", "100M", 382),
            ),
        ],
        End {
            streams: vec![
                udp_end(
                    5,
                    true,
                    uside(2.0, "11.9M", "50.1M", 0.030, 0, 382),
                    uside(2.01, "11.9M", "49.9M", 0.030, 0, 382),
                ),
                udp_end(
                    7,
                    true,
                    uside(2.0, "11.9M", "50.1M", 0.023, 0, 382),
                    uside(2.01, "11.9M", "49.9M", 0.023, 0, 382),
                ),
            ],
            sum_sent: sum_side(uside(2.0, "23.9M", "100M", 0.0, 0, 764), true),
            sum_received: sum_side(uside(2.01, "23.9M", "99.9M", 0.026, 0, 764), false),
            ..Default::default()
        },
    );
    let c = ctx(Protocol::Udp, 2, false, false);
    assert_eq!(client_text(&r, &c), fixture("client_udp_p2.txt"));
}

#[test]
fn udp_bidir() {
    let r = report(
        client_start(&[(5, 57115), (7, 43525)]),
        vec![
            iv(vec![utx(5, (0.0, 1.0), "1.22M", "10.2M", 39), urx(7, (0.0, 1.0), "1.22M", "10.2M", 0.015, 0, 39)]),
            iv(vec![utx(5, (1.0, 2.0), "1.19M", "9.96M", 38), urx(7, (1.0, 2.0), "1.19M", "9.96M", 0.022, 0, 38)]),
        ],
        End {
            streams: vec![
                udp_end(
                    5,
                    true,
                    uside(2.0, "2.41M", "10.1M", 0.018, 0, 77),
                    uside(2.0, "2.41M", "10.1M", 0.018, 0, 77),
                ),
                udp_end(
                    7,
                    false,
                    uside(2.0, "2.41M", "10.1M", 0.022, 0, 77),
                    uside(2.0, "2.41M", "10.1M", 0.022, 0, 77),
                ),
            ],
            ..Default::default()
        },
    );
    let c = ctx(Protocol::Udp, 1, false, true);
    assert_eq!(client_text(&r, &c), fixture("client_udp_bidir.txt"));
}
