//! Which network device holds a local address, and what its root qdisc is.
//!
//! The engine asks this once per TCP sender to tell a host-local path (loopback, or a veth pair
//! between namespaces: no wire, nothing but the host's CPUs between the two sockets) from one
//! that ends in a device with a queue of its own (a NIC, or a shaped virtual device). Both
//! answers come straight from the kernel: `getifaddrs(3)` for the address, and one
//! `RTM_GETQDISC` dump over a `NETLINK_ROUTE` socket for the qdisc (no `tc` process).

use std::ffi::CStr;
use std::io;
use std::mem::size_of;
use std::net::IpAddr;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::Duration;

/// `TC_H_ROOT`: the parent handle of a device's root qdisc.
const TC_H_ROOT: u32 = 0xFFFF_FFFF;
/// `TCA_KIND`: the attribute that names a qdisc (`"noqueue"`, `"fq_codel"`, `"tbf"`, …).
const TCA_KIND: u16 = 1;
/// The longest a netlink reply may take before the question counts as unanswered.
const REPLY_TIMEOUT: Duration = Duration::from_millis(500);

/// The index of the device that holds `addr` in this network namespace, if any does.
/// An IPv4-mapped IPv6 address (a dual-stack socket's view of an IPv4 peer) is looked up as
/// the IPv4 address it carries.
pub fn device_of_address(addr: IpAddr) -> io::Result<Option<u32>> {
    let addr = match addr {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(IpAddr::V6(v6), IpAddr::V4),
        v4 => v4,
    };
    let mut head: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: `head` is a valid out-pointer; on success the list is freed below.
    if unsafe { libc::getifaddrs(&mut head) } != 0 {
        return Err(io::Error::last_os_error());
    }
    let mut found = None;
    let mut cur = head;
    while !cur.is_null() {
        // SAFETY: `cur` is a node of the list getifaddrs returned, not yet freed.
        let ifa = unsafe { &*cur };
        cur = ifa.ifa_next;
        if ifa.ifa_addr.is_null() || ifa.ifa_name.is_null() {
            continue;
        }
        // SAFETY: `ifa_addr` points to a sockaddr whose family says which struct it is.
        let family = i32::from(unsafe { (*ifa.ifa_addr).sa_family });
        let here = match family {
            libc::AF_INET => {
                // SAFETY: an AF_INET address is a sockaddr_in.
                let sin = unsafe { &*ifa.ifa_addr.cast::<libc::sockaddr_in>() };
                IpAddr::from(u32::from_be(sin.sin_addr.s_addr).to_be_bytes())
            }
            libc::AF_INET6 => {
                // SAFETY: an AF_INET6 address is a sockaddr_in6.
                let sin6 = unsafe { &*ifa.ifa_addr.cast::<libc::sockaddr_in6>() };
                IpAddr::from(sin6.sin6_addr.s6_addr)
            }
            _ => continue,
        };
        if here == addr {
            // SAFETY: `ifa_name` is a NUL-terminated string owned by the list.
            let index = unsafe { libc::if_nametoindex(ifa.ifa_name) };
            if index != 0 {
                found = Some(index);
                break;
            }
        }
    }
    // SAFETY: `head` came from getifaddrs and is freed once; no reference into it survives.
    unsafe { libc::freeifaddrs(head) };
    Ok(found)
}

/// `struct tcmsg` of `<linux/rtnetlink.h>` (the libc crate does not define it).
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct TcMsg {
    family: u8,
    pad1: u8,
    pad2: u16,
    ifindex: i32,
    handle: u32,
    parent: u32,
    info: u32,
}

/// A `RTM_GETQDISC` dump request.
#[repr(C)]
struct Request {
    header: libc::nlmsghdr,
    tc: TcMsg,
}

