//! Tests for `sockopt`, each on a real loopback socket.

use super::*;
use crate::tcp_info::tcp_info;
use crate::testutil::{tcp_pair_v4, tcp_pair_v6, udp_pair_v4, udp_pair_v6};
use socket2::{Domain, Protocol, Socket, Type};
use std::io::{Read, Write};
use std::net::TcpListener;

fn tcp_socket_v4() -> Socket {
    Socket::new(Domain::IPV4, Type::STREAM, Some(Protocol::TCP)).unwrap()
}

#[test]
fn congestion_roundtrip_and_unknown_name() {
    let (c, _s) = tcp_pair_v4();
    let default = congestion(&c).unwrap();
    assert!(!default.is_empty() && !default.contains('\0'), "{default:?}");
    // reno is always built in.
    set_congestion(&c, "reno").unwrap();
    assert_eq!(congestion(&c).unwrap(), "reno");
    let e = set_congestion(&c, "no-such-cc").unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::ENOENT));
    for bad in ["", "a\0b", "sixteen-chars-xx"] {
        let e = set_congestion(&c, bad).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput, "{bad:?}");
    }
    assert_eq!(congestion(&c).unwrap(), "reno", "unchanged after errors");
}

#[test]
fn congestion_on_udp_is_an_error() {
    let (u, _) = udp_pair_v4();
    assert!(set_congestion(&u, "reno").is_err());
    assert!(congestion(&u).is_err());
}

#[test]
fn mss_set_before_connect_limits_segments() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let sock = tcp_socket_v4();
    assert_eq!(mss(&sock).unwrap(), 536, "unconnected default");
    set_mss(&sock, 1000).unwrap();
    assert_eq!(mss(&sock).unwrap(), 1000);
    sock.connect(&listener.local_addr().unwrap().into()).unwrap();
    let (_server, _) = listener.accept().unwrap();
    let info = tcp_info(&sock).unwrap();
    assert!(info.snd_mss <= 1000, "{info:?}");
    assert!(mss(&sock).unwrap() <= 1000);
    assert_eq!(set_mss(tcp_socket_v4(), 10).unwrap_err().raw_os_error(), Some(libc::EINVAL));
}

#[test]
fn buffers_report_the_doubled_kernel_value() {
    let (c, _s) = tcp_pair_v4();
    set_send_buffer(&c, 64 * 1024).unwrap();
    assert_eq!(send_buffer(&c).unwrap(), 128 * 1024);
    set_recv_buffer(&c, 32 * 1024).unwrap();
    assert_eq!(recv_buffer(&c).unwrap(), 64 * 1024);
    let (u, _) = udp_pair_v4();
    set_recv_buffer(&u, 16 * 1024).unwrap();
    assert_eq!(recv_buffer(&u).unwrap(), 32 * 1024);
}

/// A UDP receiver's default buffer goes past `net.core.rmem_max` when the process may
/// (`SO_RCVBUFFORCE`, root here), and is capped quietly when it may not.
#[test]
fn a_raised_receive_buffer_passes_rmem_max_when_privileged() {
    let max: usize = std::fs::read_to_string("/proc/sys/net/core/rmem_max").unwrap().trim().parse().unwrap();
    let want = 2 * max + 4096;
    let (u, _) = udp_pair_v4();
    set_recv_buffer(&u, want).unwrap();
    assert_eq!(recv_buffer(&u).unwrap(), 2 * max, "SO_RCVBUF is capped at rmem_max");
    let got = raise_recv_buffer(&u, want).unwrap();
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        assert_eq!(got, 2 * want, "root: SO_RCVBUFFORCE passes the cap (the kernel doubles it)");
    } else {
        assert_eq!(got, 2 * max, "unprivileged: the capped buffer, no error");
    }
    assert_eq!(recv_buffer(&u).unwrap(), got);
    // A request the cap already allows takes one SO_RCVBUF.
    assert_eq!(raise_recv_buffer(&u, 16 * 1024).unwrap(), 32 * 1024);
}

#[test]
fn tos_by_family() {
    let (c, _s) = tcp_pair_v4();
    set_tos(&c, 0x10).unwrap();
    assert_eq!(tos(&c).unwrap(), 0x10);
    let (u, _) = udp_pair_v4();
    set_tos(&u, 0xb8).unwrap();
    assert_eq!(tos(&u).unwrap(), 0xb8);
    let (c6, _s6) = tcp_pair_v6();
    set_tos(&c6, 0x20).unwrap();
    assert_eq!(tos(&c6).unwrap(), 0x20);
    assert_eq!(SockRef::from(&c6).tos_v4().unwrap(), 0x20, "v4-mapped marking");
}

