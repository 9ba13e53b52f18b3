//! Server samples of iperf3 3.12 rebuilt from schema values, byte for byte. The server
//! prints only its own half of the summary.

use crate::support::build::*;
use crate::support::fixture;
use wireperf_protocol::schema::{End, Interval, IntervalStream, IntervalSum, Start, TestReport, TestStart, Timestamp};
use wireperf_protocol::{Protocol, TestParams};
use wireperf_report::text::preamble::{self, BANNER_RULE};
use wireperf_report::{Role, TextContext, render_intervals, render_summary};

fn ctx(protocol: Protocol, parallel: u32, reverse: bool, bidir: bool) -> TextContext {
    let params = TestParams { protocol, parallel, reverse, bidirectional: bidir, ..TestParams::default() };
    TextContext {
        local_has_retransmits: true,
        // Set to show the server ignores it (it prints before the results exchange).
        remote_sender_has_retransmits: true,
        ..TextContext::new(Role::Server, &params)
    }
}

fn iv(streams: Vec<IntervalStream>) -> Interval {
    Interval { streams, ..Default::default() }
}

fn iv_sum(streams: Vec<IntervalStream>, sum: IntervalSum) -> Interval {
    Interval { streams, sum, sum_bidir_reverse: None }
}

/// One server test: banner, accepted, connected, intervals, summary.
fn server_test(start: Start, intervals: Vec<Interval>, end: End, ctx: &TextContext, n: u32) -> String {
    server_test_on(5391, start, intervals, end, ctx, n)
}

fn server_test_on(port: u16, start: Start, intervals: Vec<Interval>, end: End, ctx: &TextContext, n: u32) -> String {
    let report = TestReport { start, intervals, end, ..Default::default() };
    let mut s = preamble::render_server_preamble(&report.start, ctx, port, n).to_string();
    s.push_str(&render_intervals(&report.intervals, ctx));
    s.push_str(&render_summary(&report, ctx));
    s
}

fn tcp_rx_end(id: i32, receiver: (f64, &str, &str)) -> wireperf_protocol::schema::EndStream {
    // What the server knows of the sender half before the exchange is not printed.
    tcp_end(id, false, side(0.0, "0", "0"), side(receiver.0, receiver.1, receiver.2))
}

fn tcp_tx_end(id: i32, sender: (f64, &str, &str, u64)) -> wireperf_protocol::schema::EndStream {
    tcp_end(id, true, side_retr(sender.0, sender.1, sender.2, sender.3), side(0.0, "0", "0"))
}

