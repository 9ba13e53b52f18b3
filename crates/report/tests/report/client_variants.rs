//! Client samples of iperf3 3.12 rebuilt from schema values, byte for byte: `-V` (TCP, UDP,
//! `-R`, `--bidir`), `-f m`, `-T`, `--timestamps`, `-O`, `-n`, `--get-server-output`, small
//! units and two-digit seconds.

use crate::client_text::{client_text, ctx, iv, iv_sum, report};
use crate::support::build::*;
use crate::support::fixture;
use wireperf_protocol::Protocol;
use wireperf_protocol::schema::{CpuUtilization, End, Start, TestReport, TestStart, Timestamp};
use wireperf_report::text::preamble::{self, VerboseExtras};
use wireperf_report::{
    TextContext, prefix_lines, render_interval, render_intervals, render_summary, render_summary_calls,
};

const SYSTEM: &str = "Linux vm 6.18.44-fc-v509 #1 SMP PREEMPT_DYNAMIC @0 x86_64";

fn verbose_start(streams: &[(i32, u16)], cookie: &str, time: &str, t: TestStart) -> Start {
    Start {
        version: "iperf 3.12".into(),
        system_info: SYSTEM.into(),
        timestamp: Some(Timestamp { time: time.into(), timesecs: 0, timemillisecs: None }),
        cookie: Some(cookie.into()),
        test_start: Some(t),
        ..client_start(streams)
    }
}

fn test_start(protocol: &str, blksize: u32, duration: u32) -> TestStart {
    TestStart { protocol: protocol.into(), num_streams: 1, blksize, duration, ..TestStart::default() }
}

fn verbose_client_text(report: &TestReport, ctx: &TextContext, extras: &VerboseExtras) -> String {
    let mut s = preamble::render_client_preamble(&report.start, ctx, extras).to_string();
    s.push_str(&render_intervals(&report.intervals, ctx));
    s.push_str(&render_summary(report, ctx));
    s.push_str(preamble::done());
    s
}

fn cpu(l: [f64; 3], r: [f64; 3]) -> Option<CpuUtilization> {
    Some(CpuUtilization {
        host_total: l[0],
        host_user: l[1],
        host_system: l[2],
        remote_total: r[0],
        remote_user: r[1],
        remote_system: r[2],
    })
}

#[test]
fn tcp_verbose() {
    let mut start = verbose_start(
        &[(5, 37338)],
        "z6kid4bosk73gsmpsosrpir2bavfwsqqbsg2",
        "Sun, 29 Nov 2026 18:00:20 GMT",
        test_start("TCP", 131072, 2),
    );
    start.tcp_mss_default = Some(32768);
    let r = report(
        start,
        vec![
            iv(vec![tx(5, (0.0, 1.0), "2.30G", "19.7G", 4, "2.12M")]),
            iv(vec![tx(5, (1.0, 2.0), "2.29G", "19.7G", 1, "2.62M")]),
        ],
        End {
            streams: vec![tcp_end(5, true, side_retr(2.0, "4.59G", "19.7G", 5), side(2.0, "4.59G", "19.7G"))],
            cpu_utilization_percent: cpu([36.6, 0.3, 36.3], [35.2, 2.2, 32.9]),
            sender_tcp_congestion: Some("bbr".into()),
            receiver_tcp_congestion: Some("bbr".into()),
            ..Default::default()
        },
    );
    let c = TextContext { verbose: true, ..ctx(Protocol::Tcp, 1, false, false) };
    let extras = VerboseExtras { control_mss: Some(32768), udp_block_size_chosen: None };
    assert_eq!(verbose_client_text(&r, &c, &extras), fixture("client_tcp_verbose.txt"));
}

#[test]
fn udp_verbose() {
    let mut start = verbose_start(
        &[(5, 46533)],
        "afgsyiem6bhqb7jdkr5cssblv7gsigq4yrin",
        "Sun, 29 Nov 2026 18:01:14 GMT",
        test_start("UDP", 32768, 2),
    );
    start.target_bitrate = Some(10_000_000);
    let r = report(
        start,
        vec![iv(vec![utx(5, (0.0, 1.0), "1.22M", "10.2M", 39)]), iv(vec![utx(5, (1.0, 2.0), "1.19M", "9.96M", 38)])],
        End {
            streams: vec![udp_end(
                5,
                true,
                uside(2.0, "2.41M", "10.1M", 0.038, 0, 77),
                uside(2.0, "2.41M", "10.1M", 0.038, 0, 77),
            )],
            cpu_utilization_percent: cpu([1.8, 0.0, 1.8], [0.2, 0.0, 0.2]),
            ..Default::default()
        },
    );
    let c = TextContext { verbose: true, ..ctx(Protocol::Udp, 1, false, false) };
    let extras = VerboseExtras { control_mss: Some(32768), udp_block_size_chosen: Some(32768) };
    assert_eq!(verbose_client_text(&r, &c, &extras), fixture("client_udp_verbose.txt"));
}

