//! `sendmmsg`/`recvmmsg`: many UDP datagrams per syscall on a *connected* socket.
//!
//! Measured on this project's VM (reference/rust-stack.md §2.4), `sendmmsg` alone does not
//! raise throughput: per-packet stack cost dominates, not syscall entry. It is still the right
//! fallback when GSO is unavailable ([`crate::udp_gso::UdpSender`] uses it), and `recvmmsg`
//! drains a busy receive queue with far fewer wake-ups.
//!
//! Buffers are one contiguous byte slice cut into equal slots, which matches how the engine
//! fills iperf3 datagrams (each with its own sequence header) back to back.

use std::io;
use std::os::fd::{AsFd, AsRawFd};

use crate::cmsg::{self, CmsgBuf};
use crate::raw;

/// Most datagrams moved by one call. The kernel's own cap is `UIO_MAXIOV` (1024); 64 keeps the
/// per-call headers on the stack and matches the GSO segment limit.
pub const MAX_BATCH: usize = 64;

fn invalid(msg: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, msg.to_string())
}

/// Sends `buf` as consecutive datagrams of `seg_len` bytes (the last may be shorter) with one
/// `sendmmsg`, at most [`MAX_BATCH`] of them.
///
/// Returns how many datagrams the kernel accepted, which can be fewer than offered (a
/// non-blocking socket with a full buffer, or the batch limit): the caller resends from
/// `buf[sent * seg_len..]`. Errors only if not even the first datagram could be sent.
pub fn send_batch(fd: impl AsFd, buf: &[u8], seg_len: usize) -> io::Result<usize> {
    if seg_len == 0 {
        return Err(invalid("send_batch: seg_len must be > 0"));
    }
    if buf.is_empty() {
        return Ok(0);
    }
    // SAFETY: all-zero iovec and mmsghdr are valid (null pointers, zero lengths).
    let mut iovs: [libc::iovec; MAX_BATCH] = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    let mut hdrs: [libc::mmsghdr; MAX_BATCH] = unsafe { std::mem::zeroed() };
    let mut n = 0;
    for (iov, chunk) in iovs.iter_mut().zip(buf.chunks(seg_len)) {
        // sendmmsg never writes through iov_base; the `*mut` is only the C type.
        iov.iov_base = chunk.as_ptr().cast_mut().cast();
        iov.iov_len = chunk.len();
        n += 1;
    }
    for (hdr, iov) in hdrs.iter_mut().zip(iovs.iter_mut()).take(n) {
        hdr.msg_hdr.msg_iov = iov;
        hdr.msg_hdr.msg_iovlen = 1;
    }
    let vlen = libc::c_uint::try_from(n).map_err(|_| invalid("batch too large"))?;
    // SAFETY: `hdrs[..n]` each point to one iovec in `iovs` that covers a sub-slice of `buf`;
    // `iovs`, `hdrs` and `buf` all outlive the call and are not moved during it.
    let rc = unsafe { libc::sendmmsg(fd.as_fd().as_raw_fd(), hdrs.as_mut_ptr(), vlen, 0) };
    raw::cvt(rc as isize)
}

