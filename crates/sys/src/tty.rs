//! Waiting for a key on the terminal that is stdin, and noticing when that terminal is gone (its
//! window closed, `tmux kill-server`, an ssh session dropped). crossterm's event reader, once a
//! hung-up terminal wakes it, reads end-of-file in a loop at full CPU and never returns, so the
//! live view waits here first and only asks crossterm for the event when a key is really there.

use std::time::Duration;

/// What [`wait_for_input`] saw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Input {
    /// Bytes are waiting: read the event now.
    Ready,
    /// Nothing arrived within the timeout.
    Idle,
    /// The terminal's other end hung up (`POLLHUP`/`POLLERR`/`POLLNVAL`): no key will come.
    HungUp,
}

/// True when stdin is a terminal (checked once, before a view takes it over).
pub fn stdin_is_terminal() -> bool {
    // SAFETY: isatty only inspects the descriptor.
    unsafe { libc::isatty(libc::STDIN_FILENO) == 1 }
}

/// Waits up to `timeout` for input on stdin. Call it only when [`stdin_is_terminal`] was true.
pub fn wait_for_input(timeout: Duration) -> Input {
    let ms = i32::try_from(timeout.as_millis()).unwrap_or(i32::MAX);
    let mut fd = libc::pollfd { fd: libc::STDIN_FILENO, events: libc::POLLIN, revents: 0 };
    // SAFETY: one valid pollfd for the duration of the call.
    let n = unsafe { libc::poll(&mut fd, 1, ms) };
    if n <= 0 {
        // Timeout, or EINTR from a signal: the caller's loop comes back.
        Input::Idle
    } else if fd.revents & (libc::POLLHUP | libc::POLLERR | libc::POLLNVAL) != 0 {
        Input::HungUp
    } else {
        Input::Ready
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_closed_pipe_on_stdin_reads_as_hung_up_and_an_open_one_as_idle() {
        // Put a pipe on fd 0 in a child, where changing stdin harms nobody.
        let me = std::env::current_exe().unwrap();
        if std::env::var_os("WIREPERF_TTY_CHILD").is_some() {
            let got = wait_for_input(Duration::from_millis(50));
            std::process::exit(match got {
                Input::HungUp => 10,
                Input::Idle => 11,
                Input::Ready => 12,
            });
        }
        let run = |close_writer: bool| {
            let mut child = std::process::Command::new(&me)
                .args(["--exact", "tty::tests::a_closed_pipe_on_stdin_reads_as_hung_up_and_an_open_one_as_idle"])
                .env("WIREPERF_TTY_CHILD", "1")
                .stdin(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            // The writer end stays open until the child exits unless the case closes it.
            let mut writer = child.stdin.take();
            if close_writer {
                drop(writer.take());
            }
            child.wait().unwrap().code()
        };
        assert_eq!(run(true), Some(10), "closed pipe");
        assert_eq!(run(false), Some(11), "open pipe, nothing written");
    }
}
