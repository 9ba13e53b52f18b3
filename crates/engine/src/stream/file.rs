//! `-F FILE`: send a real file, or write what arrives into one, with iperf3's semantics.
//!
//! A sending stream reads the file from its start and stops at its end (iperf3 sets the test's
//! byte count to the file size, so the client ends the test then); a receiving stream writes
//! every byte it reads to the file. With `-P N` every stream sends the whole file and every
//! receiving stream writes into the same file, as iperf3 does; use one stream for a faithful
//! copy. This is what makes "is my disk slower than my network?" measurable with a real file.

use super::context::LoopCtx;
use super::loop_end::LoopEnd;
use crate::error::EngineError;
use std::fs::{File, OpenOptions};
use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::sync::atomic::Ordering;
use std::time::Duration;

const POLL: Duration = Duration::from_millis(50);

fn file_err(path: &Path, err: std::io::Error) -> EngineError {
    EngineError::File { path: path.display().to_string(), err }
}

fn transient(k: ErrorKind) -> bool {
    matches!(k, ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted)
}

/// Sends the file once; ends with [`LoopEnd::Budget`] at its end so the test thread ends the
/// test, as iperf3 does when the file is exhausted.
pub(crate) fn send_loop(sock: &TcpStream, ctx: &LoopCtx<'_>) -> Result<LoopEnd, EngineError> {
    let LoopCtx { spec, counters, stop, .. } = *ctx;
    let path = spec.file.as_deref().unwrap_or(Path::new(""));
    sock.set_write_timeout(Some(POLL)).map_err(|err| EngineError::Stream { op: "write to", err })?;
    let mut f = File::open(path).map_err(|e| file_err(path, e))?;
    let mut buf = vec![0u8; spec.len.max(1)];
    let mut total = 0u64;
    let mut w = sock;
    loop {
        if stop.load(Ordering::Relaxed) {
            return Ok(LoopEnd::Stopped);
        }
        let n = match f.read(&mut buf) {
            Ok(0) => return Ok(LoopEnd::Budget),
            Ok(n) => n,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => return Err(file_err(path, e)),
        };
        let mut off = 0;
        while off < n {
            match w.write(&buf[off..n]) {
                Ok(0) => {
                    let err = std::io::Error::new(ErrorKind::WriteZero, "peer closed the stream");
                    return Err(EngineError::Stream { op: "write to", err });
                }
                Ok(k) => {
                    off += k;
                    total += k as u64;
                    counters.bytes.store(total, Ordering::Relaxed);
                }
                Err(e) if transient(e.kind()) => {
                    if stop.load(Ordering::Relaxed) {
                        return Ok(LoopEnd::Stopped);
                    }
                }
                Err(err) => return Err(EngineError::Stream { op: "write to", err }),
            }
        }
    }
}

/// Receives until EOF or stopped, writing everything into the file (created or truncated).
pub(crate) fn recv_loop(sock: &TcpStream, ctx: &LoopCtx<'_>) -> Result<LoopEnd, EngineError> {
    let LoopCtx { spec, counters, stop, .. } = *ctx;
    let path = spec.file.as_deref().unwrap_or(Path::new(""));
    sock.set_read_timeout(Some(POLL)).map_err(|err| EngineError::Stream { op: "read from", err })?;
    let mut f = OpenOptions::new().write(true).create(true).truncate(true).open(path).map_err(|e| file_err(path, e))?;
    let mut buf = vec![0u8; spec.len.clamp(1, super::tcp::MAX_CALL)];
    let mut total = 0u64;
    let mut r = sock;
    loop {
        match r.read(&mut buf) {
            Ok(0) => return Ok(LoopEnd::Eof),
            Ok(n) => {
                f.write_all(&buf[..n]).map_err(|e| file_err(path, e))?;
                total += n as u64;
                counters.bytes.store(total, Ordering::Relaxed);
            }
            Err(e) if transient(e.kind()) => {
                if stop.load(Ordering::Relaxed) {
                    return Ok(LoopEnd::Stopped);
                }
            }
            Err(err) => {
                if stop.load(Ordering::Relaxed) || counters.draining.load(Ordering::Relaxed) {
                    return Ok(LoopEnd::Stopped);
                }
                return Err(EngineError::Stream { op: "read from", err });
            }
        }
    }
}
