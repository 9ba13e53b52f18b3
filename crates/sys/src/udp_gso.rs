//! UDP segmentation offload (GSO, `UDP_SEGMENT`) and receive coalescing (GRO, `UDP_GRO`).
//!
//! GSO hands the kernel one buffer of up to 64 equal-size segments in one `sendmsg`; the stack
//! (or the NIC) cuts it into ordinary datagrams, so the peer, real iperf3 included, sees nothing
//! unusual. Each segment must still carry its own iperf3 header: the caller writes those into
//! the buffer first. On this project's VM GSO cut sender CPU per datagram about 5×
//! (reference/rust-stack.md §2.4).
//!
//! GRO is the receive side: with `UDP_GRO` on, one `recvmsg` may return several datagrams
//! glued together plus a `UDP_GRO` control message giving the segment size; [`recv_gro`] returns
//! both so the caller can walk the buffer in steps of that size.
//!
//! Capability and fallback: [`gso_supported`] probes the socket option (Linux ≥ 4.18). Even
//! then a device without checksum offload, or a segment larger than the path MTU, makes the
//! send fail with `EIO`, `EINVAL` or `EMSGSIZE`; [`UdpSender`] then switches GSO off for good and sends the
//! same datagrams with `sendmmsg` instead (the approach of quinn-udp and Tailscale).

use std::io;
use std::os::fd::{AsFd, AsRawFd};

use crate::cmsg::{self, CmsgBuf};
use crate::raw;
use crate::udp_batch::{MAX_BATCH, send_batch};

/// Most segments one GSO send may carry (`UDP_MAX_SEGMENTS` in the kernel).
pub const MAX_GSO_SEGMENTS: usize = 64;

/// Largest payload of one GSO send: the 16-bit IPv4 total length minus IP and UDP headers
/// (IPv6 allows 20 bytes more; this limit is safe for both).
pub const MAX_GSO_BYTES: usize = 65_535 - 20 - 8;

/// A receive buffer this large holds any GRO-coalesced packet (the kernel caps it below 64 KiB).
pub const GRO_BUF_LEN: usize = 65_536;

/// Whether the kernel knows `UDP_SEGMENT` on this socket (a `getsockopt` probe; no traffic).
/// False for non-UDP sockets and pre-4.18 kernels.
pub fn gso_supported(fd: impl AsFd) -> bool {
    raw::getsockopt::<libc::c_int>(fd.as_fd(), libc::SOL_UDP, libc::UDP_SEGMENT).is_ok()
}

/// Sends `buf` as datagrams of `seg_len` bytes (the last may be shorter) in one `sendmsg` with a
/// `UDP_SEGMENT` control message. All or nothing: returns `buf.len()` on success.
///
/// Errors: `InvalidInput` if `seg_len` is 0, `buf` needs more than [`MAX_GSO_SEGMENTS`]
/// segments or exceeds [`MAX_GSO_BYTES`]; `EIO`/`EINVAL` from the kernel when the route cannot
/// do GSO (see [`UdpSender`] for the fallback).
pub fn send_gso(fd: impl AsFd, buf: &[u8], seg_len: u16) -> io::Result<usize> {
    let seg = usize::from(seg_len);
    if seg == 0 || buf.len().div_ceil(seg) > MAX_GSO_SEGMENTS || buf.len() > MAX_GSO_BYTES {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("GSO send of {} bytes in {seg}-byte segments", buf.len()),
        ));
    }
    let mut iov = libc::iovec {
        // sendmsg never writes through iov_base; the `*mut` is only the C type.
        iov_base: buf.as_ptr().cast_mut().cast(),
        iov_len: buf.len(),
    };
    let mut control = CmsgBuf::new();
    // SAFETY: CMSG_SPACE is pure arithmetic on a small constant.
    let space = unsafe { libc::CMSG_SPACE(2) } as usize;
    // SAFETY: an all-zero msghdr is valid (null pointers, zero lengths).
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.0.as_mut_ptr().cast();
    msg.msg_controllen = space.min(control.0.len());
    // SAFETY: msg_control points at `control` (aligned, 64 bytes ≥ CMSG_SPACE(2) = 24), so
    // CMSG_FIRSTHDR returns a non-null header inside it, and the data area after the header has
    // room for the u16 written below.
    unsafe {
        let c = libc::CMSG_FIRSTHDR(&msg);
        (*c).cmsg_level = libc::SOL_UDP;
        (*c).cmsg_type = libc::UDP_SEGMENT;
        (*c).cmsg_len = libc::CMSG_LEN(2) as usize;
        libc::CMSG_DATA(c).cast::<u16>().write_unaligned(seg_len);
    }
    // SAFETY: `msg` points to one iovec over `buf` and to `control`; all outlive the call.
    let rc = unsafe { libc::sendmsg(fd.as_fd().as_raw_fd(), &msg, 0) };
    raw::cvt(rc)
}

/// Turns `UDP_GRO` on or off for a receiving socket.
pub fn set_gro(fd: impl AsFd, on: bool) -> io::Result<()> {
    let v: libc::c_int = on.into();
    raw::setsockopt(fd.as_fd(), libc::SOL_UDP, libc::UDP_GRO, &v)
}

