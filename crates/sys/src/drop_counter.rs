//! Receiving a UDP datagram together with the socket's kernel drop counter (`SO_RXQ_OVFL`).
//!
//! iperf3 infers loss from sequence-number gaps, which cannot tell "lost on the wire" from
//! "dropped by our own socket because the receive buffer was full". With `SO_RXQ_OVFL` enabled
//! ([`crate::sockopt::set_rxq_ovfl`]) the kernel attaches a `SOL_SOCKET/SO_RXQ_OVFL` control
//! message carrying the socket's *cumulative* drop count to each datagram, so the engine can
//! report local receive-buffer drops separately and the doctor can advise a bigger `-w`.
//!
//! The kernel attaches the message only once the count is non-zero, so `None` means "no drops
//! so far" (or the option is off). The counter is a wrapping `u32`: take wrapping differences.

use std::io;
use std::os::fd::{AsFd, AsRawFd};

use crate::cmsg::{self, CmsgBuf};
use crate::raw;

/// `recvmsg` one datagram into `buf`; returns the payload length and the drop counter from the
/// `SO_RXQ_OVFL` control message, if one came with it.
///
/// Blocking behaviour follows the socket (non-blocking sockets return `WouldBlock`). A datagram
/// longer than `buf` is truncated to `buf.len()`, as with `recv`.
pub fn recv_with_drop_counter(fd: impl AsFd, buf: &mut [u8]) -> io::Result<(usize, Option<u32>)> {
    let mut iov = libc::iovec { iov_base: buf.as_mut_ptr().cast(), iov_len: buf.len() };
    let mut control = CmsgBuf::new();
    // SAFETY: an all-zero msghdr is valid (null pointers, zero lengths).
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.0.as_mut_ptr().cast();
    msg.msg_controllen = control.0.len();
    // SAFETY: `msg` points to one iovec covering `buf` (writable, borrowed mutably) and to the
    // control buffer; both outlive the call. The fd is live for the borrow.
    let n = raw::cvt(unsafe { libc::recvmsg(fd.as_fd().as_raw_fd(), &mut msg, 0) })?;
    let mut drops = None;
    // SAFETY: recvmsg succeeded, so msg_control/msg_controllen describe the initialised prefix
    // of `control`, which is alive and aligned.
    unsafe {
        cmsg::for_each(&msg, |level, ty, data| {
            if level == libc::SOL_SOCKET && ty == libc::SO_RXQ_OVFL {
                drops = cmsg::read_u32(data);
            }
        });
    }
    Ok((n.min(buf.len()), drops))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sockopt::{set_recv_buffer, set_rxq_ovfl};
    use crate::testutil::udp_pair_v4;

    #[test]
    fn no_drops_means_no_counter() {
        let (tx, rx) = udp_pair_v4();
        set_rxq_ovfl(&rx, true).unwrap();
        tx.send(b"hello").unwrap();
        let mut buf = [0u8; 64];
        let (n, drops) = recv_with_drop_counter(&rx, &mut buf).unwrap();
        assert_eq!(&buf[..n], b"hello");
        assert_eq!(drops, None);
    }

    #[test]
    fn overflowing_the_receive_queue_is_counted() {
        let (tx, rx) = udp_pair_v4();
        set_rxq_ovfl(&rx, true).unwrap();
        set_recv_buffer(&rx, 4096).unwrap(); // smallest: a few datagrams fit
        let payload = [0x55u8; 1000];
        for _ in 0..200 {
            tx.send(&payload).unwrap(); // loopback UDP never blocks; excess is dropped at rx
        }
        rx.set_nonblocking(true).unwrap();
        let mut buf = [0u8; 2048];
        let mut queued = 0;
        while let Ok((n, _)) = recv_with_drop_counter(&rx, &mut buf) {
            assert_eq!(n, 1000);
            queued += 1;
        }
        // Datagrams queued after the drops carry the cumulative count. Read up to the marker
        // (counting any flood datagram the kernel delivered late) and check the total.
        rx.set_nonblocking(false).unwrap();
        tx.send(b"after").unwrap();
        let drops = loop {
            let (n, drops) = recv_with_drop_counter(&rx, &mut buf).unwrap();
            if &buf[..n] == b"after" {
                break drops;
            }
            queued += 1;
        };
        assert!(queued > 0 && queued < 200, "queued {queued}");
        assert_eq!(drops, Some(200 - queued), "every datagram not queued was dropped");
    }

    #[test]
    fn truncates_like_recv() {
        let (tx, rx) = udp_pair_v4();
        tx.send(&[1u8; 100]).unwrap();
        let mut small = [0u8; 10];
        let (n, drops) = recv_with_drop_counter(&rx, &mut small).unwrap();
        assert_eq!((n, drops), (10, None));
    }

    #[test]
    fn would_block_on_empty_nonblocking_socket() {
        let (_tx, rx) = udp_pair_v4();
        rx.set_nonblocking(true).unwrap();
        let e = recv_with_drop_counter(&rx, &mut [0u8; 8]).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::WouldBlock);
    }
}