#[test]
fn tcp_verbose_reverse_has_no_cpu_line() {
    let mut start = verbose_start(
        &[(5, 39286)],
        "zmv25fryjrsdiq3sxmlquxop2e7uzzbpdh7u",
        "Sun, 29 Nov 2026 18:01:16 GMT",
        test_start("TCP", 131072, 2),
    );
    start.tcp_mss_default = Some(32768);
    let c = TextContext { verbose: true, ..ctx(Protocol::Tcp, 1, true, false) };
    let (snd, rcv) = wireperf_report::text::summary::congestion_keys(&c, Some("bbr"), Some("bbr"));
    let r = report(
        start,
        vec![iv(vec![rx(5, (0.0, 1.0), "1.88G", "16.1G")]), iv(vec![rx(5, (1.0, 2.0), "1.59G", "13.7G")])],
        End {
            streams: vec![tcp_end(5, false, side_retr(2.0, "3.47G", "14.9G", 6), side(2.0, "3.47G", "14.9G"))],
            cpu_utilization_percent: cpu([1.0, 0.5, 0.5], [2.0, 1.0, 1.0]),
            sender_tcp_congestion: snd.map(str::to_string),
            receiver_tcp_congestion: rcv.map(str::to_string),
            ..Default::default()
        },
    );
    let extras = VerboseExtras { control_mss: Some(32768), udp_block_size_chosen: None };
    assert_eq!(verbose_client_text(&r, &c, &extras), fixture("client_tcp_verbose_reverse.txt"));
}

#[test]
fn tcp_bidir_verbose_cpu_and_congestion_between_blocks() {
    let mut start = verbose_start(
        &[(5, 52042), (7, 52046)],
        "ezmhutioiuej44bpy7fb2i7e7lmlu7qolxcr",
        "Sun, 29 Nov 2026 18:09:42 GMT",
        test_start("TCP", 131072, 1),
    );
    start.tcp_mss_default = Some(32768);
    let c = TextContext { verbose: true, ..ctx(Protocol::Tcp, 1, false, true) };
    let r = report(
        start,
        vec![iv(vec![tx(5, (0.0, 1.0), "1.87G", "16.1G", 0, "2.00M"), rx(7, (0.0, 1.0), "1.48G", "12.7G")])],
        End {
            streams: vec![
                tcp_end(5, true, side_retr(1.0, "1.87G", "16.1G", 0), side(1.0, "1.87G", "16.0G")),
                tcp_end(7, false, side_retr(1.0, "1.49G", "12.8G", 0), side(1.0, "1.48G", "12.7G")),
            ],
            cpu_utilization_percent: cpu([50.5, 0.7, 49.8], [46.7, 0.4, 46.3]),
            sender_tcp_congestion: Some("bbr".into()),
            receiver_tcp_congestion: Some("bbr".into()),
            ..Default::default()
        },
    );
    let extras = VerboseExtras { control_mss: Some(32768), udp_block_size_chosen: None };
    assert_eq!(verbose_client_text(&r, &c, &extras), fixture("client_tcp_bidir_verbose.txt"));
}

#[test]
fn format_m_widens_the_rate_column() {
    let r = report(
        client_start(&[(5, 37358)]),
        vec![
            iv(vec![tx(5, (0.0, 1.0), "2.77G", "23767M", 1, "767K")]),
            iv(vec![tx(5, (1.0, 2.0), "2.16G", "18601M", 4, "3.25M")]),
        ],
        End {
            streams: vec![tcp_end(5, true, side_retr(2.0, "4.93G", "21185M", 5), side(2.0, "4.93G", "21167M"))],
            ..Default::default()
        },
    );
    let c = TextContext { format: 'm', ..ctx(Protocol::Tcp, 1, false, false) };
    assert_eq!(client_text(&r, &c), fixture("client_tcp_format_m.txt"));
}

fn title_report() -> TestReport {
    report(
        client_start(&[(5, 37816)]),
        vec![
            iv(vec![tx(5, (0.0, 1.0), "2.26G", "19.4G", 8, "3.37M")]),
            iv(vec![tx(5, (1.0, 2.0), "3.02G", "26.0G", 0, "2.87M")]),
        ],
        End {
            streams: vec![tcp_end(5, true, side_retr(2.0, "5.28G", "22.7G", 8), side(2.0, "5.28G", "22.7G"))],
            ..Default::default()
        },
    )
}

