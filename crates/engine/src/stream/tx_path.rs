//! How a shared worker's senders put the worker's one block buffer on the wire: `write()`, or
//! with `-Z` `sendfile()` from one memory file that every stream of the worker reads (the
//! offset is passed per call, so the streams do not share a file position).
//!
//! The same paths and fallbacks as `zerocopy::BlockSender`, minus `MSG_ZEROCOPY` (whose
//! streams keep a thread of their own): a refused `sendfile` falls back to `write()` for that
//! stream only, and says why in its `wireperf_io`.

use super::zerocopy::{IoReport, REFUSE_ENV};
use crate::config::SendMode;
use std::io::{self, Write};
use std::net::TcpStream;
use wireperf_sys::zerocopy::{self as zc, MemBlock};

/// One stream's path.
pub(super) struct Chosen {
    sendfile: bool,
    /// The test hook is armed for this stream and has not fired yet.
    refuse_once: bool,
}

/// The worker's side: the memory file, when `-Z` asked for one and it could be made.
pub(super) struct TxPath {
    mode: SendMode,
    memfd: Result<MemBlock, String>,
    refuse_hook: bool,
}

impl TxPath {
    /// Prepares the path `mode` asks for over `buf` (the worker's repeated block: a whole call
    /// for sendfile, else a unit that `write()` repeats).
    pub(super) fn new(buf: &[u8], mode: SendMode) -> Self {
        let mode = if mode == SendMode::Sendfile { mode } else { SendMode::Write };
        let memfd = match mode {
            SendMode::Sendfile => MemBlock::new(buf).map_err(|e| format!("memfd_create failed ({e}); using write()")),
            _ => Err(String::new()),
        };
        let refuse_hook = mode != SendMode::Write && std::env::var_os(REFUSE_ENV).is_some();
        TxPath { mode, memfd, refuse_hook }
    }

    /// A stream starts on the worker: records what it asked for and what it got.
    pub(super) fn start(&mut self, io: &IoReport) -> Chosen {
        io.set_send(self.mode);
        let sendfile = match (&self.memfd, self.mode) {
            (Ok(_), SendMode::Sendfile) => true,
            (Err(why), SendMode::Sendfile) => {
                io.fall_back(why.clone());
                false
            }
            _ => false,
        };
        Chosen { sendfile, refuse_once: sendfile && self.refuse_hook }
    }

    /// Sends (part of) bytes `off..end` of a call made of `buf` repeated, on `sock`, by the
    /// stream's path.
    pub(super) fn send(
        &self,
        p: &mut Chosen,
        sock: &TcpStream,
        buf: &[u8],
        off: usize,
        end: usize,
        io: &IoReport,
    ) -> io::Result<usize> {
        let memfd = match (&self.memfd, p.sendfile) {
            (Ok(m), true) => m,
            _ => return super::buffer::write_repeated(sock, buf, off, end),
        };
        let rest = buf.get(off..end.min(buf.len())).unwrap_or_default();
        let refused = std::mem::take(&mut p.refuse_once);
        let r = if refused {
            Err(io::Error::from_raw_os_error(libc::EINVAL))
        } else {
            zc::sendfile(sock, memfd, off as u64, rest.len())
        };
        match r {
            Err(e) if zc::is_refusal(&e) => {
                io.fall_back(super::zerocopy::refusal("sendfile", &e, refused));
                p.sendfile = false;
                (&mut &*sock).write(rest)
            }
            r => r,
        }
    }
}