#[test]
fn eight_tests_in_sequence() {
    let tcp = ctx(Protocol::Tcp, 1, false, false);
    let mut out = String::new();
    // 1: plain TCP, the server receives; a short trailing slice that moved data is printed.
    out += &server_test(
        server_start(56634, &[(5, 56646)]),
        vec![
            iv(vec![rx(5, (0.0, 1.0), "2.24G", "19.2G")]),
            iv(vec![rx(5, (1.0, 2.0), "2.22G", "19.0G")]),
            iv(vec![rx(5, (2.0, 2.004), "1.00M", "18.0G")]),
        ],
        End { streams: vec![tcp_rx_end(5, (2.0, "4.46G", "19.1G"))], ..Default::default() },
        &tcp,
        1,
    );
    // 2: -i 1.
    out += &server_test(
        server_start(56662, &[(5, 56676)]),
        vec![
            iv(vec![rx(5, (0.0, 1.0), "2.09G", "17.9G")]),
            iv(vec![rx(5, (1.0, 2.0), "2.40G", "20.7G")]),
            iv(vec![rx(5, (2.0, 2.01), "11.1M", "10.5G")]),
        ],
        End { streams: vec![tcp_rx_end(5, (2.01, "4.50G", "19.2G"))], ..Default::default() },
        &tcp,
        2,
    );
    // 3: -R, the server sends.
    out += &server_test(
        server_start(51126, &[(5, 51132)]),
        vec![
            iv(vec![tx(5, (0.0, 1.0), "1.90G", "16.3G", 11, "895K")]),
            iv(vec![tx(5, (1.0, 2.0), "1.55G", "13.3G", 8, "1.25M")]),
            iv(vec![tx(5, (2.0, 2.05), "1.25M", "202M", 0, "2.25M")]),
        ],
        End { streams: vec![tcp_tx_end(5, (2.05, "3.45G", "14.4G", 19))], ..Default::default() },
        &ctx(Protocol::Tcp, 1, true, false),
        3,
    );
    // 4: --bidir: RX first on the server.
    out += &server_test(
        server_start(51140, &[(5, 51152), (8, 51164)]),
        vec![
            iv(vec![rx(5, (0.0, 1.0), "868M", "7.28G"), tx(8, (0.0, 1.0), "634M", "5.32G", 36, "767K")]),
            iv(vec![rx(5, (1.0, 2.0), "1.07G", "9.21G"), tx(8, (1.0, 2.0), "972M", "8.16G", 1, "1.87M")]),
            iv(vec![rx(5, (2.0, 2.003), "5.44M", "14.2G"), tx(8, (2.0, 2.003), "0", "0", 0, "1.87M")]),
        ],
        End {
            streams: vec![tcp_rx_end(5, (2.0, "1.92G", "8.25G")), tcp_tx_end(8, (2.0, "1.57G", "6.73G", 37))],
            ..Default::default()
        },
        &ctx(Protocol::Tcp, 1, false, true),
        4,
    );
    // 5: -P 2.
    out += &server_test(
        server_start(51172, &[(5, 51186), (8, 51188)]),
        vec![
            iv_sum(
                vec![rx(5, (0.0, 1.0), "1.15G", "9.81G"), rx(8, (0.0, 1.0), "1.11G", "9.54G")],
                sum_rx((0.0, 1.0), "2.26G", "19.4G"),
            ),
            iv_sum(
                vec![rx(5, (1.0, 2.0), "1.04G", "8.92G"), rx(8, (1.0, 2.0), "1.01G", "8.72G")],
                sum_rx((1.0, 2.0), "2.05G", "17.6G"),
            ),
        ],
        End {
            streams: vec![tcp_rx_end(5, (2.0, "2.18G", "9.37G")), tcp_rx_end(8, (2.0, "2.13G", "9.13G"))],
            sum_sent: sum_side(side(2.0, "0", "0"), false),
            sum_received: sum_side(side(2.0, "4.31G", "18.5G"), false),
            ..Default::default()
        },
        &ctx(Protocol::Tcp, 2, false, false),
        5,
    );
    // 6: -u, the server receives.
    out += &server_test(
        server_start(37308, &[(5, 50296)]),
        vec![
            iv(vec![urx(5, (0.0, 1.0), "11.9M", "100M", 0.007, 0, 382)]),
            iv(vec![urx(5, (1.0, 2.0), "11.0M", "92.0M", 0.939, 30, 381)]),
        ],
        End {
            streams: vec![udp_end(
                5,
                false,
                uside(2.0, "22.9M", "96.1M", 0.939, 30, 763),
                uside(2.0, "22.9M", "96.1M", 0.939, 30, 763),
            )],
            ..Default::default()
        },
        &ctx(Protocol::Udp, 1, false, false),
        6,
    );
    // 7: -u -R, the server sends.
    out += &server_test(
        server_start(37310, &[(5, 33608)]),
        vec![iv(vec![utx(5, (0.0, 1.0), "11.9M", "100M", 382)]), iv(vec![utx(5, (1.0, 2.0), "11.9M", "99.9M", 381)])],
        End {
            streams: vec![udp_end(
                5,
                true,
                uside(2.0, "23.8M", "100M", 0.0, 0, 763),
                uside(2.0, "23.8M", "100M", 0.0, 0, 763),
            )],
            ..Default::default()
        },
        &ctx(Protocol::Udp, 1, true, false),
        7,
    );
    // 8: the client ran -V; the server did not.
    out += &server_test(
        server_start(37324, &[(5, 37338)]),
        vec![
            iv(vec![rx(5, (0.0, 1.0), "2.30G", "19.7G")]),
            iv(vec![rx(5, (1.0, 2.0), "2.29G", "19.7G")]),
            iv(vec![rx(5, (2.0, 2.001), "4.12M", "11.4G")]),
        ],
        End { streams: vec![tcp_rx_end(5, (2.0, "4.59G", "19.7G"))], ..Default::default() },
        &tcp,
        8,
    );
    out += BANNER_RULE;
    assert_eq!(out, fixture("server_sequence.txt"));
}