/// Receives up to [`MAX_BATCH`] datagrams with one `recvmmsg(MSG_WAITFORONE)`.
///
/// `buf` is cut into slots of `slot_len` bytes; datagram `i` lands at
/// `buf[i * slot_len..][..lens[i]]`. On a blocking socket this waits for the first datagram and
/// then takes whatever else is already queued, without waiting for more. Returns the number of
/// datagrams received. A datagram longer than `slot_len` is truncated, as with `recv`.
///
/// `stamps[i]` gets datagram `i`'s kernel receive time (`CLOCK_REALTIME`) when the socket has
/// `SO_TIMESTAMPNS` on (see [`crate::sockopt::set_timestampns`]), else `None`; pass an empty
/// slice to skip them.
pub fn recv_batch(
    fd: impl AsFd,
    buf: &mut [u8],
    slot_len: usize,
    lens: &mut [usize],
    stamps: &mut [Option<std::time::Duration>],
) -> io::Result<usize> {
    if slot_len == 0 {
        return Err(invalid("recv_batch: slot_len must be > 0"));
    }
    let n = (buf.len() / slot_len).min(lens.len()).min(MAX_BATCH);
    if n == 0 {
        return Err(invalid("recv_batch: no room for one datagram"));
    }
    // SAFETY: all-zero iovec and mmsghdr are valid (null pointers, zero lengths).
    let mut iovs: [libc::iovec; MAX_BATCH] = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    let mut hdrs: [libc::mmsghdr; MAX_BATCH] = unsafe { std::mem::zeroed() };
    for (iov, slot) in iovs.iter_mut().zip(buf.chunks_exact_mut(slot_len)).take(n) {
        iov.iov_base = slot.as_mut_ptr().cast();
        iov.iov_len = slot.len();
    }
    let mut controls = [CmsgBuf::new(); MAX_BATCH];
    let stamped = !stamps.is_empty();
    for ((hdr, iov), control) in hdrs.iter_mut().zip(iovs.iter_mut()).zip(controls.iter_mut()).take(n) {
        hdr.msg_hdr.msg_iov = iov;
        hdr.msg_hdr.msg_iovlen = 1;
        if stamped {
            hdr.msg_hdr.msg_control = control.0.as_mut_ptr().cast();
            hdr.msg_hdr.msg_controllen = control.0.len();
        }
    }
    let vlen = libc::c_uint::try_from(n).map_err(|_| invalid("batch too large"))?;
    // SAFETY: `hdrs[..n]` each point to one iovec covering a distinct slot of `buf`, which is
    // borrowed mutably, and (when stamped) to their own control buffer in `controls`; all
    // outlive the call. A null timeout means no timeout.
    let rc = unsafe {
        libc::recvmmsg(fd.as_fd().as_raw_fd(), hdrs.as_mut_ptr(), vlen, libc::MSG_WAITFORONE, std::ptr::null_mut())
    };
    let got = raw::cvt(rc as isize)?.min(n);
    for (len, hdr) in lens.iter_mut().zip(&hdrs[..got]) {
        *len = usize::try_from(hdr.msg_len).unwrap_or(0).min(slot_len);
    }
    for (stamp, hdr) in stamps.iter_mut().zip(&hdrs[..got]) {
        // SAFETY: recvmmsg filled `hdr` for this message, so its msg_control/msg_controllen
        // describe the initialised prefix of its buffer in `controls`, alive and aligned.
        *stamp = unsafe { cmsg::rx_stamp(&hdr.msg_hdr) };
    }
    Ok(got)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{udp_pair_v4, udp_pair_v6};

    /// Datagram `i` is filled with byte `i`, so order and boundaries can be checked.
    fn numbered(count: usize, seg: usize, last: usize) -> Vec<u8> {
        let mut v = Vec::new();
        for i in 0..count {
            let len = if i + 1 == count { last } else { seg };
            v.extend(std::iter::repeat_n(i as u8, len));
        }
        v
    }

    fn recv_all(rx: &std::net::UdpSocket, want: usize, slot: usize) -> Vec<Vec<u8>> {
        let mut buf = vec![0u8; slot * MAX_BATCH];
        let mut lens = [0usize; MAX_BATCH];
        let mut out = Vec::new();
        while out.len() < want {
            let n = recv_batch(rx, &mut buf, slot, &mut lens, &mut []).unwrap();
            assert!(n >= 1);
            for (i, &len) in lens[..n].iter().enumerate() {
                out.push(buf[i * slot..][..len].to_vec());
            }
        }
        out
    }

    #[test]
    fn batch_roundtrip_with_short_last_datagram() {
        let (tx, rx) = udp_pair_v4();
        let data = numbered(11, 100, 50);
        assert_eq!(send_batch(&tx, &data, 100).unwrap(), 11);
        let got = recv_all(&rx, 11, 2048);
        assert_eq!(got.len(), 11);
        for (i, d) in got.iter().enumerate() {
            assert_eq!(d.len(), if i == 10 { 50 } else { 100 });
            assert!(d.iter().all(|&b| b == i as u8));
        }
    }

    #[test]
    fn batch_stops_at_max_batch_and_works_on_v6() {
        let (tx, rx) = udp_pair_v6();
        let data = numbered(MAX_BATCH + 6, 64, 64);
        assert_eq!(send_batch(&tx, &data, 64).unwrap(), MAX_BATCH);
        let rest = &data[MAX_BATCH * 64..];
        assert_eq!(send_batch(&tx, rest, 64).unwrap(), 6);
        assert_eq!(recv_all(&rx, MAX_BATCH + 6, 64).len(), MAX_BATCH + 6);
    }

    #[test]
    fn invalid_arguments_are_errors() {
        let (tx, rx) = udp_pair_v4();
        assert_eq!(send_batch(&tx, b"x", 0).unwrap_err().kind(), io::ErrorKind::InvalidInput);
        assert_eq!(send_batch(&tx, b"", 10).unwrap(), 0);
        let mut lens = [0usize; 4];
        let e = recv_batch(&rx, &mut [0u8; 10], 100, &mut lens, &mut []).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
        let e = recv_batch(&rx, &mut [0u8; 10], 0, &mut lens, &mut []).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
    }

    #[test]
    fn recv_batch_truncates_to_slot_and_would_block_when_empty() {
        let (tx, rx) = udp_pair_v4();
        tx.send(&[9u8; 300]).unwrap();
        let mut buf = [0u8; 256];
        let mut lens = [0usize; 2];
        assert_eq!(recv_batch(&rx, &mut buf, 128, &mut lens, &mut []).unwrap(), 1);
        assert_eq!(lens[0], 128);
        rx.set_nonblocking(true).unwrap();
        let e = recv_batch(&rx, &mut buf, 128, &mut lens, &mut []).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::WouldBlock);
    }

    #[test]
    fn recv_batch_returns_each_datagrams_kernel_receive_time() {
        let (tx, rx) = udp_pair_v4();
        crate::sockopt::set_timestampns(&rx, true).unwrap();
        // The kernel switches receive timestamping on from a work queue; until then it stamps
        // a datagram when it is read.
        std::thread::sleep(std::time::Duration::from_millis(100));
        let before = crate::clock::realtime();
        tx.send(b"one").unwrap();
        std::thread::sleep(std::time::Duration::from_millis(5));
        tx.send(b"two").unwrap();
        std::thread::sleep(std::time::Duration::from_millis(5));
        let mut buf = [0u8; 256];
        let mut lens = [0usize; 4];
        let mut stamps = [None; 4];
        let n = recv_batch(&rx, &mut buf, 64, &mut lens, &mut stamps).unwrap();
        assert_eq!(n, 2);
        let (a, b) = (stamps[0].unwrap(), stamps[1].unwrap());
        // Each datagram has its own time, taken when it arrived, not when it was read.
        assert!(a >= before && b > a, "{before:?} {a:?} {b:?}");
        assert!(b - a >= std::time::Duration::from_millis(4), "{:?} apart", b - a);
        assert!(crate::clock::realtime() - b >= std::time::Duration::from_millis(4));
    }
}
