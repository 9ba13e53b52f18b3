//! Socket setup: connect and listen with `-w` applied before the handshake (the window is
//! negotiated then), via socket2.

use socket2::{Domain, Protocol, SockAddr, Socket, Type};
use std::io;
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs, UdpSocket};
use std::time::Duration;

/// Resolves `host:port`, preferring the first address the resolver gives.
pub fn resolve(host: &str, port: u16) -> io::Result<SocketAddr> {
    (host, port)
        .to_socket_addrs()?
        .next()
        .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, format!("cannot resolve {host}")))
}

fn apply_window(s: &Socket, window: Option<usize>) -> io::Result<()> {
    if let Some(w) = window {
        s.set_send_buffer_size(w)?;
        s.set_recv_buffer_size(w)?;
    }
    Ok(())
}

/// A TCP connection to `addr` with `-w` set first.
pub fn connect_tcp(addr: SocketAddr, window: Option<usize>) -> io::Result<TcpStream> {
    let s = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
    apply_window(&s, window)?;
    s.connect_timeout(&SockAddr::from(addr), Duration::from_secs(10))?;
    Ok(s.into())
}

/// A TCP listener with `SO_REUSEADDR`, so a restarted server can bind at once.
pub fn listen_tcp(addr: SocketAddr, window: Option<usize>) -> io::Result<TcpListener> {
    let s = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
    s.set_reuse_address(true)?;
    if addr.is_ipv6() {
        // Accept IPv4 peers too on a wildcard v6 listener.
        let _ = s.set_only_v6(false);
    }
    apply_window(&s, window)?;
    s.bind(&SockAddr::from(addr))?;
    s.listen(128)?;
    Ok(s.into())
}

/// A UDP socket bound to `addr` with `SO_REUSEADDR`: the UDP server binds a fresh one on the
/// same port after each test's socket is connected to its client (iperf 2's scheme).
pub fn bind_udp(addr: SocketAddr, window: Option<usize>) -> io::Result<UdpSocket> {
    let s = Socket::new(Domain::for_address(addr), Type::DGRAM, Some(Protocol::UDP))?;
    s.set_reuse_address(true)?;
    if addr.is_ipv6() {
        let _ = s.set_only_v6(false);
    }
    apply_window(&s, window)?;
    s.bind(&SockAddr::from(addr))?;
    Ok(s.into())
}

/// The wildcard address of `addr`'s family.
pub fn wildcard(addr: &SocketAddr, port: u16) -> SocketAddr {
    if addr.is_ipv6() {
        SocketAddr::from((std::net::Ipv6Addr::UNSPECIFIED, port))
    } else {
        SocketAddr::from((std::net::Ipv4Addr::UNSPECIFIED, port))
    }
}
