//! Zero-copy send and copy-free receive: `sendfile` from a memory-backed file, `MSG_ZEROCOPY`
//! with error-queue completion reaping, and `recv(MSG_TRUNC)`.
//!
//! Why these three (reference/rust-stack.md §2.2–2.3, perf-baseline.md §A/F): a bulk TCP
//! stream on this class of machine is bound by per-byte kernel work on one core, and the two
//! copies (user → socket on send, socket → user on receive) are the part a tool can remove.
//!
//! - [`MemBlock`] + [`sendfile`]: the block lives in a `memfd` (no scratch file on disk, unlike
//!   iperf3's temp file); `sendfile` hands its page-cache pages to the socket by reference.
//! - [`set_zerocopy`] + [`send_zerocopy`] + [`reap_zerocopy`]: the kernel pins the user pages
//!   and reports on the socket's error queue when it released them, and whether it had to copy
//!   after all (`SO_EE_CODE_ZEROCOPY_COPIED`: always the case on loopback and veth, because
//!   packets looped to a local socket get a deferred copy).
//! - [`recv_discard`]: on TCP, `MSG_TRUNC` makes the kernel drop the bytes instead of copying
//!   them out (tcp(7), since Linux 2.4); iperf3 3.19's `--skip-rx-copy`.

use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd};

use crate::cmsg::{self, CmsgBuf};
use crate::raw;

/// `SO_EE_ORIGIN_ZEROCOPY` (linux/errqueue.h); libc does not define it.
const SO_EE_ORIGIN_ZEROCOPY: u8 = 5;
/// `SO_EE_CODE_ZEROCOPY_COPIED`: the kernel fell back to copying for this range.
const SO_EE_CODE_ZEROCOPY_COPIED: u8 = 1;

/// One block of payload in an anonymous memory file (`memfd_create`), the source for
/// [`sendfile`]. Never modified after creation, so pages lent to the socket stay valid.
#[derive(Debug)]
pub struct MemBlock {
    fd: OwnedFd,
    len: usize,
}

impl MemBlock {
    /// Creates the memory file and writes `data` into it.
    pub fn new(data: &[u8]) -> io::Result<Self> {
        // SAFETY: the name is a NUL-terminated literal; flags are valid MFD_* bits.
        let rc = unsafe { libc::memfd_create(c"wireperf-block".as_ptr(), libc::MFD_CLOEXEC) };
        if rc < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: memfd_create returned a new descriptor that nothing else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(rc) };
        let mut off = 0;
        while off < data.len() {
            let rest = data.get(off..).unwrap_or_default();
            // SAFETY: `rest` is a live, readable slice of `rest.len()` bytes; fd is open.
            let n = raw::cvt(unsafe { libc::write(fd.as_raw_fd(), rest.as_ptr().cast(), rest.len()) })?;
            if n == 0 {
                return Err(io::Error::new(io::ErrorKind::WriteZero, "memfd write returned 0"));
            }
            off += n;
        }
        Ok(Self { fd, len: data.len() })
    }

    /// Size of the block in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True for an empty block.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl AsFd for MemBlock {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }
}

/// `sendfile(out, file, &offset, count)`: sends up to `count` bytes of `file` starting at
/// `offset`; returns how many were sent. Blocking behaviour (and `SO_SNDTIMEO` → `WouldBlock`)
/// follows `out`.
///
/// Refusals that mean "this pair cannot do sendfile" are `EINVAL`/`ENOSYS`/`EOPNOTSUPP`; see
/// [`is_refusal`].
pub fn sendfile(out: impl AsFd, file: impl AsFd, offset: u64, count: usize) -> io::Result<usize> {
    let mut off = libc::off_t::try_from(offset)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "sendfile offset too large"))?;
    // SAFETY: both descriptors are live for their borrows; `off` is a valid, writable off_t.
    raw::cvt(unsafe { libc::sendfile(out.as_fd().as_raw_fd(), file.as_fd().as_raw_fd(), &mut off, count) })
}

/// True when `err` says the kernel or socket does not do this kind of send at all (as opposed
/// to a transient or connection error): the caller should fall back to plain writes.
pub fn is_refusal(err: &io::Error) -> bool {
    matches!(err.raw_os_error(), Some(libc::EINVAL | libc::ENOSYS | libc::EOPNOTSUPP | libc::ENOPROTOOPT | libc::EBADF))
}

/// `recv(fd, buf, buf.len(), MSG_TRUNC)`: on TCP the kernel discards up to `buf.len()` bytes
/// without copying them (and without touching `buf`); returns how many were discarded, 0 at
/// EOF. On other socket types `MSG_TRUNC` keeps its datagram meaning (the data is copied and
/// the real datagram length returned), which is why a real buffer is required.
pub fn recv_discard(fd: impl AsFd, buf: &mut [u8]) -> io::Result<usize> {
    // SAFETY: `buf` is a live, writable slice of `buf.len()` bytes borrowed for the call.
    raw::cvt(unsafe { libc::recv(fd.as_fd().as_raw_fd(), buf.as_mut_ptr().cast(), buf.len(), libc::MSG_TRUNC) })
}

