//! Detaching from the terminal for `-D`.

use std::io;

/// Forks into the background with `daemon(3)`: the parent exits, the child continues with
/// standard streams on /dev/null. Must be called before any thread is spawned (fork keeps
/// only the calling thread).
pub fn daemonize() -> io::Result<()> {
    // SAFETY: daemon() has no memory preconditions; the caller guarantees no other threads.
    if unsafe { libc::daemon(0, 0) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}
