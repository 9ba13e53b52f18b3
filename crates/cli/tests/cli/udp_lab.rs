//! UDP in the namespace lab (see `support/lab.rs`, docs/lab.md): exact loss accounting against the
//! kernel's own counters, zero loss on a clean path, and smooth pacing on a rate-limited link.
//!
//! Every test moves 2 s of traffic from namespace A (client) to namespace B (server), or back
//! with `-R`, with 1400-byte datagrams (1428 bytes on the wire: one per 1500-byte frame).

#![allow(clippy::unwrap_used)]

use crate::support::harness::*;
use crate::support::lab::{LAB_PORT, Lab, LabConfig, Side};
use serde_json::Value;
use std::time::Duration;

fn client(lab: &Lab, side: Side, args: &[&str]) -> Value {
    let port = LAB_PORT.to_string();
    let peer = lab.addr(if side == Side::A { Side::B } else { Side::A });
    let mut a = vec!["-c", peer, "-p", &port, "-u", "-t", "2", "-l", "1400", "-J"];
    a.extend_from_slice(args);
    let out = lab.run(side, &wireperf(), &a);
    assert_ok(&out);
    json_of(&out)
}

fn f(v: &Value, ptr: &str) -> f64 {
    v.pointer(ptr).and_then(Value::as_f64).unwrap_or_else(|| panic!("no number at {ptr} in {v}"))
}

/// Runs one lossy test and checks wireperf's loss against nft's and the kernel's counters.
/// `receiver` is the side whose socket receives (and whose input holds the drop rule).
fn exact_loss(args: &[&str], receiver: Side) -> (u64, u64) {
    exact_loss_with(args, receiver, |_| {})
}

/// [`exact_loss`], calling `during(server pid)` on its own thread while the client runs.
fn exact_loss_with(args: &[&str], receiver: Side, during: impl FnOnce(u32) + Send) -> (u64, u64) {
    let lab = Lab::new(LabConfig::default());
    let server = lab.start_server(Side::B, &wireperf(), &["-1", "-J"]);
    lab.drop_udp(receiver, LAB_PORT, 1);
    let rcvbuf0 = lab.snmp_udp(receiver, "RcvbufErrors");
    let pid = server.pid();
    let v = std::thread::scope(|s| {
        s.spawn(move || during(pid));
        client(&lab, Side::A, args)
    });
    let (so, se) = server.finish(Duration::from_secs(10));
    let nft = lab.nft_dropped(receiver);
    let rcvbuf = lab.snmp_udp(receiver, "RcvbufErrors") - rcvbuf0;
    let lost = u(&v, "/end/sum/lost_packets");
    let socket_drops = u(&v, "/end/sum/wireperf_receiver_socket_drops");
    let sent = u(&v, "/end/sum_sent/packets");
    eprintln!("{args:?}: sent {sent}, lost {lost} = nft {nft} + rcvbuf {rcvbuf}? socket drops {socket_drops}");
    assert!(nft > 0, "the 1% drop rule dropped nothing out of {sent}");
    assert_eq!(lost, nft + rcvbuf, "lost must be exactly the nft drops plus the socket drops");
    assert_eq!(socket_drops, rcvbuf, "receiver_socket_drops must be RcvbufErrors' delta");
    // The server's own document says the same.
    let s: Value = serde_json::from_str(&so).unwrap_or_else(|e| panic!("server JSON: {e}\n{so}\n{se}"));
    assert_eq!(u(&s, "/end/sum/lost_packets"), lost);
    assert_eq!(u(&s, "/end/sum/wireperf_receiver_socket_drops"), socket_drops);
    (lost, rcvbuf)
}

#[test]
fn lab_udp_loss_equals_nft_drops_plus_socket_drops() {
    exact_loss(&["-b", "100M"], Side::B);
}

#[test]
fn lab_udp_loss_is_exact_in_reverse() {
    exact_loss(&["-b", "100M", "-R"], Side::A);
}