/// Enables `SO_ZEROCOPY` (Linux ≥ 4.14; `ENOPROTOOPT` before). Required before
/// [`send_zerocopy`]: without it the flag is silently ignored.
pub fn set_zerocopy(fd: impl AsFd, on: bool) -> io::Result<()> {
    raw::setsockopt(fd.as_fd(), libc::SOL_SOCKET, libc::SO_ZEROCOPY, &libc::c_int::from(on))
}

/// Whether `SO_ZEROCOPY` is on.
pub fn zerocopy(fd: impl AsFd) -> io::Result<bool> {
    raw::getsockopt::<libc::c_int>(fd.as_fd(), libc::SOL_SOCKET, libc::SO_ZEROCOPY).map(|(v, _)| v != 0)
}

/// `send(fd, buf, MSG_ZEROCOPY)`. Each call that sends at least one byte uses the next
/// notification id (from 0). The pages of `buf` stay pinned until the id is reported by
/// [`reap_zerocopy`], so the caller must keep `buf` alive and unmodified until then.
/// `ENOBUFS` (optmem limit) means: reap, then retry.
pub fn send_zerocopy(fd: impl AsFd, buf: &[u8]) -> io::Result<usize> {
    // SAFETY: `buf` is a live, readable slice; send does not write through the pointer.
    raw::cvt(unsafe { libc::send(fd.as_fd().as_raw_fd(), buf.as_ptr().cast(), buf.len(), libc::MSG_ZEROCOPY) })
}

/// What [`reap_zerocopy`] found on the error queue.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ZcReaped {
    /// Notification ids completed (sum of range lengths).
    pub completed: u64,
    /// Of those, ids the kernel had to copy anyway.
    pub copied: u64,
    /// Highest id completed, if any.
    pub highest: Option<u32>,
}

/// Reads every queued `MSG_ZEROCOPY` completion without blocking (`MSG_ERRQUEUE |
/// MSG_DONTWAIT` until `EAGAIN`). Each notification covers the inclusive id range
/// `[ee_info, ee_data]`. Non-zerocopy errors on the queue are ignored.
pub fn reap_zerocopy(fd: impl AsFd) -> io::Result<ZcReaped> {
    let mut out = ZcReaped::default();
    // Bounded: the queue cannot hold more notifications than sends were made, and each loop
    // removes one; the cap only guards against a kernel that keeps queueing.
    for _ in 0..65_536 {
        let mut control = CmsgBuf::new();
        // SAFETY: an all-zero msghdr is valid (null pointers, zero lengths).
        let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
        msg.msg_control = control.0.as_mut_ptr().cast();
        msg.msg_controllen = control.0.len();
        // SAFETY: `msg` has no iovecs and points to `control`, which outlives the call.
        let rc = unsafe { libc::recvmsg(fd.as_fd().as_raw_fd(), &mut msg, libc::MSG_ERRQUEUE | libc::MSG_DONTWAIT) };
        if rc < 0 {
            let err = io::Error::last_os_error();
            return match err.kind() {
                io::ErrorKind::WouldBlock => Ok(out),
                io::ErrorKind::Interrupted => continue,
                _ => Err(err),
            };
        }
        // SAFETY: recvmsg succeeded; the control prefix it reports is initialised and aligned.
        unsafe {
            cmsg::for_each(&msg, |level, ty, data| {
                let ip = level == libc::SOL_IP && ty == libc::IP_RECVERR;
                let ip6 = level == libc::SOL_IPV6 && ty == libc::IPV6_RECVERR;
                if (ip || ip6)
                    && let Some(ee) = parse_extended_err(data)
                    && ee.origin == SO_EE_ORIGIN_ZEROCOPY
                    && ee.errno == 0
                {
                    let n = u64::from(ee.hi.wrapping_sub(ee.lo)) + 1;
                    out.completed += n;
                    if ee.code & SO_EE_CODE_ZEROCOPY_COPIED != 0 {
                        out.copied += n;
                    }
                    out.highest = Some(out.highest.map_or(ee.hi, |h| h.max(ee.hi)));
                }
            });
        }
    }
    Ok(out)
}

/// The fields of `struct sock_extended_err` the reaper needs.
struct ExtErr {
    errno: u32,
    origin: u8,
    code: u8,
    lo: u32,
    hi: u32,
}

/// Decodes `sock_extended_err` (u32 errno, u8 origin, u8 type, u8 code, u8 pad, u32 info,
/// u32 data) from cmsg bytes, native endian.
fn parse_extended_err(d: &[u8]) -> Option<ExtErr> {
    let u32_at = |i: usize| cmsg::read_u32(d.get(i..)?);
    Some(ExtErr { errno: u32_at(0)?, origin: *d.get(4)?, code: *d.get(6)?, lo: u32_at(8)?, hi: u32_at(12)? })
}

/// Waits up to `timeout_ms` for something on the error queue (`poll` with no events returns
/// `POLLERR` then). True when something is queued.
pub fn wait_errqueue(fd: impl AsFd, timeout_ms: i32) -> io::Result<bool> {
    let mut p = libc::pollfd { fd: fd.as_fd().as_raw_fd(), events: 0, revents: 0 };
    // SAFETY: one valid pollfd, borrowed mutably for the call.
    let rc = unsafe { libc::poll(&mut p, 1, timeout_ms) };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(rc > 0 && p.revents & libc::POLLERR != 0)
}

#[cfg(test)]
#[path = "zerocopy_tests.rs"]
mod tests;
