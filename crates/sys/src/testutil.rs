//! Loopback socket pairs for the unit tests (127.0.0.1 and ::1 only).

use std::io;
use std::net::{Ipv6Addr, SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::time::Duration;

/// A connected TCP pair on 127.0.0.1: (client, server side).
pub(crate) fn tcp_pair_v4() -> (TcpStream, TcpStream) {
    tcp_pair("127.0.0.1:0").expect("tcp pair on 127.0.0.1")
}

/// A connected TCP pair on ::1, or `None` when the machine has no IPv6 loopback.
/// A connected pair on `::1`. A host without IPv6 loopback fails the test instead of skipping
/// it: wireperf is tested on `::1` everywhere.
pub(crate) fn tcp_pair_v6() -> (TcpStream, TcpStream) {
    tcp_pair("[::1]:0").unwrap_or_else(|e| panic!("no TCP on ::1 ({e}): the tests need IPv6 loopback"))
}

fn tcp_pair(bind: &str) -> io::Result<(TcpStream, TcpStream)> {
    let listener = TcpListener::bind(bind)?;
    let client = TcpStream::connect(listener.local_addr()?)?;
    let (server, _) = listener.accept()?;
    for s in [&client, &server] {
        s.set_read_timeout(Some(Duration::from_secs(5)))?;
    }
    Ok((client, server))
}

/// Two UDP sockets on 127.0.0.1 connected to each other: (sender, receiver).
pub(crate) fn udp_pair_v4() -> (UdpSocket, UdpSocket) {
    udp_pair("127.0.0.1:0").expect("udp pair on 127.0.0.1")
}

/// A UDP pair on ::1, or `None` without IPv6 loopback.
/// A connected UDP pair on `::1`; fails like [`tcp_pair_v6`] without IPv6 loopback.
pub(crate) fn udp_pair_v6() -> (UdpSocket, UdpSocket) {
    let any6 = SocketAddr::from((Ipv6Addr::LOCALHOST, 0));
    udp_pair(&any6.to_string()).unwrap_or_else(|e| panic!("no UDP on ::1 ({e}): the tests need IPv6 loopback"))
}

fn udp_pair(bind: &str) -> io::Result<(UdpSocket, UdpSocket)> {
    let a = UdpSocket::bind(bind)?;
    let b = UdpSocket::bind(bind)?;
    a.connect(b.local_addr()?)?;
    b.connect(a.local_addr()?)?;
    b.set_read_timeout(Some(Duration::from_secs(5)))?;
    a.set_read_timeout(Some(Duration::from_secs(5)))?;
    Ok((a, b))
}
