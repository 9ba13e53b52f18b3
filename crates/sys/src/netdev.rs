//! Which network device holds a local address, and what its root qdisc is.
//!
//! The engine asks this once per test and local address (its senders share the answer) to
//! tell a host-local path (loopback, or a veth pair between namespaces: no wire, nothing but
//! the host's CPUs between the two sockets) from one that ends in a device with a queue of its
//! own (a NIC, or a shaped virtual device). Both answers come straight from the kernel, each
//! from one dump over a `NETLINK_ROUTE` socket (`RTM_GETADDR`, `RTM_GETQDISC`; no `tc`
//! process). Not `getifaddrs(3)`: it dumps every link as well, and its code in libc was 70 KB
//! more of a `-P 8` client's resident memory.

use crate::cmsg::read_u32;
use socket2::{Domain, Protocol, Socket, Type};
use std::ffi::CStr;
use std::io::{self, Read};
use std::mem::size_of;
use std::net::IpAddr;
use std::time::Duration;

/// `TC_H_ROOT`: the parent handle of a device's root qdisc.
const TC_H_ROOT: u32 = 0xFFFF_FFFF;
/// `TCA_KIND`: the attribute that names a qdisc (`"noqueue"`, `"fq_codel"`, `"tbf"`, …).
const TCA_KIND: u16 = 1;
/// The longest a netlink reply may take before the question counts as unanswered.
const REPLY_TIMEOUT: Duration = Duration::from_millis(500);

/// `IFA_ADDRESS` and `IFA_LOCAL`: an interface address's attributes (on point-to-point
/// links the local address is `IFA_LOCAL`, else both are the same).
const IFA_ADDRESS: u16 = 1;
const IFA_LOCAL: u16 = 2;

/// The length of `struct ifaddrmsg` (`<linux/if_addr.h>`): family, prefix length, flags,
/// scope (a byte each), then the device index (u32).
const IFADDRMSG_LEN: usize = 8;

/// The index of the device that holds `addr` in this network namespace, if any does.
/// An IPv4-mapped IPv6 address (a dual-stack socket's view of an IPv4 peer) is looked up as
/// the IPv4 address it carries.
pub fn device_of_address(addr: IpAddr) -> io::Result<Option<u32>> {
    let (family, want) = match addr {
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => (libc::AF_INET, v4.octets().to_vec()),
            None => (libc::AF_INET6, v6.octets().to_vec()),
        },
        IpAddr::V4(v4) => (libc::AF_INET, v4.octets().to_vec()),
    };
    let mut body = [0u8; IFADDRMSG_LEN];
    body[0] = family as u8;
    let mut found = None;
    dump(libc::RTM_GETADDR, &body, |ty, msg| {
        if found.is_none() && ty == libc::RTM_NEWADDR {
            found = address_match(msg, &want);
        }
    })?;
    Ok(found)
}

/// The device index of one `RTM_NEWADDR` message if it carries `want`.
fn address_match(msg: &[u8], want: &[u8]) -> Option<u32> {
    let index = u32_at(msg, 4)?;
    let mut hit = false;
    attributes(msg, IFADDRMSG_LEN, |ty, value| hit |= matches!(ty, IFA_ADDRESS | IFA_LOCAL) && value == want);
    hit.then_some(index)
}

/// The length of `struct tcmsg` (`<linux/rtnetlink.h>`): family and two pad bytes, then the
/// device index, handle, parent and info (u32 each; the index at 4, the parent at 12).
const TCMSG_LEN: usize = 20;

/// `TCA_STATS` (the legacy `struct tc_stats`, backlog at byte 32) and `TCA_STATS2` (nested
/// generic statistics), whose `TCA_STATS_QUEUE` is a `struct gnet_stats_queue` (qlen, backlog,
/// drops, requeues, overlimits: u32 each, backlog at byte 4).
const TCA_STATS: u16 = 3;
const TCA_STATS2: u16 = 7;
const TCA_STATS_QUEUE: u16 = 3;

/// A device's root qdisc as the kernel reports it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RootQdisc {
    /// `"noqueue"` for loopback and an unshaped veth, `"mq"`/`"fq_codel"`/`"pfifo_fast"` for a
    /// NIC, `"tbf"`/`"htb"`/… when shaped.
    pub kind: String,
    /// Bytes queued in it now (what `tc -s qdisc` prints as `backlog`; for `mq`, the sum of
    /// its children); `None` when the kernel sent no statistics.
    pub backlog: Option<u32>,
}

