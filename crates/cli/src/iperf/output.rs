//! Where lines go: stdout or `--logfile`, with iperf3's `--timestamps` and `-T` prefixes.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::sync::{Arc, Mutex};

/// A line sink shared by the observers of one process.
#[derive(Clone)]
pub struct Sink {
    inner: Arc<Mutex<Inner>>,
}

struct Inner {
    out: Box<dyn Write + Send>,
    timestamps: Option<String>,
    forceflush: bool,
}

impl Sink {
    /// Stdout, or the log file (appended, as iperf3 does).
    ///
    /// Stdout is flushed after every write, `--forceflush` or not: each interval line shows
    /// when it is made, on a terminal (where iperf3's stdio is line-buffered) and through a pipe
    /// (`| tee`), and a reader that went away is noticed at the next line, which ends the run
    /// (`wireperf_sys::stdout`). A log file flushes per line only with `--forceflush`.
    pub fn open(logfile: Option<&str>, timestamps: Option<String>, forceflush: bool) -> io::Result<Self> {
        let (out, forceflush): (Box<dyn Write + Send>, bool) = match logfile {
            Some(path) => (Box::new(BufWriter::new(File::options().create(true).append(true).open(path)?)), forceflush),
            None => (Box::new(wireperf_sys::stdout::Stdout), true),
        };
        Ok(Self { inner: Arc::new(Mutex::new(Inner { out, timestamps, forceflush })) })
    }

    /// A sink that keeps everything in memory until [`Captured::take`]: the text output of a
    /// test shown in the live view, printed once the terminal is back.
    pub fn memory(timestamps: Option<String>) -> (Self, Captured) {
        let buf = Captured::default();
        let out: Box<dyn Write + Send> = Box::new(buf.clone());
        (Self { inner: Arc::new(Mutex::new(Inner { out, timestamps, forceflush: false })) }, buf)
    }

    /// Writes text made of whole lines, prefixing each with the timestamp and `prefix`.
    pub fn lines(&self, text: &str, prefix: Option<&str>) {
        if text.is_empty() {
            return;
        }
        let Ok(mut g) = self.inner.lock() else { return };
        let stamp = g.timestamps.as_deref().map(strftime_now);
        let mut buf = String::with_capacity(text.len() + 64);
        for line in text.split_inclusive('\n') {
            if let Some(s) = &stamp {
                buf.push_str(s);
            }
            if let Some(p) = prefix {
                buf.push_str(p);
            }
            buf.push_str(line);
        }
        let _ = g.out.write_all(buf.as_bytes());
        if g.forceflush {
            let _ = g.out.flush();
        }
    }

    /// Writes raw text (JSON documents) without prefixes.
    pub fn raw(&self, text: &str) {
        if let Ok(mut g) = self.inner.lock() {
            let _ = g.out.write_all(text.as_bytes());
            if g.forceflush {
                let _ = g.out.flush();
            }
        }
    }

    /// Flushes buffered output.
    pub fn flush(&self) {
        if let Ok(mut g) = self.inner.lock() {
            let _ = g.out.flush();
        }
    }
}

/// The bytes written to a [`Sink::memory`].
#[derive(Clone, Default)]
pub struct Captured(Arc<Mutex<Vec<u8>>>);

impl Captured {
    /// Everything written so far, leaving the buffer empty.
    pub fn take(&self) -> Vec<u8> {
        self.0.lock().map(|mut g| std::mem::take(&mut *g)).unwrap_or_default()
    }
}

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.lock().map_err(|_| io::Error::other("capture buffer poisoned"))?.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Formats the local time with a C strftime format (`%c ` by default), like iperf3.
fn strftime_now(fmt: &str) -> String {
    wireperf_sys::time::strftime_local(fmt).unwrap_or_default()
}