/// The kind of the root qdisc of device `ifindex` (`"noqueue"` for loopback and an unshaped
/// veth, `"mq"`/`"fq_codel"`/`"pfifo_fast"` for a NIC, `"tbf"`/`"htb"`/… when shaped), or
/// `None` when the kernel lists none for it.
pub fn root_qdisc_kind(ifindex: u32) -> io::Result<Option<String>> {
    // SAFETY: plain socket(2); the descriptor is owned at once.
    let fd = unsafe { libc::socket(libc::AF_NETLINK, libc::SOCK_RAW | libc::SOCK_CLOEXEC, libc::NETLINK_ROUTE) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` is a new descriptor nobody else owns.
    let sock = unsafe { OwnedFd::from_raw_fd(fd) };
    let timeout = libc::timeval { tv_sec: 0, tv_usec: REPLY_TIMEOUT.as_micros() as libc::suseconds_t };
    let tlen = size_of::<libc::timeval>() as libc::socklen_t;
    // SAFETY: `timeout` is `tlen` readable bytes for the duration of the call.
    if unsafe {
        libc::setsockopt(
            sock.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_RCVTIMEO,
            (&timeout as *const libc::timeval).cast(),
            tlen,
        )
    } != 0
    {
        return Err(io::Error::last_os_error());
    }
    let len = size_of::<Request>();
    let req = Request {
        header: libc::nlmsghdr {
            nlmsg_len: len as u32,
            nlmsg_type: libc::RTM_GETQDISC,
            nlmsg_flags: (libc::NLM_F_REQUEST | libc::NLM_F_DUMP) as u16,
            nlmsg_seq: 1,
            nlmsg_pid: 0,
        },
        tc: TcMsg { family: libc::AF_UNSPEC as u8, ..Default::default() },
    };
    // SAFETY: `req` is `len` readable bytes for the duration of the call.
    let sent = unsafe { libc::send(sock.as_raw_fd(), (&req as *const Request).cast(), len, 0) };
    if sent < 0 {
        return Err(io::Error::last_os_error());
    }
    let mut buf = vec![0u8; 32 * 1024];
    let mut kind = None;
    // A dump ends with NLMSG_DONE; the bound only stops a kernel that never says so.
    for _ in 0..10_000 {
        // SAFETY: `buf` is `buf.len()` writable bytes for the duration of the call.
        let n = unsafe { libc::recv(sock.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len(), 0) };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        match scan_qdisc_dump(&buf[..n as usize], ifindex, &mut kind) {
            Scan::More => {}
            Scan::Done => return Ok(kind),
            Scan::Error(errno) => return Err(io::Error::from_raw_os_error(errno)),
        }
    }
    Ok(kind)
}

/// Where a dump stands after one datagram of it.
#[derive(Debug, PartialEq)]
enum Scan {
    More,
    Done,
    Error(i32),
}

fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_ne_bytes(b.get(at..at + 2)?.try_into().ok()?))
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_ne_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

const fn align4(n: usize) -> usize {
    (n + 3) & !3
}

/// Reads one datagram of an `RTM_GETQDISC` dump (bounds-checked; a malformed message ends the
/// scan), setting `kind` from the root qdisc of `ifindex`.
fn scan_qdisc_dump(b: &[u8], ifindex: u32, kind: &mut Option<String>) -> Scan {
    let header = size_of::<libc::nlmsghdr>();
    let tc = size_of::<TcMsg>();
    let mut off = 0;
    while off + header <= b.len() {
        let (Some(len), Some(ty)) = (u32_at(b, off), u16_at(b, off + 4)) else { return Scan::Done };
        let len = len as usize;
        if len < header || off + len > b.len() {
            return Scan::Done;
        }
        match i32::from(ty) {
            libc::NLMSG_DONE => return Scan::Done,
            libc::NLMSG_ERROR => {
                let errno = u32_at(b, off + header).map_or(0, |e| e as i32);
                return if errno == 0 { Scan::Done } else { Scan::Error(-errno) };
            }
            t if t == i32::from(libc::RTM_NEWQDISC) && len >= header + tc => {
                let msg = &b[off + header..off + len];
                let (dev, parent) = (u32_at(msg, 4), u32_at(msg, 12));
                if dev == Some(ifindex) && parent == Some(TC_H_ROOT) {
                    let mut at = align4(tc);
                    while at + 4 <= msg.len() {
                        let (Some(alen), Some(aty)) = (u16_at(msg, at), u16_at(msg, at + 2)) else { break };
                        let alen = usize::from(alen);
                        if alen < 4 || at + alen > msg.len() {
                            break;
                        }
                        if aty == TCA_KIND
                            && let Ok(name) = CStr::from_bytes_until_nul(&msg[at + 4..at + alen])
                        {
                            *kind = Some(name.to_string_lossy().into_owned());
                        }
                        at += align4(alen);
                    }
                }
            }
            _ => {}
        }
        off += align4(len);
    }
    Scan::More
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{Ipv4Addr, Ipv6Addr};

    #[test]
    fn loopback_holds_127_0_0_1_and_has_no_queue() {
        let lo = device_of_address(IpAddr::V4(Ipv4Addr::LOCALHOST)).expect("getifaddrs").expect("lo holds 127.0.0.1");
        // SAFETY: a NUL-terminated literal.
        let by_name = unsafe { libc::if_nametoindex(c"lo".as_ptr()) };
        assert_eq!(lo, by_name);
        let mapped = IpAddr::V6(Ipv4Addr::LOCALHOST.to_ipv6_mapped());
        assert_eq!(device_of_address(mapped).expect("getifaddrs"), Some(lo));
        assert_eq!(root_qdisc_kind(lo).expect("netlink").as_deref(), Some("noqueue"));
    }

    #[test]
    fn an_address_no_device_holds_has_no_device() {
        let nowhere = IpAddr::V6(Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 0x77));
        assert_eq!(device_of_address(nowhere).expect("getifaddrs"), None);
    }

    /// Builds one netlink message of `ty` with `payload`.
    fn message(ty: u16, payload: &[u8]) -> Vec<u8> {
        let len = size_of::<libc::nlmsghdr>() + payload.len();
        let mut m = Vec::new();
        m.extend_from_slice(&(len as u32).to_ne_bytes());
        m.extend_from_slice(&ty.to_ne_bytes());
        m.extend_from_slice(&[0; 10]);
        m.extend_from_slice(payload);
        m.resize(align4(m.len()), 0);
        m
    }

    fn qdisc(ifindex: u32, parent: u32, kind: &str) -> Vec<u8> {
        let mut p = vec![0u8; 4];
        p.extend_from_slice(&ifindex.to_ne_bytes());
        p.extend_from_slice(&0u32.to_ne_bytes());
        p.extend_from_slice(&parent.to_ne_bytes());
        p.extend_from_slice(&0u32.to_ne_bytes());
        let alen = 4 + kind.len() + 1;
        p.extend_from_slice(&(alen as u16).to_ne_bytes());
        p.extend_from_slice(&TCA_KIND.to_ne_bytes());
        p.extend_from_slice(kind.as_bytes());
        p.push(0);
        p.resize(align4(p.len()), 0);
        message(libc::RTM_NEWQDISC, &p)
    }

    #[test]
    fn the_dump_names_the_root_qdisc_of_the_device_asked_about() {
        let mut dump = qdisc(2, TC_H_ROOT, "mq");
        dump.extend(qdisc(7, 0x10001, "fq_codel"));
        dump.extend(qdisc(7, TC_H_ROOT, "tbf"));
        let mut kind = None;
        assert_eq!(scan_qdisc_dump(&dump, 7, &mut kind), Scan::More);
        assert_eq!(kind.as_deref(), Some("tbf"));
        assert_eq!(scan_qdisc_dump(&message(libc::NLMSG_DONE as u16, &[0; 4]), 7, &mut kind), Scan::Done);
        let mut none = None;
        assert_eq!(scan_qdisc_dump(&dump, 9, &mut none), Scan::More);
        assert_eq!(none, None);
    }

    #[test]
    fn truncated_or_lying_messages_end_the_scan_without_a_panic() {
        let whole = qdisc(7, TC_H_ROOT, "tbf");
        for cut in 0..whole.len() {
            let mut kind = None;
            let _ = scan_qdisc_dump(&whole[..cut], 7, &mut kind);
        }
        let mut lying = whole.clone();
        lying[..4].copy_from_slice(&9999u32.to_ne_bytes());
        assert_eq!(scan_qdisc_dump(&lying, 7, &mut None), Scan::Done);
        let err = message(libc::NLMSG_ERROR as u16, &(-libc::EPERM).to_ne_bytes());
        assert_eq!(scan_qdisc_dump(&err, 7, &mut None), Scan::Error(libc::EPERM));
    }
}
