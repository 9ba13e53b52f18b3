//! Tests for `udp_gso` on 127.0.0.1 / ::1.

use super::*;
use crate::testutil::{tcp_pair_v4, udp_pair_v4, udp_pair_v6};
use std::net::UdpSocket;
use std::os::fd::AsFd;

const SEG: usize = 1400;

/// `count` segments of `SEG` bytes; segment `i` is filled with byte `i`.
fn segments(count: usize) -> Vec<u8> {
    (0..count).flat_map(|i| std::iter::repeat_n(i as u8, SEG)).collect()
}

/// Receives datagrams with `recv` until `want` arrived; checks numbering.
fn recv_plain(rx: &UdpSocket, want: usize) {
    let mut buf = [0u8; 2048];
    for i in 0..want {
        let n = rx.recv(&mut buf).unwrap();
        assert_eq!(n, SEG, "datagram {i}");
        assert!(buf[..n].iter().all(|&b| b == i as u8), "datagram {i}");
    }
}

#[test]
fn probe_says_yes_for_udp_and_no_for_tcp() {
    let (u, _) = udp_pair_v4();
    assert!(gso_supported(&u), "Linux ≥ 4.18 supports UDP_SEGMENT");
    let (t, _) = tcp_pair_v4();
    assert!(!gso_supported(&t));
}

#[test]
fn gso_send_arrives_as_ordinary_datagrams() {
    let (tx, rx) = udp_pair_v4();
    let data = segments(44);
    assert_eq!(send_gso(&tx, &data, SEG as u16).unwrap(), data.len());
    recv_plain(&rx, 44);
}

#[test]
fn gso_send_on_v6() {
    let (tx, rx) = udp_pair_v6();
    let data = segments(10);
    assert_eq!(send_gso(&tx, &data, SEG as u16).unwrap(), data.len());
    recv_plain(&rx, 10);
}

#[test]
fn gso_rejects_oversize_requests_before_the_kernel() {
    let (tx, _rx) = udp_pair_v4();
    let too_many = vec![0u8; 65 * 100];
    for (buf, seg) in [(&too_many[..], 100u16), (&[1u8; 10][..], 0)] {
        let e = send_gso(&tx, buf, seg).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
    }
    let too_big = vec![0u8; MAX_GSO_BYTES + 1];
    assert!(send_gso(&tx, &too_big, 8000).is_err());
}

#[test]
fn gro_receiver_sees_coalesced_segments() {
    let (tx, rx) = udp_pair_v4();
    set_gro(&rx, true).unwrap();
    let data = segments(44);
    send_gso(&tx, &data, SEG as u16).unwrap();
    let mut buf = vec![0u8; GRO_BUF_LEN];
    let mut next = 0usize;
    let mut calls = 0;
    while next < 44 {
        calls += 1;
        let p = recv_gro(&rx, &mut buf).unwrap();
        let (n, seg) = (p.bytes, p.segment);
        assert_eq!(seg, SEG);
        for d in buf[..n].chunks(seg) {
            assert_eq!(d.len(), SEG);
            assert!(d.iter().all(|&b| b == next as u8), "segment {next}");
            next += 1;
        }
    }
    assert_eq!(next, 44);
    // Loopback hands the GSO super-packet to a GRO socket whole.
    assert!(calls < 44, "no coalescing seen ({calls} receives)");
}

#[test]
fn gro_single_datagram_reports_its_own_length() {
    let (tx, rx) = udp_pair_v4();
    set_gro(&rx, true).unwrap();
    tx.send(b"single").unwrap();
    let mut buf = vec![0u8; GRO_BUF_LEN];
    let p = recv_gro(&rx, &mut buf).unwrap();
    assert_eq!((p.bytes, p.segment, p.datagrams(), p.stamp), (6, 6, 1, None));
}

#[test]
fn sender_uses_gso_and_sends_everything() {
    let (tx, rx) = udp_pair_v4();
    let mut s = UdpSender::new(&tx);
    assert!(s.gso_enabled());
    assert_eq!(s.max_datagrams(SEG), 46);
    let data = segments(50);
    let mut sent = 0;
    while sent < 50 {
        sent += s.send(&tx, &data[sent * SEG..], SEG).unwrap();
    }
    assert_eq!(sent, 50);
    assert!(s.gso_enabled());
    recv_plain(&rx, 50);
}

#[test]
fn sender_without_gso_falls_back_to_sendmmsg() {
    let (tx, rx) = udp_pair_v4();
    let mut s = UdpSender::without_gso();
    assert_eq!(s.max_datagrams(SEG), MAX_BATCH);
    let data = segments(20);
    assert_eq!(s.send(&tx, &data, SEG).unwrap(), 20);
    recv_plain(&rx, 20);
    assert!(s.send(&tx, &data, 0).is_err());
}

#[test]
fn sender_disables_gso_on_einval_and_resends() {
    // With SO_NO_CHECK (no UDP checksums) the kernel refuses GSO with EINVAL, the same answer
    // a device without checksum offload gives: a real kernel refusal on loopback.
    let (tx, rx) = udp_pair_v4();
    let one: libc::c_int = 1;
    raw::setsockopt(tx.as_fd(), libc::SOL_SOCKET, libc::SO_NO_CHECK, &one).unwrap();
    let data = segments(3);
    let e = send_gso(&tx, &data, SEG as u16).unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::EINVAL));

    let mut s = UdpSender::new(&tx);
    assert!(s.gso_enabled(), "the probe cannot see this; the first send does");
    assert_eq!(s.send(&tx, &data, SEG).unwrap(), 3);
    assert!(!s.gso_enabled(), "GSO switched off after EINVAL");
    assert_eq!(s.max_datagrams(SEG), MAX_BATCH);
    recv_plain(&rx, 3);
}
