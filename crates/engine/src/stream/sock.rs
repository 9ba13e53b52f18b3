//! The socket a data stream moves bytes on: a TCP connection or a connected UDP socket. A
//! leaf of `stream`, so the loops and the shared workers take it without importing
//! `stream/mod.rs`.

use std::net::{Shutdown, SocketAddr, TcpStream, UdpSocket};
use std::os::fd::{AsFd, BorrowedFd};

/// The socket a stream moves data on.
#[derive(Debug)]
pub(crate) enum DataSock {
    /// A TCP data connection.
    Tcp(TcpStream),
    /// A connected UDP socket (after the iperf3 UDP handshake).
    Udp(UdpSocket),
}

impl DataSock {
    pub(super) fn local_addr(&self) -> std::io::Result<SocketAddr> {
        match self {
            DataSock::Tcp(s) => s.local_addr(),
            DataSock::Udp(s) => s.local_addr(),
        }
    }

    pub(super) fn peer_addr(&self) -> std::io::Result<SocketAddr> {
        match self {
            DataSock::Tcp(s) => s.peer_addr(),
            DataSock::Udp(s) => s.peer_addr(),
        }
    }

    pub(super) fn shutdown(&self, how: Shutdown) {
        // UDP: shutdown wakes a reader blocked in recv; a failure (not connected) is harmless
        // because every loop also polls its stop flag.
        let _ = match self {
            DataSock::Tcp(s) => s.shutdown(how),
            DataSock::Udp(s) => socket2::SockRef::from(s).shutdown(how),
        };
    }
}

impl AsFd for DataSock {
    fn as_fd(&self) -> BorrowedFd<'_> {
        match self {
            DataSock::Tcp(s) => s.as_fd(),
            DataSock::Udp(s) => s.as_fd(),
        }
    }
}