#[test]
fn bind_to_loopback_device() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let sock = tcp_socket_v4();
    assert_eq!(bound_device(&sock).unwrap(), None);
    bind_to_device(&sock, Some("lo")).unwrap();
    assert_eq!(bound_device(&sock).unwrap().as_deref(), Some("lo"));
    sock.connect(&listener.local_addr().unwrap().into()).unwrap();
    bind_to_device(&sock, None).unwrap();
    assert_eq!(bound_device(&sock).unwrap(), None);

    let other = tcp_socket_v4();
    let e = bind_to_device(&other, Some("nosuchdev0")).unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::ENODEV));
    let e = bind_to_device(&other, Some("a-name-too-long-for-linux")).unwrap_err();
    assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
}

#[test]
fn user_timeout_roundtrip() {
    let (c, _s) = tcp_pair_v4();
    assert_eq!(user_timeout(&c).unwrap(), 0);
    set_user_timeout(&c, 5000).unwrap();
    assert_eq!(user_timeout(&c).unwrap(), 5000);
    set_user_timeout(&c, 0).unwrap();
    assert_eq!(user_timeout(&c).unwrap(), 0);
}

#[test]
fn keepalive_full_and_partial() {
    let (c, s) = tcp_pair_v4();
    assert_eq!(keepalive(&c).unwrap(), None);
    let want = Keepalive { idle_secs: Some(10), interval_secs: Some(3), count: Some(4) };
    set_keepalive(&c, &want).unwrap();
    assert_eq!(keepalive(&c).unwrap(), Some(want));

    // Only idle given: the others keep the system defaults, whatever they are.
    set_keepalive(&s, &Keepalive { idle_secs: Some(20), ..Keepalive::default() }).unwrap();
    let got = keepalive(&s).unwrap().unwrap();
    assert_eq!(got.idle_secs, Some(20));
    assert!(got.interval_secs.unwrap() > 0 && got.count.unwrap() > 0);

    let e = set_keepalive(&c, &Keepalive { count: Some(0), ..Keepalive::default() }).unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::EINVAL));
}

#[test]
fn nodelay_roundtrip() {
    let (c, _s) = tcp_pair_v4();
    set_nodelay(&c, true).unwrap();
    assert!(nodelay(&c).unwrap());
    set_nodelay(&c, false).unwrap();
    assert!(!nodelay(&c).unwrap());
}

#[test]
fn pacing_rate_roundtrip_and_visible_in_tcp_info() {
    let (mut c, mut s) = tcp_pair_v4();
    assert_eq!(max_pacing_rate(&c).unwrap(), u64::MAX, "uncapped by default");
    let rate = 5_000_000_000u64; // > u32::MAX: needs the 64-bit form
    set_max_pacing_rate(&c, rate).unwrap();
    assert_eq!(max_pacing_rate(&c).unwrap(), rate);
    c.write_all(b"x").unwrap();
    let mut b = [0u8; 1];
    s.read_exact(&mut b).unwrap();
    assert_eq!(tcp_info(&c).unwrap().max_pacing_rate, rate);
    set_max_pacing_rate(&c, u64::MAX).unwrap();
    assert_eq!(max_pacing_rate(&c).unwrap(), u64::MAX);
    // UDP sockets take it too (enforced by the fq qdisc).
    let (u, _) = udp_pair_v4();
    set_max_pacing_rate(&u, 125_000).unwrap();
    assert_eq!(max_pacing_rate(&u).unwrap(), 125_000);
}

#[test]
fn dont_fragment_v4_udp_and_tcp() {
    let (u, _r) = udp_pair_v4();
    assert!(!dont_fragment(&u).unwrap());
    set_dont_fragment(&u, true).unwrap();
    assert!(dont_fragment(&u).unwrap());
    // Loopback's MTU is 65536, so every datagram fits; a normal send still works.
    u.send(&[0u8; 1400]).unwrap();
    set_dont_fragment(&u, false).unwrap();
    assert!(!dont_fragment(&u).unwrap());
    let (c, _s) = tcp_pair_v4();
    set_dont_fragment(&c, true).unwrap();
    assert!(dont_fragment(&c).unwrap());
}

#[test]
fn dont_fragment_v6() {
    let (u, _r) = udp_pair_v6();
    assert!(!dont_fragment(&u).unwrap());
    set_dont_fragment(&u, true).unwrap();
    assert!(dont_fragment(&u).unwrap());
    // Loopback's 64 KiB MTU fits every datagram, so EMSGSIZE cannot be provoked here; a
    // netns/veth test with a small MTU belongs in the engine's integration tests.
    u.send(&[0u8; 1400]).unwrap();
    set_dont_fragment(&u, false).unwrap();
    assert!(!dont_fragment(&u).unwrap());
}