#[test]
fn lab_udp_socket_drops_are_split_exactly() {
    // The server (the receiver) is stopped for 300 ms in the middle of the test: its 8 KiB
    // receive buffer fills within a millisecond at 400 Mbit/s and the kernel drops the rest,
    // so socket drops always happen beside the nft drops, and the split must add up exactly.
    let (lost, rcvbuf) = exact_loss_with(&["-b", "400M", "-w", "8K"], Side::B, |pid| {
        let signal = |sig: &str| {
            let st = std::process::Command::new("kill").args([sig, &pid.to_string()]).status().expect("run kill");
            assert!(st.success(), "kill {sig} {pid} failed");
        };
        std::thread::sleep(Duration::from_millis(700));
        signal("-STOP");
        std::thread::sleep(Duration::from_millis(300));
        signal("-CONT");
    });
    assert!(rcvbuf > 0, "no socket drops although the receiver was stopped for 300 ms");
    assert!(lost > rcvbuf, "the nft drops are part of the loss too: lost {lost}, socket drops {rcvbuf}");
}

#[test]
fn lab_udp_no_loss_on_a_clean_path() {
    let lab = Lab::new(LabConfig::default());
    let _server = lab.start_server(Side::B, &wireperf(), &["-1"]);
    let v = client(&lab, Side::A, &["-b", "100M"]);
    assert_eq!(u(&v, "/end/sum/lost_packets"), 0);
    assert_eq!(u(&v, "/end/sum_received/packets"), u(&v, "/end/sum_sent/packets"));
    assert_eq!(u(&v, "/end/sum_received/bytes"), u(&v, "/end/sum_sent/bytes"));
    assert_eq!(u(&v, "/end/sum/wireperf_receiver_socket_drops"), 0);
}

/// Per-interval tolerance for pacing at 100 Mbit/s with `-i 0.1`. An interval holds ~893
/// datagrams, so whole datagrams quantise the rate by 0.11%; the sampler reads the counters at
/// its tick while the sender may be one sleep behind (≤ ~0.2 ms). On a 2-core machine running
/// other tests in parallel the sender thread is sometimes descheduled for several ms, and then
/// catches up in the next interval: measured up to 4.4% off with the load average at 10.
/// 10% covers that; a sender that bursts (iperf3's 100 ms bursts put whole intervals at 0% or
/// 200%) still misses it by far.
const INTERVAL_TOLERANCE: f64 = 0.10;

#[test]
fn lab_udp_pacing_is_smooth_at_100m() {
    let lab = Lab::new(LabConfig { rate: Some("150mbit"), ..Default::default() });
    let _server = lab.start_server(Side::B, &wireperf(), &["-1"]);
    let v = client(&lab, Side::A, &["-b", "100M", "-i", "0.1"]);
    let intervals = v["intervals"].as_array().unwrap();
    assert!(intervals.len() >= 19, "{} intervals", intervals.len());
    // The last interval may be a partial one ending at TEST_END.
    for (i, iv) in intervals.iter().enumerate().take(intervals.len() - 1) {
        let r = f(iv, "/sum/bits_per_second");
        assert!((r - 100e6).abs() <= INTERVAL_TOLERANCE * 100e6, "interval {i}: {r} bit/s");
    }
    let achieved = f(&v, "/end/sum_sent/bits_per_second");
    assert!((achieved - 100e6).abs() <= 0.01 * 100e6, "achieved {achieved} bit/s");
    // The receiver's rate is its count over its own span, which ends when it has drained
    // after TEST_END: under a full suite's load that span ran 1.2% long once (98.8 Mbit/s,
    // nothing lost), so 2% here; the count itself is checked exactly (no loss) below.
    let received = f(&v, "/end/sum_received/bits_per_second");
    assert!((received - 100e6).abs() <= 0.02 * 100e6, "received at {received} bit/s");
    assert_eq!(u(&v, "/end/sum_sent/wireperf_sender_drops"), 0);
    assert_eq!(u(&v, "/end/sum/lost_packets"), 0);
}
