//! Control-message (ancillary data) buffers and a bounds-checked walker over received cmsgs.
//!
//! Used by `drop_counter` (`SO_RXQ_OVFL`), `udp_gso` (`UDP_GRO`, `UDP_SEGMENT`) and both UDP
//! receivers (`SCM_TIMESTAMPNS`, the kernel's receive time of each datagram).

use std::mem::size_of;

/// A control-message buffer aligned for `cmsghdr` (which holds a `size_t`).
#[derive(Clone, Copy)]
#[repr(C, align(8))]
pub(crate) struct CmsgBuf(pub(crate) [u8; 64]);

impl CmsgBuf {
    pub(crate) fn new() -> Self {
        CmsgBuf([0; 64])
    }
}

/// Calls `f(level, type, data)` for each control message in `msg`.
///
/// # Safety
/// `msg.msg_control` must be null or point to at least `msg.msg_controllen` initialised bytes,
/// aligned for `cmsghdr`, that stay alive and unmodified for the duration of the call (the
/// state right after a successful `recvmsg`/`recvmmsg` into a [`CmsgBuf`]).
pub(crate) unsafe fn for_each(msg: &libc::msghdr, mut f: impl FnMut(libc::c_int, libc::c_int, &[u8])) {
    if msg.msg_control.is_null() {
        return;
    }
    let start = msg.msg_control as usize;
    let end = start.saturating_add(msg.msg_controllen);
    // SAFETY: per the caller's contract, the control buffer is valid; CMSG_FIRSTHDR only reads
    // msg_control/msg_controllen and returns null when no header fits.
    let mut c = unsafe { libc::CMSG_FIRSTHDR(msg) };
    while !c.is_null() {
        // SAFETY: CMSG_FIRSTHDR/CMSG_NXTHDR return only headers that lie fully inside the
        // control buffer, which is aligned for cmsghdr.
        let hdr = unsafe { &*c };
        // SAFETY: CMSG_DATA is pointer arithmetic just past the header.
        let data = unsafe { libc::CMSG_DATA(c) } as usize;
        let hdr_end = (c as usize).saturating_add(hdr.cmsg_len);
        if hdr.cmsg_len < size_of::<libc::cmsghdr>() || hdr_end > end || data > hdr_end {
            return; // malformed or truncated (MSG_CTRUNC): stop rather than read out of bounds
        }
        // SAFETY: [data, hdr_end) lies inside the control buffer (checked just above), which is
        // initialised and borrowed for this call.
        let bytes = unsafe { std::slice::from_raw_parts(data as *const u8, hdr_end - data) };
        f(hdr.cmsg_level, hdr.cmsg_type, bytes);
        // SAFETY: `c` is a valid header inside `msg`'s control buffer; CMSG_NXTHDR bounds-checks
        // against msg_controllen and returns null at the end.
        c = unsafe { libc::CMSG_NXTHDR(msg, c) };
    }
}

/// Reads a native-endian `u32` from the first four bytes of cmsg data.
pub(crate) fn read_u32(data: &[u8]) -> Option<u32> {
    let b: [u8; 4] = data.get(..4)?.try_into().ok()?;
    Some(u32::from_ne_bytes(b))
}

/// Reads a native-endian `i32`/`c_int` from cmsg data.
pub(crate) fn read_i32(data: &[u8]) -> Option<i32> {
    let b: [u8; 4] = data.get(..4)?.try_into().ok()?;
    Some(i32::from_ne_bytes(b))
}

/// Reads an `SCM_TIMESTAMPNS` payload (a native `timespec`, `CLOCK_REALTIME`) as time since the
/// epoch; `None` if it is short or out of range.
pub(crate) fn read_timespec(data: &[u8]) -> Option<std::time::Duration> {
    let half = size_of::<libc::time_t>();
    let word = |i: usize| -> Option<i64> {
        let b = data.get(i * half..(i + 1) * half)?;
        match half {
            8 => Some(i64::from_ne_bytes(b.try_into().ok()?)),
            4 => Some(i64::from(i32::from_ne_bytes(b.try_into().ok()?))),
            _ => None,
        }
    };
    let (secs, nanos) = (u64::try_from(word(0)?).ok()?, u32::try_from(word(1)?).ok()?);
    (nanos < 1_000_000_000).then(|| std::time::Duration::new(secs, nanos))
}

/// The receive time in a received message's control data, if the kernel attached one.
///
/// # Safety
/// As for [`for_each`].
pub(crate) unsafe fn rx_stamp(msg: &libc::msghdr) -> Option<std::time::Duration> {
    let mut stamp = None;
    // SAFETY: forwarded from the caller's contract.
    unsafe {
        for_each(msg, |level, ty, data| {
            if level == libc::SOL_SOCKET && ty == libc::SCM_TIMESTAMPNS {
                stamp = read_timespec(data);
            }
        });
    }
    stamp
}
