//! Addresses and sockets: resolving the server, connecting the control and data connections
//! with iperf3's socket options, and binding the listener.

use crate::config::Family;
use crate::error::EngineError;
use socket2::{Domain, Protocol as SockProto, SockAddr, Socket, Type};
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::time::Duration;
use wireperf_sys::sockopt;

/// Resolves `host:port`, keeping only addresses of the requested family.
pub(crate) fn resolve(host: &str, port: u16, family: Family) -> Result<Vec<SocketAddr>, EngineError> {
    // Accept "[::1]" as typed in URLs, and a "%scope" suffix on link-local addresses.
    let h = host.trim_start_matches('[').trim_end_matches(']');
    let addrs: Vec<SocketAddr> = (h, port)
        .to_socket_addrs()
        .map_err(|e| EngineError::Resolve { host: host.to_string(), reason: e.to_string() })?
        .filter(|a| match family {
            Family::Any => true,
            Family::V4 => a.is_ipv4(),
            Family::V6 => a.is_ipv6(),
        })
        .collect();
    if addrs.is_empty() {
        return Err(EngineError::Resolve {
            host: host.to_string(),
            reason: "no address of the requested family".into(),
        });
    }
    Ok(addrs)
}

/// Socket options applied to a TCP connection before it connects.
#[derive(Clone, Debug, Default)]
pub(crate) struct TcpOptions {
    pub bind: Option<IpAddr>,
    pub bind_port: Option<u16>,
    pub bind_dev: Option<String>,
    pub window: Option<u32>,
    pub mss: Option<u32>,
    pub nodelay: bool,
    pub congestion: Option<String>,
    pub tos: Option<i32>,
    pub user_timeout: Option<Duration>,
    /// A Multipath TCP socket (`-m`, `IPPROTO_MPTCP`) rather than plain TCP. As iperf3 3.22,
    /// no fallback at socket creation: a kernel without MPTCP (or with `net.mptcp.enabled=0`)
    /// fails the connection. A peer that does not speak MPTCP makes the kernel fall back to
    /// plain TCP during the handshake.
    pub mptcp: bool,
    /// IPv6 flow label (`-L`), 1..=0xfffff, for the client's TCP data connections only, as
    /// iperf3 (its control connection and UDP streams carry none).
    pub flowlabel: Option<u32>,
}

/// Why a TCP connection was not made.
#[derive(Debug)]
pub(crate) enum ConnectError {
    /// Socket creation, an option or the connect itself failed.
    Io(std::io::Error),
    /// The flow label could not be set (or the destination is IPv4): iperf3's IESETFLOW.
    FlowLabel(std::io::Error),
}

impl ConnectError {
    /// The engine error: `io` for plain failures, [`EngineError::FlowLabel`] otherwise.
    pub(crate) fn into_engine(self, io: fn(std::io::Error) -> EngineError) -> EngineError {
        match self {
            ConnectError::Io(e) => io(e),
            ConnectError::FlowLabel(err) => EngineError::FlowLabel { err },
        }
    }
}

impl From<std::io::Error> for ConnectError {
    fn from(e: std::io::Error) -> Self {
        ConnectError::Io(e)
    }
}

/// A stream socket for `addr`: MPTCP (`IPPROTO_MPTCP`, 262) or plain TCP.
fn stream_socket(addr: SocketAddr, mptcp: bool) -> std::io::Result<Socket> {
    let proto = if mptcp { SockProto::from(libc::IPPROTO_MPTCP) } else { SockProto::TCP };
    Socket::new(Domain::for_address(addr), Type::STREAM, Some(proto))
}

fn opt_err(what: &'static str) -> impl FnOnce(std::io::Error) -> EngineError {
    move |err| EngineError::SocketOption { what, err }
}

/// Applies the options that matter on an established or accepted socket as well.
pub(crate) fn apply_common<F: std::os::fd::AsFd>(sock: &F, o: &TcpOptions) -> Result<(), EngineError> {
    if let Some(w) = o.window {
        sockopt::set_send_buffer(sock, w as usize).map_err(opt_err("unable to set socket window size"))?;
        sockopt::set_recv_buffer(sock, w as usize).map_err(opt_err("unable to set socket window size"))?;
    }
    if o.nodelay {
        sockopt::set_nodelay(sock, true).map_err(opt_err("unable to set TCP/SCTP NODELAY"))?;
    }
    if let Some(cc) = &o.congestion {
        sockopt::set_congestion(sock, cc).map_err(|err| EngineError::SocketOption {
            what: "unable to set TCP_CONGESTION: Supplied congestion control algorithm not supported on this host",
            err,
        })?;
    }
    if let Some(tos) = o.tos {
        sockopt::set_tos(sock, tos as u8).map_err(opt_err("unable to set IP TOS"))?;
    }
    if let Some(t) = o.user_timeout {
        let ms = u32::try_from(t.as_millis()).unwrap_or(u32::MAX);
        sockopt::set_user_timeout(sock, ms).map_err(opt_err("unable to set TCP USER_TIMEOUT"))?;
    }
    Ok(())
}