#[test]
fn rxq_ovfl_toggle() {
    let (_, r) = udp_pair_v4();
    assert!(!rxq_ovfl(&r).unwrap());
    set_rxq_ovfl(&r, true).unwrap();
    assert!(rxq_ovfl(&r).unwrap());
    set_rxq_ovfl(&r, false).unwrap();
    assert!(!rxq_ovfl(&r).unwrap());
}

#[test]
fn bad_fd_types_error_cleanly() {
    // A file is not a socket: every wrapper reports an error instead of panicking.
    let f = std::fs::File::open("/proc/self/stat").unwrap();
    assert!(congestion(&f).is_err());
    assert!(send_buffer(&f).is_err());
    assert!(set_tos(&f, 1).is_err());
    assert!(max_pacing_rate(&f).is_err());
    assert!(dont_fragment(&f).is_err());
    assert!(keepalive(&f).is_err());
}

#[test]
fn socket_drops_counts_receive_queue_overflow() {
    let (tx, rx) = udp_pair_v4();
    assert_eq!(socket_drops(&rx).unwrap(), 0);
    set_recv_buffer(&rx, 4096).unwrap();
    for _ in 0..200 {
        tx.send(&[7u8; 1000]).unwrap();
    }
    rx.set_nonblocking(true).unwrap();
    let mut queued = 0u32;
    let mut buf = [0u8; 2048];
    // Loopback delivers synchronously in send(), so everything is queued or dropped by now.
    while rx.recv(&mut buf).is_ok() {
        queued += 1;
    }
    assert!(queued > 0 && queued < 200);
    assert_eq!(socket_drops(&rx).unwrap(), 200 - queued);
}

#[test]
fn receive_queue_bytes_is_zero_only_when_nothing_waits() {
    let (tx, rx) = udp_pair_v4();
    assert_eq!(receive_queue_bytes(&rx).unwrap(), 0);
    tx.send(&[7u8; 1000]).unwrap();
    tx.send(&[7u8; 1000]).unwrap();
    // Loopback delivers within send(); the queue holds both datagrams (as skb truesize).
    assert!(receive_queue_bytes(&rx).unwrap() >= 2000);
    let mut buf = [0u8; 2048];
    rx.recv(&mut buf).unwrap();
    assert!(receive_queue_bytes(&rx).unwrap() >= 1000, "one still queued");
    rx.recv(&mut buf).unwrap();
    assert_eq!(receive_queue_bytes(&rx).unwrap(), 0);
}

#[test]
fn recverr_on_both_families() {
    let (tx, _) = udp_pair_v4();
    set_recverr(&tx, true).unwrap();
    if let Ok(u) = std::net::UdpSocket::bind("[::1]:0") {
        set_recverr(&u, true).unwrap();
    }
}

#[test]
fn recv_lowat_holds_a_read_until_the_mark_or_its_timeout() {
    let (mut c, s) = tcp_pair_v4();
    assert_eq!(recv_lowat(&s).unwrap(), 1, "kernel default");
    set_recv_lowat(&s, 4096).unwrap();
    assert_eq!(recv_lowat(&s).unwrap(), 4096);
    // 100 bytes queued, below the mark: a read waits out its timeout, then takes them.
    c.write_all(&[7u8; 100]).unwrap();
    s.set_read_timeout(Some(std::time::Duration::from_millis(150))).unwrap();
    let t = std::time::Instant::now();
    let mut buf = [0u8; 8192];
    assert_eq!((&s).read(&mut buf).unwrap(), 100);
    assert!(t.elapsed() >= std::time::Duration::from_millis(100), "woke before the mark");
    // Lowering the mark does not wake a reader already blocked on it (the kernel waits for a
    // new segment), which is why the engine shortens its read timeout while the mark is set;
    // it does let the next read return at once.
    c.write_all(&[7u8; 100]).unwrap();
    let s2 = s.try_clone().unwrap();
    let lower = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(20));
        set_recv_lowat(&s2, 1).unwrap();
    });
    let t = std::time::Instant::now();
    assert_eq!((&s).read(&mut buf).unwrap(), 100);
    assert!(t.elapsed() >= std::time::Duration::from_millis(100), "woken by the new mark");
    lower.join().unwrap();
    c.write_all(&[7u8; 100]).unwrap();
    let t = std::time::Instant::now();
    assert_eq!((&s).read(&mut buf).unwrap(), 100);
    assert!(t.elapsed() < std::time::Duration::from_millis(100), "{:?}", t.elapsed());
    let e = set_recv_lowat(&s, usize::MAX).unwrap_err();
    assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
}