/// The root qdisc of device `ifindex`, or `None` when the kernel lists none for it. One
/// `RTM_GETQDISC` dump: what `tc -s qdisc show dev IF` asks, without a `tc` process (the
/// latency probes read it five times a second while the load runs).
pub fn root_qdisc(ifindex: u32) -> io::Result<Option<RootQdisc>> {
    // Family AF_UNSPEC (0): every device's qdiscs.
    let mut root = None;
    dump(libc::RTM_GETQDISC, &[0u8; TCMSG_LEN], |ty, msg| {
        if ty == libc::RTM_NEWQDISC
            && let Some(q) = root_qdisc_of(msg, ifindex)
        {
            root = Some(q);
        }
    })?;
    Ok(root)
}

/// The kind of the root qdisc of device `ifindex` ([`root_qdisc`]'s `kind`).
pub fn root_qdisc_kind(ifindex: u32) -> io::Result<Option<String>> {
    Ok(root_qdisc(ifindex)?.map(|q| q.kind))
}

/// The index of the device named `name` in this network namespace (`if_nametoindex`).
pub fn index_of(name: &str) -> Option<u32> {
    let name = std::ffi::CString::new(name).ok()?;
    // SAFETY: `name` is a NUL-terminated string that outlives the call.
    let index = unsafe { libc::if_nametoindex(name.as_ptr()) };
    (index != 0).then_some(index)
}

/// One `RTM_NEWQDISC` message as a [`RootQdisc`] if it is `ifindex`'s root qdisc.
fn root_qdisc_of(msg: &[u8], ifindex: u32) -> Option<RootQdisc> {
    if u32_at(msg, 4)? != ifindex || u32_at(msg, 12)? != TC_H_ROOT {
        return None;
    }
    let (mut kind, mut queue, mut legacy) = (None, None, None);
    attributes(msg, TCMSG_LEN, |ty, value| match ty {
        TCA_KIND => kind = CStr::from_bytes_until_nul(value).ok().map(|n| n.to_string_lossy().into_owned()),
        TCA_STATS2 => attributes(value, 0, |t, v| {
            if t == TCA_STATS_QUEUE {
                queue = u32_at(v, 4);
            }
        }),
        TCA_STATS => legacy = u32_at(value, 32),
        _ => {}
    });
    Some(RootQdisc { kind: kind?, backlog: queue.or(legacy) })
}

/// Sends one `NLM_F_DUMP` request of `kind` with `body` and hands every reply message (its
/// type and its payload after the netlink header) to `each`, until the kernel says the dump
/// is done.
fn dump(kind: u16, body: &[u8], mut each: impl FnMut(u16, &[u8])) -> io::Result<()> {
    let sock = Socket::new(Domain::from(libc::AF_NETLINK), Type::RAW, Some(Protocol::from(libc::NETLINK_ROUTE)))?;
    sock.set_read_timeout(Some(REPLY_TIMEOUT))?;
    let header = size_of::<libc::nlmsghdr>();
    let flags = (libc::NLM_F_REQUEST | libc::NLM_F_DUMP) as u16;
    let mut req = Vec::with_capacity(header + body.len());
    req.extend_from_slice(&((header + body.len()) as u32).to_ne_bytes());
    req.extend_from_slice(&kind.to_ne_bytes());
    req.extend_from_slice(&flags.to_ne_bytes());
    req.extend_from_slice(&1u32.to_ne_bytes()); // sequence number
    req.extend_from_slice(&0u32.to_ne_bytes()); // port id: the kernel
    req.extend_from_slice(body);
    sock.send(&req)?;
    // Dump datagrams are at most a page until the first read, then as large as the buffer
    // read into: 8 KiB holds any message asked for here (one that does not fit ends the scan).
    let mut buf = [0u8; 8 * 1024];
    // A dump ends with NLMSG_DONE; the bound only stops a kernel that never says so.
    for _ in 0..10_000 {
        let n = (&sock).read(&mut buf)?;
        match scan(&buf[..n], &mut each) {
            Scan::More => {}
            Scan::Done => return Ok(()),
            Scan::Error(errno) => return Err(io::Error::from_raw_os_error(errno)),
        }
    }
    Ok(())
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
    read_u32(b.get(at..)?)
}

const fn align4(n: usize) -> usize {
    (n + 3) & !3
}