/// Connects a TCP socket to the first reachable address, with options set before connect
/// (MSS and buffer sizes only take full effect when set before the handshake).
pub(crate) fn connect_tcp(
    addrs: &[SocketAddr],
    o: &TcpOptions,
    timeout: Option<Duration>,
) -> Result<TcpStream, ConnectError> {
    let mut last = std::io::Error::new(std::io::ErrorKind::NotFound, "no address to connect to");
    for addr in addrs {
        match connect_one(*addr, o, timeout) {
            Ok(s) => return Ok(s),
            // As iperf3: a label that cannot be set ends the test, no other address is tried.
            Err(e @ ConnectError::FlowLabel(_)) => return Err(e),
            Err(ConnectError::Io(e)) => last = e,
        }
    }
    Err(ConnectError::Io(last))
}

/// The address to connect to, with the flow label in it when one is asked for (set up on
/// `sock` first). An IPv4 destination refuses a label, as in iperf3.
fn labelled(sock: &Socket, addr: SocketAddr, label: Option<u32>) -> Result<SocketAddr, ConnectError> {
    match (label, addr) {
        (None, _) => Ok(addr),
        (Some(l), SocketAddr::V6(v6)) => {
            Ok(SocketAddr::V6(wireperf_sys::flowlabel::set_flow_label(sock, v6, l).map_err(ConnectError::FlowLabel)?))
        }
        (Some(_), SocketAddr::V4(_)) => Err(ConnectError::FlowLabel(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "an IPv4 destination has no flow label",
        ))),
    }
}

fn connect_one(addr: SocketAddr, o: &TcpOptions, timeout: Option<Duration>) -> Result<TcpStream, ConnectError> {
    let sock = stream_socket(addr, o.mptcp)?;
    if let Some(dev) = &o.bind_dev {
        sockopt::bind_to_device(&sock, Some(dev))?;
    }
    if o.bind.is_some() || o.bind_port.is_some() {
        let ip = o.bind.unwrap_or(match addr {
            SocketAddr::V4(_) => IpAddr::from([0, 0, 0, 0]),
            SocketAddr::V6(_) => IpAddr::from([0u16; 8]),
        });
        if o.bind_port.is_some() {
            sock.set_reuse_address(true)?;
        }
        sock.bind(&SockAddr::from(SocketAddr::new(ip, o.bind_port.unwrap_or(0))))?;
    }
    if let Some(mss) = o.mss {
        sockopt::set_mss(&sock, mss)?;
    }
    apply_common(&sock, o).map_err(|e| match e {
        EngineError::SocketOption { err, .. } => err,
        other => std::io::Error::other(other.to_string()),
    })?;
    let to = SockAddr::from(labelled(&sock, addr, o.flowlabel)?);
    match timeout {
        Some(t) => sock.connect_timeout(&to, t)?,
        None => sock.connect(&to)?,
    }
    Ok(sock.into())
}

/// Binds the server's listener: dual-stack `[::]` unless a family or address says otherwise.
///
/// The listener is an MPTCP socket when the kernel allows one, so that a client's `-m` data
/// connections are MPTCP end to end; a plain TCP client's connection is still accepted as a
/// plain TCP socket (the kernel hands out the TCP subflow itself on fallback), so nothing
/// changes for it. Where the kernel refuses MPTCP the listener is plain TCP, and `-m` clients
/// fall back to TCP in the handshake.
pub(crate) fn listen(
    port: u16,
    bind: Option<IpAddr>,
    bind_dev: Option<&str>,
    family: Family,
) -> std::io::Result<TcpListener> {
    let ip = match (bind, family) {
        (Some(ip), _) => ip,
        (None, Family::V4) => IpAddr::from([0, 0, 0, 0]),
        (None, _) => IpAddr::from([0u16; 8]),
    };
    let addr = SocketAddr::new(ip, port);
    let sock = stream_socket(addr, true).or_else(|_| stream_socket(addr, false))?;
    sock.set_reuse_address(true)?;
    if addr.is_ipv6() {
        sock.set_only_v6(family == Family::V6)?;
    }
    if let Some(dev) = bind_dev {
        sockopt::bind_to_device(&sock, Some(dev))?;
    }
    sock.bind(&SockAddr::from(addr))?;
    sock.listen(128)?;
    Ok(sock.into())
}

/// Shows an address the way iperf3 prints it: IPv4-mapped IPv6 addresses as plain IPv4.
pub(crate) fn show_ip(ip: IpAddr) -> String {
    match ip {
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => v4.to_string(),
            None => v6.to_string(),
        },
        IpAddr::V4(v4) => v4.to_string(),
    }
}