#[test]
fn omit_on_the_server() {
    let out = server_test(
        server_start(37850, &[(5, 37862)]),
        vec![
            iv(vec![omitted(rx(5, (0.0, 1.0), "3.16G", "27.2G"))]),
            iv(vec![rx(5, (0.0, 1.0), "3.24G", "27.9G")]),
            iv(vec![rx(5, (1.0, 2.0), "3.14G", "27.0G")]),
            iv(vec![rx(5, (2.0, 2.002), "1.00M", "22.8G")]),
        ],
        End { streams: vec![tcp_rx_end(5, (2.0, "6.39G", "27.4G"))], ..Default::default() },
        &ctx(Protocol::Tcp, 1, false, false),
        12,
    ) + BANNER_RULE;
    // The captured excerpt starts at the banner's second line.
    assert_eq!(out, format!("{BANNER_RULE}{}", fixture("server_omit.txt")));
}

#[test]
fn udp_parallel_2_then_bidir_parallel_2() {
    let mut out = server_test(
        server_start(60412, &[(5, 37646), (6, 34117)]),
        vec![
            iv_sum(
                vec![
                    urx(5, (0.0, 1.0), "5.94M", "49.8M", 0.007, 0, 190),
                    urx(6, (0.0, 1.0), "5.94M", "49.8M", 0.007, 0, 190),
                ],
                usum_rx((0.0, 1.0), "11.9M", "99.6M", 0.007, 0, 380),
            ),
            iv_sum(
                vec![
                    urx(5, (1.0, 2.0), "5.97M", "50.1M", 0.032, 0, 191),
                    urx(6, (1.0, 2.0), "5.97M", "50.1M", 0.024, 0, 191),
                ],
                usum_rx((1.0, 2.0), "11.9M", "100M", 0.028, 0, 382),
            ),
            iv_sum(
                vec![
                    urx(5, (2.0, 2.01), "32.0K", "46.2M", 0.030, 0, 1),
                    urx(6, (2.0, 2.01), "32.0K", "46.2M", 0.023, 0, 1),
                ],
                usum_rx((2.0, 2.01), "64.0K", "92.5M", 0.026, 0, 2),
            ),
        ],
        End {
            streams: vec![
                udp_end(
                    5,
                    false,
                    uside(2.01, "11.9M", "49.9M", 0.030, 0, 382),
                    uside(2.01, "11.9M", "49.9M", 0.030, 0, 382),
                ),
                udp_end(
                    6,
                    false,
                    uside(2.01, "11.9M", "49.9M", 0.023, 0, 382),
                    uside(2.01, "11.9M", "49.9M", 0.023, 0, 382),
                ),
            ],
            sum_sent: sum_side(uside(2.01, "23.9M", "99.9M", 0.0, 0, 764), true),
            sum_received: sum_side(uside(2.01, "23.9M", "99.9M", 0.026, 0, 764), false),
            ..Default::default()
        },
        &ctx(Protocol::Udp, 2, false, false),
        23,
    );
    let bidir = ctx(Protocol::Tcp, 2, false, true);
    out += &server_test(
        server_start(60418, &[(5, 60434), (8, 60442), (11, 60450), (13, 60452)]),
        vec![
            Interval {
                streams: vec![
                    rx(5, (0.0, 1.0), "929M", "7.78G"),
                    rx(8, (0.0, 1.0), "918M", "7.69G"),
                    tx(11, (0.0, 1.0), "462M", "3.87G", 2, "1023K"),
                    tx(13, (0.0, 1.0), "490M", "4.11G", 0, "1023K"),
                ],
                sum: sum_rx((0.0, 1.0), "1.80G", "15.5G"),
                sum_bidir_reverse: Some(sum_tx((0.0, 1.0), "952M", "7.98G", 2)),
            },
            Interval {
                streams: vec![
                    rx(5, (1.0, 2.0), "966M", "8.08G"),
                    rx(8, (1.0, 2.0), "963M", "8.05G"),
                    tx(11, (1.0, 2.0), "462M", "3.87G", 1, "1023K"),
                    tx(13, (1.0, 2.0), "486M", "4.06G", 0, "1023K"),
                ],
                sum: sum_rx((1.0, 2.0), "1.88G", "16.1G"),
                sum_bidir_reverse: Some(sum_tx((1.0, 2.0), "949M", "7.93G", 1)),
            },
        ],
        End {
            streams: vec![
                tcp_rx_end(5, (2.0, "1.85G", "7.93G")),
                tcp_rx_end(8, (2.0, "1.84G", "7.87G")),
                tcp_tx_end(11, (2.0, "925M", "3.87G", 3)),
                tcp_tx_end(13, (2.0, "976M", "4.09G", 0)),
            ],
            sum_sent: sum_side(side(2.0, "0", "0"), false),
            sum_received: sum_side(side(2.0, "3.69G", "15.8G"), false),
            sum_sent_bidir_reverse: sum_side(side_retr(2.0, "1.86G", "7.96G", 3), true),
            sum_received_bidir_reverse: sum_side(side(2.0, "0", "0"), true),
            ..Default::default()
        },
        &bidir,
        24,
    );
    out += BANNER_RULE;
    assert_eq!(out, format!("{BANNER_RULE}{}", fixture("server_udp_p2_and_bidir_p2.txt")));
}