/// Reads one datagram of a dump (bounds-checked; a malformed message ends the scan), handing
/// each message's type and payload to `each`.
fn scan(b: &[u8], each: &mut impl FnMut(u16, &[u8])) -> Scan {
    let header = size_of::<libc::nlmsghdr>();
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
            _ => each(ty, &b[off + header..off + len]),
        }
        off += align4(len);
    }
    Scan::More
}

/// Hands each route attribute (type, value) after the `fixed`-byte body of `msg` to `each`.
fn attributes(msg: &[u8], fixed: usize, mut each: impl FnMut(u16, &[u8])) {
    let mut at = align4(fixed);
    while at + 4 <= msg.len() {
        let (Some(alen), Some(aty)) = (u16_at(msg, at), u16_at(msg, at + 2)) else { return };
        let alen = usize::from(alen);
        if alen < 4 || at + alen > msg.len() {
            return;
        }
        // The top bits are flags (NLA_F_NESTED, NLA_F_NET_BYTEORDER), not the type.
        each(aty & 0x3fff, &msg[at + 4..at + alen]);
        at += align4(alen);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{Ipv4Addr, Ipv6Addr};

    #[test]
    fn loopback_holds_127_0_0_1_and_has_no_queue() {
        let lo = device_of_address(IpAddr::V4(Ipv4Addr::LOCALHOST)).expect("netlink").expect("lo holds 127.0.0.1");
        // SAFETY: a NUL-terminated literal.
        let by_name = unsafe { libc::if_nametoindex(c"lo".as_ptr()) };
        assert_eq!(lo, by_name);
        let mapped = IpAddr::V6(Ipv4Addr::LOCALHOST.to_ipv6_mapped());
        assert_eq!(device_of_address(mapped).expect("netlink"), Some(lo));
        assert_eq!(device_of_address(IpAddr::V6(Ipv6Addr::LOCALHOST)).expect("netlink"), Some(lo));
        assert_eq!(root_qdisc_kind(lo).expect("netlink").as_deref(), Some("noqueue"));
        assert_eq!(index_of("lo"), Some(lo));
        assert_eq!((index_of("wpnosuchdev0"), index_of("nul\0in")), (None, None));
        // The same reading `tc -s` gives: nothing queued in loopback's noqueue.
        let q = root_qdisc(lo).expect("netlink").expect("lo has a root qdisc");
        assert_eq!(q, RootQdisc { kind: "noqueue".into(), backlog: Some(0) });
    }

    #[test]
    fn an_address_no_device_holds_has_no_device() {
        let nowhere = IpAddr::V6(Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 0x77));
        assert_eq!(device_of_address(nowhere).expect("netlink"), None);
        assert_eq!(device_of_address(IpAddr::V4(Ipv4Addr::new(192, 0, 2, 77))).expect("netlink"), None);
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

    fn attribute(p: &mut Vec<u8>, ty: u16, value: &[u8]) {
        p.extend_from_slice(&((4 + value.len()) as u16).to_ne_bytes());
        p.extend_from_slice(&ty.to_ne_bytes());
        p.extend_from_slice(value);
        p.resize(align4(p.len()), 0);
    }

    fn qdisc(ifindex: u32, parent: u32, kind: &str) -> Vec<u8> {
        let mut p = vec![0u8; 4];
        for v in [ifindex, 0, parent, 0] {
            p.extend_from_slice(&v.to_ne_bytes());
        }
        attribute(&mut p, TCA_KIND, format!("{kind}\0").as_bytes());
        message(libc::RTM_NEWQDISC, &p)
    }

    fn address(ifindex: u32, ty: u16, addr: &[u8]) -> Vec<u8> {
        let mut p = vec![libc::AF_INET as u8, 24, 0, 0];
        p.extend_from_slice(&ifindex.to_ne_bytes());
        attribute(&mut p, ty, addr);
        message(libc::RTM_NEWADDR, &p)
    }

    /// The messages of `datagram` that `scan` hands on, as (type, payload).
    fn messages(datagram: &[u8]) -> (Scan, Vec<(u16, Vec<u8>)>) {
        let mut got = Vec::new();
        let end = scan(datagram, &mut |ty, m: &[u8]| got.push((ty, m.to_vec())));
        (end, got)
    }

    #[test]
    fn the_dump_names_the_root_qdisc_of_the_device_asked_about() {
        let mut dump = qdisc(2, TC_H_ROOT, "mq");
        dump.extend(qdisc(7, 0x10001, "fq_codel"));
        dump.extend(qdisc(7, TC_H_ROOT, "tbf"));
        let (end, got) = messages(&dump);
        assert_eq!((end, got.len()), (Scan::More, 3));
        let kinds: Vec<_> = got.iter().map(|(_, m)| root_qdisc_of(m, 7).map(|q| q.kind)).collect();
        assert_eq!(kinds, [None, None, Some("tbf".to_string())]);
        assert_eq!(root_qdisc_of(&got[0].1, 2).map(|q| q.kind).as_deref(), Some("mq"));
        assert_eq!(root_qdisc_of(&got[0].1, 2).unwrap().backlog, None, "no statistics sent");
    }

    #[test]
    fn the_backlog_comes_from_the_queue_statistics_nested_or_legacy() {
        let with_stats = |stats: &dyn Fn(&mut Vec<u8>)| {
            let mut p = vec![0u8; 4];
            for v in [7, 0, TC_H_ROOT, 0] {
                p.extend_from_slice(&v.to_ne_bytes());
            }
            attribute(&mut p, TCA_KIND, b"tbf\0");
            stats(&mut p);
            p
        };
        let queue: Vec<u8> = [3u32, 4500, 1, 0, 9].iter().flat_map(|v| v.to_ne_bytes()).collect();
        let nested = with_stats(&|p| {
            let mut inner = Vec::new();
            attribute(&mut inner, 1, &[0; 16]); // TCA_STATS_BASIC: bytes, packets
            attribute(&mut inner, TCA_STATS_QUEUE, &queue);
            attribute(p, TCA_STATS2 | 0x8000, &inner); // NLA_F_NESTED set
        });
        assert_eq!(root_qdisc_of(&nested, 7), Some(RootQdisc { kind: "tbf".into(), backlog: Some(4500) }));
        let mut tc_stats = vec![0u8; 36];
        tc_stats[32..36].copy_from_slice(&1200u32.to_ne_bytes());
        let legacy = with_stats(&|p| attribute(p, TCA_STATS, &tc_stats));
        assert_eq!(root_qdisc_of(&legacy, 7).unwrap().backlog, Some(1200));
        let short = with_stats(&|p| attribute(p, TCA_STATS, &[0; 8]));
        assert_eq!(root_qdisc_of(&short, 7).unwrap().backlog, None, "a short struct is not read past its end");
        assert_eq!(messages(&message(libc::NLMSG_DONE as u16, &[0; 4])).0, Scan::Done);
    }

    #[test]
    fn the_dump_finds_the_device_of_an_address_local_or_not() {
        let (_, got) =
            messages(&[address(3, IFA_ADDRESS, &[10, 0, 0, 1]), address(5, IFA_LOCAL, &[10, 0, 0, 2])].concat());
        assert_eq!(address_match(&got[0].1, &[10, 0, 0, 1]), Some(3));
        assert_eq!(address_match(&got[1].1, &[10, 0, 0, 2]), Some(5));
        assert_eq!(address_match(&got[0].1, &[10, 0, 0, 2]), None);
    }

    #[test]
    fn truncated_or_lying_messages_end_the_scan_without_a_panic() {
        let whole = [qdisc(7, TC_H_ROOT, "tbf"), address(3, IFA_LOCAL, &[10, 0, 0, 1])].concat();
        for cut in 0..whole.len() {
            let (_, got) = messages(&whole[..cut]);
            for (_, m) in got {
                let _ = (root_qdisc_of(&m, 7), address_match(&m, &[10, 0, 0, 1]));
            }
        }
        let mut lying = whole.clone();
        lying[..4].copy_from_slice(&9999u32.to_ne_bytes());
        assert_eq!(messages(&lying).0, Scan::Done);
        let mut bad_attr = qdisc(7, TC_H_ROOT, "tbf");
        let at = size_of::<libc::nlmsghdr>() + TCMSG_LEN;
        bad_attr[at..at + 2].copy_from_slice(&500u16.to_ne_bytes());
        let (_, got) = messages(&bad_attr);
        assert_eq!(root_qdisc_of(&got[0].1, 7), None, "an attribute longer than its message is not read");
        let err = message(libc::NLMSG_ERROR as u16, &(-libc::EPERM).to_ne_bytes());
        assert_eq!(messages(&err).0, Scan::Error(libc::EPERM));
    }
}