#[test]
fn title_prefixes_every_line() {
    let c = ctx(Protocol::Tcp, 1, false, false);
    let text = client_text(&title_report(), &c);
    assert_eq!(prefix_lines(&text, None, Some("title")), fixture("client_tcp_title.txt"));
}

#[test]
fn timestamps_prefix_every_line() {
    let c = ctx(Protocol::Tcp, 1, false, false);
    let r = report(
        client_start(&[(5, 37842)]),
        vec![
            iv(vec![tx(5, (0.0, 1.0), "2.22G", "19.1G", 11, "2.87M")]),
            iv(vec![tx(5, (1.0, 2.0), "2.72G", "23.3G", 11, "1023K")]),
        ],
        End {
            streams: vec![tcp_end(5, true, side_retr(2.0, "4.94G", "21.2G", 22), side(2.0, "4.94G", "21.2G"))],
            ..Default::default()
        },
    );
    let t29 = Some("Sun Nov 29 18:00:29 2026 ");
    let t30 = Some("Sun Nov 29 18:00:30 2026 ");
    let t31 = Some("Sun Nov 29 18:00:31 2026 ");
    let pre = preamble::render_client_preamble(&r.start, &c, &VerboseExtras::default());
    let mut text = pre.prefixed(t29, None);
    text.push_str(&prefix_lines(&render_interval(&r.intervals[0], &c, true), t30, None));
    text.push_str(&prefix_lines(&render_interval(&r.intervals[1], &c, false), t31, None));
    text.push_str(&render_summary_calls(&r, &c).prefixed(t31, None));
    text.push_str(&prefix_lines(preamble::done(), t31, None));
    assert_eq!(text, fixture("client_tcp_timestamps.txt"));
}

#[test]
fn omit_flag_and_header_once() {
    let r = report(
        client_start(&[(5, 37862)]),
        vec![
            iv(vec![omitted(tx(5, (0.0, 1.0), "3.17G", "27.2G", 0, "895K"))]),
            iv(vec![tx(5, (0.0, 1.0), "3.24G", "27.8G", 0, "895K")]),
            iv(vec![tx(5, (1.0, 2.0), "3.14G", "27.0G", 0, "895K")]),
        ],
        End {
            streams: vec![tcp_end(5, true, side_retr(2.0, "6.39G", "27.4G", 0), side(2.0, "6.39G", "27.4G"))],
            ..Default::default()
        },
    );
    let c = ctx(Protocol::Tcp, 1, false, false);
    assert_eq!(client_text(&r, &c), fixture("client_tcp_omit.txt"));
}

#[test]
fn omit_with_two_streams_flags_the_sum_too() {
    let r = report(
        client_start(&[(5, 43156), (7, 43172)]),
        vec![
            iv_sum(
                vec![
                    omitted(tx(5, (0.0, 1.0), "1.62G", "13.9G", 6, "895K")),
                    omitted(tx(7, (0.0, 1.0), "1.62G", "13.9G", 10, "895K")),
                ],
                sum_omitted(sum_tx((0.0, 1.0), "3.23G", "27.8G", 16)),
            ),
            iv_sum(
                vec![tx(5, (0.0, 1.0), "1.86G", "16.0G", 2, "895K"), tx(7, (0.0, 1.0), "1.86G", "16.0G", 0, "895K")],
                sum_tx((0.0, 1.0), "3.73G", "32.0G", 2),
            ),
            iv_sum(
                vec![tx(5, (1.0, 2.0), "1.37G", "11.8G", 4, "1.37M"), tx(7, (1.0, 2.0), "1.37G", "11.8G", 0, "1.50M")],
                sum_tx((1.0, 2.0), "2.75G", "23.6G", 4),
            ),
        ],
        End {
            streams: vec![
                tcp_end(5, true, side_retr(2.0, "3.24G", "13.9G", 6), side(2.0, "3.24G", "13.9G")),
                tcp_end(7, true, side_retr(2.0, "3.24G", "13.9G", 0), side(2.0, "3.24G", "13.9G")),
            ],
            sum_sent: sum_side(side_retr(2.0, "6.47G", "27.8G", 6), true),
            sum_received: sum_side(side(2.0, "6.48G", "27.8G"), true),
            ..Default::default()
        },
    );
    let c = ctx(Protocol::Tcp, 2, false, false);
    assert_eq!(client_text(&r, &c), fixture("client_tcp_omit_p2.txt"));
}

