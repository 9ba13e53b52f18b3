//! Local wall-clock formatting with C's `strftime`, for iperf3's `--timestamps[=FORMAT]`.
//!
//! The format string is the user's and follows C semantics (`%c`, `%F %T`, …), so the C
//! library's own `strftime` in the local time zone is the faithful implementation.

use std::ffi::CString;
use std::io;

/// Formats the current local time with `fmt` (a C `strftime` format).
pub fn strftime_local(fmt: &str) -> io::Result<String> {
    let cfmt = CString::new(fmt).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "NUL in format"))?;
    // SAFETY: time(NULL) has no preconditions.
    let now = unsafe { libc::time(std::ptr::null_mut()) };
    // SAFETY: an all-zero `tm` is a valid value for localtime_r to overwrite.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    // SAFETY: both pointers refer to live, properly aligned locals.
    if unsafe { libc::localtime_r(&now, &mut tm) }.is_null() {
        return Err(io::Error::last_os_error());
    }
    let mut buf = vec![0u8; 256];
    // SAFETY: buf is writable for buf.len() bytes, cfmt is NUL-terminated, tm is initialised.
    let n = unsafe { libc::strftime(buf.as_mut_ptr().cast(), buf.len(), cfmt.as_ptr(), &tm) };
    buf.truncate(n);
    Ok(String::from_utf8_lossy(&buf).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_a_year() {
        let y = strftime_local("%Y").unwrap();
        assert_eq!(y.len(), 4);
        assert!(y.starts_with('2'));
        assert_eq!(strftime_local("").unwrap(), "");
    }
}
