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
    pub fn open(logfile: Option<&str>, timestamps: Option<String>, forceflush: bool) -> io::Result<Self> {
        let out: Box<dyn Write + Send> = match logfile {
            Some(path) => Box::new(BufWriter::new(File::options().create(true).append(true).open(path)?)),
            None => Box::new(BufWriter::new(io::stdout())),
        };
        Ok(Self { inner: Arc::new(Mutex::new(Inner { out, timestamps, forceflush })) })
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

/// Formats the local time with a C strftime format (`%c ` by default), like iperf3.
fn strftime_now(fmt: &str) -> String {
    wireperf_sys::time::strftime_local(fmt).unwrap_or_default()
}
