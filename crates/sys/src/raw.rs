//! Generic `getsockopt`/`setsockopt` helpers: the one place that turns an option value into a
//! pointer and a length.
//!
//! Why not socket2 for everything: socket2 has no `TCP_INFO`, `SO_MAX_PACING_RATE`,
//! `IP_MTU_DISCOVER` or `SO_RXQ_OVFL` (see reference/rust-stack.md §1.3), so those go through
//! these helpers. They are restricted to [`Pod`] types so that reading kernel bytes into a value
//! can never create an invalid value.

use std::io;
use std::mem::{MaybeUninit, size_of};
use std::os::fd::{AsRawFd, BorrowedFd};

/// Plain old data: any bit pattern (including all zeroes) is a valid value.
///
/// # Safety
/// Implement only for `#[repr(C)]` integer-only types with no padding invariants, no pointers
/// and no references.
pub(crate) unsafe trait Pod: Copy {}

// SAFETY: integers accept every bit pattern.
unsafe impl Pod for libc::c_int {}
// SAFETY: integers accept every bit pattern.
unsafe impl Pod for u32 {}
// SAFETY: integers accept every bit pattern.
unsafe impl Pod for u64 {}
// SAFETY: arrays of integers accept every bit pattern.
unsafe impl<const N: usize> Pod for [u32; N] {}
// SAFETY: `tcp_info` is a `#[repr(C)]` struct of u8/u16/u32/u64 fields only.
unsafe impl Pod for libc::tcp_info {}

/// Length of `T` as a `socklen_t`. Option values are at most a few hundred bytes, so the
/// conversion cannot truncate; `try_from` keeps that honest without a cast.
fn socklen_of<T>() -> io::Result<libc::socklen_t> {
    libc::socklen_t::try_from(size_of::<T>())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "option value too large"))
}

/// `setsockopt(fd, level, name, &value, sizeof value)`.
pub(crate) fn setsockopt<T: Pod>(
    fd: BorrowedFd<'_>,
    level: libc::c_int,
    name: libc::c_int,
    value: &T,
) -> io::Result<()> {
    let len = socklen_of::<T>()?;
    // SAFETY: `fd` is a live descriptor for the borrow's lifetime; `value` points to `len`
    // readable bytes that stay borrowed for the duration of the call.
    let rc = unsafe { libc::setsockopt(fd.as_raw_fd(), level, name, (value as *const T).cast(), len) };
    if rc == 0 { Ok(()) } else { Err(io::Error::last_os_error()) }
}

/// `getsockopt(fd, level, name)` into a zero-initialised `T`.
///
/// Returns the value and the number of bytes the kernel wrote. When the kernel writes fewer
/// bytes than `size_of::<T>()` (an older kernel with a shorter struct), the remaining bytes stay
/// zero.
pub(crate) fn getsockopt<T: Pod>(fd: BorrowedFd<'_>, level: libc::c_int, name: libc::c_int) -> io::Result<(T, usize)> {
    getsockopt_len::<T>(fd, level, name, size_of::<T>())
}

/// Like [`getsockopt`], but offers the kernel only `offered` bytes (at most `size_of::<T>()`).
/// Used by tests to simulate an older kernel that fills a shorter struct.
pub(crate) fn getsockopt_len<T: Pod>(
    fd: BorrowedFd<'_>,
    level: libc::c_int,
    name: libc::c_int,
    offered: usize,
) -> io::Result<(T, usize)> {
    let offered = offered.min(size_of::<T>());
    let mut len = libc::socklen_t::try_from(offered)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "option value too large"))?;
    let mut value = MaybeUninit::<T>::zeroed();
    // SAFETY: `fd` is live for the borrow; `value` has room for `size_of::<T>() >= len` bytes
    // and `len` is a valid, writable socklen_t.
    let rc = unsafe { libc::getsockopt(fd.as_raw_fd(), level, name, value.as_mut_ptr().cast(), &mut len) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `T: Pod`, so the all-zero bytes plus whatever prefix the kernel wrote form a
    // valid `T`.
    let value = unsafe { value.assume_init() };
    let written = usize::try_from(len).unwrap_or(0).min(offered);
    Ok((value, written))
}

/// Converts a syscall's `ssize_t`/`c_int` return into `io::Result<usize>` (negative → errno).
pub(crate) fn cvt(rc: isize) -> io::Result<usize> {
    usize::try_from(rc).map_err(|_| io::Error::last_os_error())
}
