//! Loopback socket pairs for the unit tests (127.0.0.1 and ::1 only).

use std::io;
use std::net::{Ipv6Addr, SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::time::Duration;

/// A connected TCP pair on 127.0.0.1: (client, server side).
pub(crate) fn tcp_pair_v4() -> (TcpStream, TcpStream) {
    tcp_pair("127.0.0.1:0").expect("tcp pair on 127.0.0.1")
}

/// A connected TCP pair on ::1, or `None` when the machine has no IPv6 loopback.
pub(crate) fn tcp_pair_v6() -> Option<(TcpStream, TcpStream)> {
    tcp_pair("[::1]:0").ok()
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
pub(crate) fn udp_pair_v6() -> Option<(UdpSocket, UdpSocket)> {
    let any6 = SocketAddr::from((Ipv6Addr::LOCALHOST, 0));
    udp_pair(&any6.to_string()).ok()
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
