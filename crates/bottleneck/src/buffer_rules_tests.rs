//! The buffer rules on made-up series: each fix is the doctor's remedy for that host's own
//! buffer.

use crate::diagnosis::{Hosts, RoundTrips, Side, ids};
use crate::live_rules::diagnose;
use crate::live_rules_tests::{idle, series, tcp_up};

#[test]
fn small_receive_buffer_is_receiver_window() {
    let c = series(2.0, &idle(2), &[], &[]);
    let mut d = tcp_up(40e6);
    d.rwnd_limited_us = Some(1_800_000);
    let v = diagnose(&d, Hosts { client: Some(&c), server: None });
    assert_eq!(v.main.limit, ids::RECEIVER_WINDOW);
    assert_eq!(v.main.side, Side::Server);
    assert!(v.main.fix.iter().any(|f| f.contains("tcp_rmem")) && v.main.fix.iter().any(|f| f.contains("-w")));
    // The server was not watched: its tcp_rmem is unknown, the remedy is the kernel's default.
    assert_eq!(v.main.fix[0], "on the server: sudo sysctl -w net.ipv4.tcp_rmem='4096 131072 6291456'");
}

#[test]
fn the_receiver_window_fix_is_the_doctors_remedy_for_the_receivers_own_tcp_rmem() {
    use wireperf_doctor::remedy;
    let c = series(2.0, &idle(2), &[], &[]);
    let mut s = series(2.0, &idle(2), &[], &[]);
    s.facts.sysctls.insert("net.ipv4.tcp_rmem".into(), "4096 8192 8192".into());
    let mut d = tcp_up(400e6);
    d.rwnd_limited_us = Some(1_800_000);
    // 400 Mbit/s × 20 ms (the sender's mean RTT; its minimum is only the fallback) = 1 MB.
    d.round_trips = RoundTrips { tcp_mean_rtt_us: Some(20_000), tcp_min_rtt_us: Some(1_000), ..Default::default() };
    let v = diagnose(&d, Hosts { client: Some(&c), server: Some(&s) });
    assert_eq!((v.main.limit.as_str(), v.main.side), (ids::RECEIVER_WINDOW, Side::Server), "{v:?}");
    let want = remedy::receive_buffer(remedy::triple("4096 8192 8192"), Some(1_000_000)).expect("a remedy");
    assert_eq!(v.main.fix[0], format!("on the server: {}", want.commands[0]));
    assert_eq!(v.main.fix[0], "on the server: sudo sysctl -w net.ipv4.tcp_rmem='4096 131072 6291456'");
    assert_eq!(v.main.fix.iter().filter(|f| f.contains("on the server: on the server")).count(), 0, "{:?}", v.main.fix);
    // Without the mean the minimum is used: 400 Mbit/s × 100 ms = 5 MB → 32 MiB.
    d.round_trips = RoundTrips { tcp_min_rtt_us: Some(100_000), ..Default::default() };
    let v = diagnose(&d, Hosts { client: Some(&c), server: Some(&s) });
    assert_eq!(v.main.fix[0], "on the server: sudo sysctl -w net.ipv4.tcp_rmem='4096 131072 33554432'");
    // A receiver whose buffer already holds it keeps only the -w advice.
    s.facts.sysctls.insert("net.ipv4.tcp_rmem".into(), "4096 131072 67108864".into());
    let v = diagnose(&d, Hosts { client: Some(&c), server: Some(&s) });
    assert_eq!(v.main.limit, ids::RECEIVER_WINDOW);
    assert!(!v.main.fix.iter().any(|f| f.contains("sysctl")), "{:?}", v.main.fix);
    assert_eq!(v.main.fix[0], "on the server: ask for a larger window: -w 4M");
}

#[test]
fn the_sender_buffer_fix_is_the_doctors_remedy_for_the_senders_own_tcp_wmem() {
    use wireperf_doctor::remedy;
    let mut c = series(2.0, &idle(2), &[], &[]);
    c.facts.sysctls.insert("net.ipv4.tcp_wmem".into(), "4096 16384 1048576".into());
    let mut d = tcp_up(400e6);
    d.sndbuf_limited_us = Some(1_800_000);
    d.round_trips = RoundTrips { tcp_mean_rtt_us: Some(100_000), ..Default::default() };
    let v = diagnose(&d, Hosts { client: Some(&c), server: None });
    assert_eq!((v.main.limit.as_str(), v.main.side), (ids::SENDER_BUFFER, Side::Client), "{v:?}");
    let want = remedy::send_buffer(remedy::triple("4096 16384 1048576"), Some(5_000_000)).expect("a remedy");
    assert_eq!(v.main.fix[0], format!("on the client: {}", want.commands[0]));
    assert_eq!(v.main.fix[0], "on the client: sudo sysctl -w net.ipv4.tcp_wmem='4096 16384 33554432'");
}

/// Issue 45: a client with tcp_wmem "4096 8192 8192" moved 12.7 Gbit/s at 25 µs (40 kB in
/// flight) where the download moved 32, and TCP_INFO counted no send-buffer-limited time: the
/// sender waited in poll, not in sendmsg. The buffer's maximum against the flight names it.
#[test]
fn a_send_buffer_smaller_than_the_flight_is_sender_buffer_without_sndbuf_limited_time() {
    use wireperf_doctor::remedy;
    let mut c = series(2.0, &idle(2), &[], &[]);
    c.facts.sysctls.insert("net.ipv4.tcp_wmem".into(), "4096\t8192\t8192".into());
    // A veth: no line rate to be judged against.
    (c.facts.link_mbps, c.facts.goodput_tcp_bps) = (None, None);
    let mut d = tcp_up(12.7e9);
    d.sndbuf_limited_us = Some(0);
    d.rwnd_limited_us = Some(0);
    d.round_trips = RoundTrips { tcp_mean_rtt_us: Some(25), ..Default::default() };
    let v = diagnose(&d, Hosts { client: Some(&c), server: None });
    assert_eq!((v.main.limit.as_str(), v.main.side), (ids::SENDER_BUFFER, Side::Client), "{v:?}");
    assert!(
        v.main.evidence[0].contains("8192 bytes (net.ipv4.tcp_wmem max), under twice the 39.7 kB"),
        "{:?}",
        v.main.evidence
    );
    let want = remedy::send_buffer(Some([4096, 8192, 8192]), Some(39_687)).expect("a remedy");
    assert_eq!(v.main.fix[0], format!("on the client: {}", want.commands[0]));
    // The kernel's default maximum holds a LAN's flight many times over: silent.
    c.facts.sysctls.insert("net.ipv4.tcp_wmem".into(), "4096 16384 4194304".into());
    let v = diagnose(&d, Hosts { client: Some(&c), server: None });
    assert_ne!(v.main.limit, ids::SENDER_BUFFER, "{v:?}");
    // Unknown round trip: nothing to compare against, nothing said.
    c.facts.sysctls.insert("net.ipv4.tcp_wmem".into(), "4096 8192 8192".into());
    d.round_trips = RoundTrips::default();
    let v = diagnose(&d, Hosts { client: Some(&c), server: None });
    assert_ne!(v.main.limit, ids::SENDER_BUFFER, "{v:?}");
}
