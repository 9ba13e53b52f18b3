//! IPv6 flow labels for `-L N` (`--flowlabel`), the way iperf3 sets them on Linux.
//!
//! Linux sends a chosen label only from a socket that has (1) taken a lease on the label for
//! the destination (`IPV6_FLOWLABEL_MGR`, `IPV6_FL_A_GET` with `IPV6_FL_F_CREATE`, shared with
//! anyone: `IPV6_FL_S_ANY`) and (2) turned on `IPV6_FLOWINFO_SEND`; the label itself then
//! travels in the `sin6_flowinfo` of the address given to `connect`. A connect naming a label the
//! socket holds no lease on fails with `EINVAL`. Neither libc nor socket2 has the request
//! structure, so it is declared here.

use std::io;
use std::net::SocketAddrV6;
use std::os::fd::AsFd;

use crate::raw::{self, Pod};

/// Largest flow label: the field is 20 bits wide.
pub const MAX_FLOW_LABEL: u32 = 0xfffff;

/// `struct in6_flowlabel_req` of `linux/in6.h` (32 bytes, no padding).
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct FlowLabelReq {
    dst: [u8; 16],
    /// The label in network byte order.
    label: u32,
    action: u8,
    share: u8,
    flags: u16,
    expires: u16,
    linger: u16,
    pad: u32,
}

// SAFETY: `FlowLabelReq` is `#[repr(C)]`, integers only, and its fields leave no padding.
unsafe impl Pod for FlowLabelReq {}

const IPV6_FL_A_GET: u8 = 0;
const IPV6_FL_S_ANY: u8 = 255;
const IPV6_FL_F_CREATE: u16 = 1;

/// Prepares an IPv6 socket to send flow label `label` to `dst` and returns the address to
/// `connect` to (`dst` with the label in its flow information).
///
/// Errors: `InvalidInput` for 0 or a label above [`MAX_FLOW_LABEL`]; the kernel's errno from
/// either socket option (`ENOPROTOOPT` on an IPv4 socket, `EPERM` when another socket holds the
/// label exclusively).
pub fn set_flow_label(fd: impl AsFd, dst: SocketAddrV6, label: u32) -> io::Result<SocketAddrV6> {
    if label == 0 || label > MAX_FLOW_LABEL {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("flow label {label} is not in 1..=0xfffff")));
    }
    let fd = fd.as_fd();
    let req = FlowLabelReq {
        dst: dst.ip().octets(),
        label: label.to_be(),
        action: IPV6_FL_A_GET,
        share: IPV6_FL_S_ANY,
        flags: IPV6_FL_F_CREATE,
        ..FlowLabelReq::default()
    };
    raw::setsockopt(fd, libc::IPPROTO_IPV6, libc::IPV6_FLOWLABEL_MGR, &req)?;
    let on: libc::c_int = 1;
    raw::setsockopt(fd, libc::IPPROTO_IPV6, libc::IPV6_FLOWINFO_SEND, &on)?;
    // `sin6_flowinfo` is in network byte order; socket2 and std copy the value as it is.
    Ok(SocketAddrV6::new(*dst.ip(), dst.port(), req.label, dst.scope_id()))
}

/// The flow label in a `sin6_flowinfo` value as [`set_flow_label`] returns it (for tests and
/// logs): the low 20 bits in host order.
pub fn flow_label_of(addr: &SocketAddrV6) -> u32 {
    u32::from_be(addr.flowinfo()) & MAX_FLOW_LABEL
}

#[cfg(test)]
mod tests {
    use super::*;
    use socket2::{Domain, SockAddr, Socket, Type};
    use std::io::{Read, Write};
    use std::net::{Ipv6Addr, SocketAddr, TcpListener};
    use std::time::Duration;

    #[test]
    fn request_is_the_kernels_32_bytes() {
        assert_eq!(std::mem::size_of::<FlowLabelReq>(), 32);
    }

    #[test]
    fn a_labelled_connection_carries_data_on_ipv6_loopback() {
        let listener = TcpListener::bind("[::1]:0").expect("listen on ::1: the tests need IPv6 loopback");
        let SocketAddr::V6(dst) = listener.local_addr().unwrap() else { panic!("not v6") };
        let sock = Socket::new(Domain::IPV6, Type::STREAM, None).unwrap();
        let to = set_flow_label(&sock, dst, 0x12345).unwrap();
        assert_eq!((flow_label_of(&to), to.port()), (0x12345, dst.port()));
        sock.connect_timeout(&SockAddr::from(to), Duration::from_secs(5)).unwrap();
        let mut client: std::net::TcpStream = sock.into();
        let (mut server, _) = listener.accept().unwrap();
        client.write_all(b"labelled").unwrap();
        let mut buf = [0u8; 8];
        server.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        server.read_exact(&mut buf).unwrap();
        assert_eq!(&buf, b"labelled");
    }

    #[test]
    fn out_of_range_labels_and_ipv4_sockets_are_refused() {
        let sock = Socket::new(Domain::IPV6, Type::STREAM, None).unwrap();
        let dst = SocketAddrV6::new(Ipv6Addr::LOCALHOST, 9, 0, 0);
        for bad in [0, MAX_FLOW_LABEL + 1] {
            assert_eq!(set_flow_label(&sock, dst, bad).unwrap_err().kind(), io::ErrorKind::InvalidInput);
        }
        let v4 = Socket::new(Domain::IPV4, Type::STREAM, None).unwrap();
        assert!(set_flow_label(&v4, dst, 1).is_err(), "an IPv4 socket took an IPv6 flow label");
    }
}
