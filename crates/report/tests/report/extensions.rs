//! Summary behaviours no captured sample shows: iperf3's out-of-order line, the server's
//! `-V` "not available" lines for TCP, where `--get-server-output` lands in `--bidir`, and
//! wireperf's own UDP loss-split line.

use crate::support::build::*;
use wireperf_protocol::schema::{End, TestReport};
use wireperf_protocol::{Protocol, TestParams};
use wireperf_report::{Role, TextContext, render_summary};

fn ctx(role: Role, protocol: Protocol, parallel: u32, bidir: bool) -> TextContext {
    let params = TestParams { protocol, parallel, bidirectional: bidir, ..TestParams::default() };
    TextContext { local_has_retransmits: true, remote_sender_has_retransmits: true, ..TextContext::new(role, &params) }
}

fn summary(end: End, ctx: &TextContext) -> String {
    render_summary(&TestReport { end, ..Default::default() }, ctx)
}

#[test]
fn udp_receiver_with_out_of_order_and_socket_drops() {
    let mut sender = uside(2.0, "23.8M", "100M", 0.939, 42, 763);
    sender.out_of_order = Some(4);
    let mut receiver = uside(2.0, "22.9M", "96.1M", 0.939, 42, 763);
    receiver.receiver_socket_drops = Some(30);
    let end = End { streams: vec![udp_end(5, false, sender, receiver)], ..Default::default() };
    let mut c = ctx(Role::Client, Protocol::Udp, 1, false);
    c.reverse = true;
    assert_eq!(
        summary(end, &c),
        "- - - - - - - - - - - - - - - - - - - - - - - - -\n\
[ ID] Interval           Transfer     Bitrate         Jitter    Lost/Total Datagrams\n\
[  5]   0.00-2.00   sec  23.8 MBytes   100 Mbits/sec  0.000 ms  0/763 (0%)  sender\n\
[SUM]  0.0- 2.0 sec  4 datagrams received out-of-order\n\
[  5]   0.00-2.00   sec  22.9 MBytes  96.1 Mbits/sec  0.939 ms  42/763 (5.5%)  receiver\n\
[  5] loss split: 12 lost on the path, 30 dropped by the receiving socket (raise -w or lower -b)\n"
    );
}

#[test]
fn no_loss_split_line_without_the_data() {
    let end = End {
        streams: vec![udp_end(5, true, uside(2.0, "1M", "4M", 0.0, 3, 100), uside(2.0, "1M", "4M", 0.1, 3, 100))],
        ..Default::default()
    };
    let text = summary(end, &ctx(Role::Client, Protocol::Udp, 1, false));
    assert!(!text.contains("loss split"), "{text}");
    assert!(text.contains("3/100 (3%)  receiver\n"), "{text}");
}

#[test]
fn verbose_tcp_server_marks_the_missing_half() {
    let end = End {
        streams: vec![
            tcp_end(5, false, side(2.0, "0", "0"), side(2.0, "1G", "4G")),
            tcp_end(8, false, side(2.0, "0", "0"), side(2.0, "1G", "4G")),
        ],
        sum_sent: sum_side(side(2.0, "0", "0"), false),
        sum_received: sum_side(side(2.0, "2G", "8G"), false),
        receiver_tcp_congestion: Some("cubic".into()),
        ..Default::default()
    };
    let c = TextContext { verbose: true, ..ctx(Role::Server, Protocol::Tcp, 2, false) };
    assert_eq!(
        summary(end, &c),
        "- - - - - - - - - - - - - - - - - - - - - - - - -\n\
Test Complete. Summary Results:\n\
[ ID] Interval           Transfer     Bitrate\n\
[  5] (sender statistics not available)\n\
[  5]   0.00-2.00   sec  1.00 GBytes  4.00 Gbits/sec                  receiver\n\
[  8] (sender statistics not available)\n\
[  8]   0.00-2.00   sec  1.00 GBytes  4.00 Gbits/sec                  receiver\n\
[SUM] (sender statistics not available)\n\
[SUM]   0.00-2.00   sec  2.00 GBytes  8.00 Gbits/sec                  receiver\n\
rcv_tcp_congestion cubic\n"
    );
}

#[test]
fn bidir_server_output_follows_the_first_block() {
    let end = End {
        streams: vec![
            tcp_end(5, true, side_retr(1.0, "1G", "8G", 0), side(1.0, "1G", "8G")),
            tcp_end(7, false, side_retr(1.0, "1G", "8G", 0), side(1.0, "1G", "8G")),
        ],
        ..Default::default()
    };
    let report = TestReport { end, server_output_text: Some("server says hi\n".into()), ..Default::default() };
    let text = render_summary(&report, &ctx(Role::Client, Protocol::Tcp, 1, true));
    let tx = text.find("[TX-C]").expect("tx block");
    let so = text.find("Server output:").expect("server output");
    let rx = text.find("[RX-C]").expect("rx block");
    assert!(tx < so && so < rx, "{text}");
}
