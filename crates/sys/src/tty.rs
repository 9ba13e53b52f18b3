//! Whether the terminal on stdin is gone (its window closed, `tmux kill-server`, an ssh session
//! dropped). A terminal reader that is not told keeps reading end-of-file: crossterm's event
//! reader then spins at full CPU forever, so the live view asks this before it reads keys.

/// True when stdin is a terminal whose other end hung up (`POLLHUP`/`POLLERR`/`POLLNVAL` on a
/// zero-timeout `poll`). Not a terminal (a pipe, `/dev/null`), or still open: false, so a
/// redirected stdin never ends a test.
pub fn stdin_terminal_hung_up() -> bool {
    // SAFETY: isatty only inspects the descriptor.
    let was_tty = unsafe { libc::isatty(libc::STDIN_FILENO) } == 1;
    let mut fd = libc::pollfd { fd: libc::STDIN_FILENO, events: libc::POLLIN, revents: 0 };
    // SAFETY: one valid pollfd, zero timeout.
    let n = unsafe { libc::poll(&mut fd, 1, 0) };
    let hung_up = n > 0 && fd.revents & (libc::POLLHUP | libc::POLLERR | libc::POLLNVAL) != 0;
    // A hung-up pty may no longer report itself as a tty (EIO), so the tty test is on the
    // descriptor's kind: a character device that is not /dev/null.
    hung_up && (was_tty || is_char_device_not_null())
}

fn is_char_device_not_null() -> bool {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let (Ok(fd0), Ok(null)) = (std::fs::metadata("/proc/self/fd/0"), std::fs::metadata("/dev/null")) else {
        return false;
    };
    fd0.file_type().is_char_device() && fd0.rdev() != null.rdev()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_test_runners_stdin_is_not_a_hung_up_terminal() {
        // Under cargo test stdin is a pipe, /dev/null or a live terminal: never "hung up".
        assert!(!stdin_terminal_hung_up());
    }
}