#[test]
fn bytes_limited_test() {
    let r = report(
        client_start(&[(5, 35818)]),
        vec![iv(vec![tx(5, (0.0, 0.01), "20.0M", "22.4G", 0, "767K")])],
        End {
            streams: vec![tcp_end(5, true, side_retr(0.01, "20.0M", "22.4G", 0), side(0.01, "17.8M", "17.4G"))],
            ..Default::default()
        },
    );
    let c = ctx(Protocol::Tcp, 1, false, false);
    assert_eq!(client_text(&r, &c), fixture("client_tcp_bytes.txt"));
}

#[test]
fn server_output_block() {
    let server_text = "Accepted connection from 127.0.0.1, port 35828\n\
[  5] local 127.0.0.1 port 5391 connected to 127.0.0.1 port 35834\n\
[ ID] Interval           Transfer     Bitrate\n\
[  5]   0.00-1.00   sec  3.03 GBytes  26.0 Gbits/sec                  \n\
[  5]   1.00-2.00   sec  3.04 GBytes  26.1 Gbits/sec                  \n\
[  5]   2.00-2.00   sec  1.00 MBytes  21.8 Gbits/sec                  \n\
- - - - - - - - - - - - - - - - - - - - - - - - -\n\
[ ID] Interval           Transfer     Bitrate\n\
[  5]   0.00-2.00   sec  6.07 GBytes  26.1 Gbits/sec                  receiver\n";
    let mut r = report(
        client_start(&[(5, 35834)]),
        vec![
            iv(vec![tx(5, (0.0, 1.0), "3.03G", "26.0G", 0, "1.75M")]),
            iv(vec![tx(5, (1.0, 2.0), "3.05G", "26.2G", 0, "1023K")]),
        ],
        End {
            streams: vec![tcp_end(5, true, side_retr(2.0, "6.08G", "26.1G", 0), side(2.0, "6.07G", "26.1G"))],
            ..Default::default()
        },
    );
    r.server_output_text = Some(server_text.into());
    let c = ctx(Protocol::Tcp, 1, false, false);
    assert_eq!(client_text(&r, &c), fixture("client_tcp_server_output.txt"));
    // With -T, the block is one printing call: only its first (blank) line is prefixed.
    let calls = render_summary_calls(&r, &c).prefixed(None, Some("t"));
    assert!(calls.ends_with("t:  \nServer output:\nAccepted connection from 127.0.0.1, port 35828\n[  5] local 127.0.0.1 port 5391 connected to 127.0.0.1 port 35834\n[ ID] Interval           Transfer     Bitrate\n[  5]   0.00-1.00   sec  3.03 GBytes  26.0 Gbits/sec                  \n[  5]   1.00-2.00   sec  3.04 GBytes  26.1 Gbits/sec                  \n[  5]   2.00-2.00   sec  1.00 MBytes  21.8 Gbits/sec                  \n- - - - - - - - - - - - - - - - - - - - - - - - -\n[ ID] Interval           Transfer     Bitrate\n[  5]   0.00-2.00   sec  6.07 GBytes  26.1 Gbits/sec                  receiver\n\n"), "{calls}");
}

#[test]
fn udp_small_units() {
    let r = report(
        client_start(&[(5, 58078)]),
        vec![iv(vec![utx(5, (0.0, 1.0), "12.7K", "104K", 13)]), iv(vec![utx(5, (1.0, 2.0), "11.7K", "96.0K", 12)])],
        End {
            streams: vec![udp_end(
                5,
                true,
                uside(2.0, "24.4K", "100K", 0.328, 0, 25),
                uside(2.0, "24.4K", "100K", 0.328, 0, 25),
            )],
            ..Default::default()
        },
    );
    let c = ctx(Protocol::Udp, 1, false, false);
    assert_eq!(client_text(&r, &c), fixture("client_udp_small.txt"));
}

#[test]
fn two_digit_seconds() {
    let r = report(
        client_start(&[(5, 33142)]),
        vec![
            iv(vec![tx(5, (0.0, 5.0), "18.2G", "31.2G", 50, "1023K")]),
            iv(vec![tx(5, (5.0, 10.0), "22.4G", "38.4G", 78, "895K")]),
            iv(vec![tx(5, (10.0, 11.0), "4.33G", "37.2G", 11, "1023K")]),
        ],
        End {
            streams: vec![tcp_end(5, true, side_retr(11.0, "44.9G", "35.0G", 139), side(11.0, "44.9G", "35.0G"))],
            ..Default::default()
        },
    );
    let c = ctx(Protocol::Tcp, 1, false, false);
    assert_eq!(client_text(&r, &c), fixture("client_tcp_two_digit.txt"));
}