#[test]
fn verbose_udp_server_says_sender_statistics_not_available() {
    let c = TextContext { verbose: true, ..ctx(Protocol::Udp, 1, false, false) };
    let start = Start {
        version: "iperf 3.12".into(),
        system_info: "Linux vm 6.18.44-fc-v509 #1 SMP PREEMPT_DYNAMIC @0 x86_64".into(),
        timestamp: Some(Timestamp { time: "Sun, 29 Nov 2026 18:04:36 GMT".into(), timesecs: 0, timemillisecs: None }),
        cookie: Some("fr6thsyjjokmuhbf2vbw7jia7nwib34iqxgy".into()),
        target_bitrate: Some(10_000_000),
        test_start: Some(TestStart {
            protocol: "UDP".into(),
            num_streams: 1,
            blksize: 32768,
            duration: 2,
            target_bitrate: 10_000_000,
            ..TestStart::default()
        }),
        ..server_start(37132, &[(5, 35544)])
    };
    let mut start = start;
    start.connected[0].local_port = 5393;
    let mut out = preamble::version_block(&start.version, &start.system_info).to_string();
    out += &server_test_on(
        5393,
        start,
        vec![
            iv(vec![urx(5, (0.0, 1.0), "1.22M", "10.2M", 0.015, 0, 39)]),
            iv(vec![urx(5, (1.0, 2.0), "1.19M", "9.96M", 0.020, 0, 38)]),
        ],
        End {
            streams: vec![udp_end(
                5,
                false,
                uside(2.0, "2.41M", "10.1M", 0.020, 0, 77),
                uside(2.0, "2.41M", "10.1M", 0.020, 0, 77),
            )],
            ..Default::default()
        },
        &c,
        1,
    );
    assert_eq!(out, fixture("server_udp_verbose.txt"));
}