/// What one [`recv_gro`] call received.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GroPacket {
    /// Bytes received.
    pub bytes: usize,
    /// Size of each coalesced datagram (the last may be shorter); `bytes` when not coalesced.
    pub segment: usize,
    /// The kernel's receive time (`CLOCK_REALTIME`), with `SO_TIMESTAMPNS` on: one for the whole
    /// packet, however many datagrams it holds.
    pub stamp: Option<std::time::Duration>,
}

impl GroPacket {
    /// Datagrams in the packet.
    pub fn datagrams(&self) -> usize {
        self.bytes.div_ceil(self.segment.max(1))
    }
}

/// Receives one (possibly GRO-coalesced) packet into `buf` (size it [`GRO_BUF_LEN`]).
///
/// The datagrams are `buf[..bytes].chunks(segment)` (the last may be shorter).
pub fn recv_gro(fd: impl AsFd, buf: &mut [u8]) -> io::Result<GroPacket> {
    let mut iov = libc::iovec { iov_base: buf.as_mut_ptr().cast(), iov_len: buf.len() };
    let mut control = CmsgBuf::new();
    // SAFETY: an all-zero msghdr is valid (null pointers, zero lengths).
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.0.as_mut_ptr().cast();
    msg.msg_controllen = control.0.len();
    // SAFETY: `msg` points to one iovec covering `buf` (borrowed mutably) and to `control`;
    // all outlive the call.
    let n = raw::cvt(unsafe { libc::recvmsg(fd.as_fd().as_raw_fd(), &mut msg, 0) })?.min(buf.len());
    let mut seg = None;
    // SAFETY: recvmsg succeeded, so msg_control/msg_controllen describe the initialised prefix
    // of `control`, which is alive and aligned.
    let stamp = unsafe {
        cmsg::for_each(&msg, |level, ty, data| {
            if level == libc::SOL_UDP && ty == libc::UDP_GRO {
                seg = cmsg::read_i32(data).and_then(|s| usize::try_from(s).ok());
            }
        });
        cmsg::rx_stamp(&msg)
    };
    let segment = seg.filter(|&s| s > 0 && s < n).unwrap_or(n);
    Ok(GroPacket { bytes: n, segment, stamp })
}

/// Sends equal-size datagrams with GSO when it works and `sendmmsg` when it does not.
///
/// Keep one per socket. The first GSO send that fails with `EIO`, `EINVAL` or `EMSGSIZE`
/// switches GSO off for this sender and the same datagrams go out through [`send_batch`]; every
/// other error is returned as is.
#[derive(Debug, Clone, Copy)]
pub struct UdpSender {
    gso: bool,
}

impl UdpSender {
    /// Probes `fd` for GSO support.
    pub fn new(fd: impl AsFd) -> Self {
        UdpSender { gso: gso_supported(fd) }
    }

    /// A sender that never uses GSO (for `--no-gso`-style switches and for tests).
    pub fn without_gso() -> Self {
        UdpSender { gso: false }
    }

    /// Whether the next send will try GSO.
    pub fn gso_enabled(&self) -> bool {
        self.gso
    }

    /// Most datagrams of `seg_len` bytes one [`UdpSender::send`] can move: size batches to this.
    pub fn max_datagrams(&self, seg_len: usize) -> usize {
        if self.gso && seg_len > 0 { (MAX_GSO_BYTES / seg_len).clamp(1, MAX_GSO_SEGMENTS) } else { MAX_BATCH }
    }

    /// Sends a prefix of `buf` as datagrams of `seg_len` bytes (the last may be shorter) and
    /// returns how many datagrams went out; resend from `buf[sent * seg_len..]`.
    pub fn send(&mut self, fd: impl AsFd, buf: &[u8], seg_len: usize) -> io::Result<usize> {
        if seg_len == 0 {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "UdpSender::send: seg_len must be > 0"));
        }
        let fd = fd.as_fd();
        let take = self.max_datagrams(seg_len).min(buf.len().div_ceil(seg_len));
        if self.gso
            && take > 1
            && let Ok(seg16) = u16::try_from(seg_len)
        {
            let chunk = &buf[..(take * seg_len).min(buf.len())];
            match send_gso(fd, chunk, seg16) {
                Ok(_) => return Ok(take),
                // Switch GSO off for good and send the same datagrams below instead.
                Err(e) if is_gso_refusal(&e) => self.gso = false,
                Err(e) => return Err(e),
            }
        }
        send_batch(fd, buf, seg_len)
    }
}

/// Errors that mean "this route cannot do GSO", after which plain datagrams may still work:
/// `EIO` (no checksum offload, or xfrm), `EINVAL` (checksums disabled, or an older kernel's
/// answer to a segment above the MTU), `EMSGSIZE` (newer kernels' answer to a segment above the
/// MTU; sent without GSO, such a datagram is fragmented instead).
fn is_gso_refusal(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::EIO | libc::EINVAL | libc::EMSGSIZE))
}

#[cfg(test)]
#[path = "udp_gso_tests.rs"]
mod tests;
