//! Standard output that ends quietly when its reader goes away.
//!
//! `wireperf … | head -3`, `wireperf --version | grep -q …` and a log viewer closed mid-test all
//! close the pipe that is wireperf's stdout. Rust ignores `SIGPIPE`, so the next write fails
//! with `EPIPE`, and `print!` turns that into a panic with a backtrace. iperf3 dies of the
//! signal instead, silently. wireperf cannot take the signal's default action (a network tool
//! writes to sockets whose peers vanish too, and `sendfile`/`splice` do not take
//! `MSG_NOSIGNAL`), so every write to stdout goes through [`Stdout`] here:
//!
//! - the first `EPIPE` marks stdout as gone ([`reader_gone`]) and calls the hook the binary set
//!   with [`on_reader_gone`] once (wireperf's raises the interrupt flag, so a running test or
//!   server ends as on Ctrl-C: the peer is told, the run is saved);
//! - that write and every later one succeed without writing, so no caller prints an error
//!   about output nobody reads.
//!
//! Other write errors (a full disk under a redirect) are returned as they are.

use std::io::{self, Write};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

static GONE: AtomicBool = AtomicBool::new(false);
static HOOK: OnceLock<fn()> = OnceLock::new();

/// Sets what to do once when stdout's reader goes away. Only the first call counts.
pub fn on_reader_gone(hook: fn()) {
    let _ = HOOK.set(hook);
}

/// True once a write to stdout met a closed pipe.
pub fn reader_gone() -> bool {
    GONE.load(Ordering::Relaxed)
}

/// Marks stdout as gone and runs the hook, the first time only.
fn mark_gone() {
    if !GONE.swap(true, Ordering::Relaxed)
        && let Some(hook) = HOOK.get()
    {
        hook();
    }
}

/// Maps a write error: a closed pipe is the end of output, not a failure.
fn absorb(r: io::Result<()>) -> io::Result<()> {
    match r {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {
            mark_gone();
            Ok(())
        }
        other => other,
    }
}

/// A handle on the process's stdout with the behaviour of the module doc. Cheap to make: it
/// locks std's stdout per call, so lines from several threads never interleave mid-line.
#[derive(Debug, Default, Clone, Copy)]
pub struct Stdout;

impl Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.write_all(buf).map(|()| buf.len())
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        if reader_gone() {
            return Ok(());
        }
        absorb(io::stdout().lock().write_all(buf))
    }

    fn flush(&mut self) -> io::Result<()> {
        if reader_gone() {
            return Ok(());
        }
        absorb(io::stdout().lock().flush())
    }
}

/// Writes `text` to stdout and flushes it; a closed pipe ends output quietly (see the module
/// doc), any other error is returned.
pub fn print(text: &str) -> io::Result<()> {
    let mut out = Stdout;
    out.write_all(text.as_bytes())?;
    out.flush()
}

/// [`print`] with a newline, for the one-shot outputs (`--version`, a history listing).
pub fn println(text: &str) -> io::Result<()> {
    let mut line = String::with_capacity(text.len() + 1);
    line.push_str(text);
    line.push('\n');
    print(&line)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_broken_pipe_is_absorbed_and_marks_stdout_gone_once() {
        use std::sync::atomic::AtomicUsize;
        static CALLS: AtomicUsize = AtomicUsize::new(0);
        on_reader_gone(|| {
            CALLS.fetch_add(1, Ordering::Relaxed);
        });
        let epipe = || Err(io::Error::from(io::ErrorKind::BrokenPipe));
        assert!(absorb(epipe()).is_ok());
        assert!(absorb(epipe()).is_ok());
        assert!(reader_gone());
        assert_eq!(CALLS.load(Ordering::Relaxed), 1, "the hook runs once");
        // Other errors are still errors.
        let full = absorb(Err(io::Error::from(io::ErrorKind::StorageFull)));
        assert_eq!(full.map_err(|e| e.kind()), Err(io::ErrorKind::StorageFull));
        // Once gone, writes succeed without touching the real stdout.
        assert!(print("unseen\n").is_ok());
    }
}
