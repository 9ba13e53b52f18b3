//! The one TCP send path, for a stream on its own thread (`tcp`) and for the streams of a
//! shared worker (`worker`): how a sender puts its repeated block on the wire, with automatic
//! fallback to plain `write()` when the kernel refuses, each fallback saying why in the
//! stream's `wireperf_io` ([`IoReport`]).
//!
//! - [`SendMode::Write`]: `write()` (a `writev` of the kept unit repeated, `buffer`).
//! - [`SendMode::Sendfile`] (`-Z`, iperf3's meaning): the block sits in a `memfd`, and each send
//!   is `sendfile(socket, memfd, offset, rest)`. The kernel references the page-cache pages
//!   instead of copying the bytes from user memory. The offset is passed per call, so the
//!   streams of a worker share one memory file without sharing a file position.
//! - [`SendMode::MsgZerocopy`] (`--zerocopy=z`, as iperf3's open PR #1720): `send(MSG_ZEROCOPY)`
//!   on the block with `SO_ZEROCOPY` on, completions reaped from the error queue. The kernel
//!   reports when it had to copy anyway (always, for loopback and veth delivery); once most of
//!   the first completions say so, the stream stops asking and uses `write()`, as the kernel
//!   documentation suggests, and reports why. Only streams on a thread of their own use it
//!   (its completion queue wants a thread that can wait on it; `schedule`).
//!
//! The split: a [`SendBuffer`] (the block repeated, and the memory file) is made once per
//! thread and shared by every stream that thread sends for; a [`StreamPath`] is one stream's
//! choice and state (a refused `sendfile` falls back for that stream only). Nothing here
//! allocates or locks per send.

use super::io_report::IoReport;
use super::spec::StreamSpec;
use crate::config::SendMode;
use std::io::{self, Write};
use std::net::TcpStream;
use wireperf_sys::zerocopy::{self as zc, MemBlock};

/// Completions to look at before judging whether `MSG_ZEROCOPY` pays off.
const ZC_JUDGE_AFTER: u64 = 64;
/// Reap the error queue every this many `MSG_ZEROCOPY` sends (and on `ENOBUFS`).
const ZC_REAP_EVERY: u64 = 32;

/// The block a thread's senders repeat, and the memory file `-Z` reads it from.
pub(super) struct SendBuffer {
    /// Copies of the block, back to back: `per_call` of them for sendfile and MSG_ZEROCOPY,
    /// else a unit that `write_repeated` repeats (`buffer::copies_kept`).
    buf: memmap2::MmapMut,
    block: usize,
    per_call: usize,
    mode: SendMode,
    /// The memory file, when `-Z` asked for one; else why not (said by each stream).
    memfd: Result<MemBlock, String>,
    /// The test hook is armed (`TestHooks`; never in a build without `test-hooks`).
    refuse_hook: bool,
}

/// One stream's path over a [`SendBuffer`].
pub(super) struct StreamPath {
    path: Path,
    /// The test hook is armed for this stream and has not fired yet.
    refuse_once: bool,
}

enum Path {
    Write,
    Sendfile,
    Zc { sent: u64, completed: u64, copied: u64 },
}

impl SendBuffer {
    /// Prepares the buffer `spec.send_mode` asks for, for calls of at most `call_cap` bytes
    /// (the stream's `call_bytes`, or less on a worker). Paced streams keep one block per
    /// call: the pacing step is a block, as in iperf3.
    pub(super) fn new(spec: &StreamSpec, call_cap: usize) -> io::Result<Self> {
        let block = spec.len.max(1);
        let per_call = if spec.rate > 0 { 1 } else { (spec.call_bytes.min(call_cap) / block).max(1) };
        let mode = spec.send_mode;
        let copies = super::buffer::copies_kept(block, per_call, mode != SendMode::Write);
        let buf = super::buffer::repeated(&super::buffer::payload(block, spec.repeating_payload), copies)?;
        let memfd = match mode {
            SendMode::Sendfile => MemBlock::new(&buf).map_err(|e| format!("memfd_create failed ({e}); using write()")),
            _ => Err(String::new()),
        };
        let refuse_hook = mode != SendMode::Write && spec.hooks.refuse_zerocopy();
        Ok(Self { buf, block, per_call, mode, memfd, refuse_hook })
    }

    /// Block length (`-l`).
    pub(super) fn block_len(&self) -> usize {
        self.block
    }

    /// How many whole blocks one call may send.
    pub(super) fn blocks_per_call(&self) -> usize {
        self.per_call
    }

    /// A stream starts sending on `sock`: records what it asked for and what it got; falls
    /// back to `write()` at once when the memfd or `SO_ZEROCOPY` cannot be had.
    pub(super) fn start(&self, sock: &TcpStream, io: &IoReport) -> StreamPath {
        io.set_send(self.mode);
        let path = match self.mode {
            SendMode::Write => Path::Write,
            SendMode::Sendfile => match &self.memfd {
                Ok(_) => Path::Sendfile,
                Err(why) => {
                    io.fall_back(why.clone());
                    Path::Write
                }
            },
            SendMode::MsgZerocopy => match zc::set_zerocopy(sock, true) {
                Ok(()) => Path::Zc { sent: 0, completed: 0, copied: 0 },
                Err(e) => {
                    io.fall_back(format!("SO_ZEROCOPY refused ({e}); using write()"));
                    Path::Write
                }
            },
        };
        StreamPath { path, refuse_once: self.refuse_hook }
    }

    /// Sends (part of) bytes `off..end` of the buffer (`end` at most `block_len() *
    /// blocks_per_call()`) on `sock` by the stream's path; returns how many bytes went out.
    pub(super) fn send(
        &self,
        p: &mut StreamPath,
        sock: &TcpStream,
        off: usize,
        end: usize,
        io: &IoReport,
    ) -> io::Result<usize> {
        let rest = self.buf.get(off..end.min(self.buf.len())).unwrap_or_default();
        let refused = std::mem::take(&mut p.refuse_once);
        match &mut p.path {
            Path::Write => super::buffer::write_repeated(sock, &self.buf, off, end),
            Path::Sendfile => {
                let r = match &self.memfd {
                    Ok(m) if !refused => zc::sendfile(sock, m, off as u64, rest.len()),
                    _ => Err(io::Error::from_raw_os_error(libc::EINVAL)),
                };
                match r {
                    Err(e) if zc::is_refusal(&e) => {
                        io.fall_back(refusal("sendfile", &e, refused));
                        p.path = Path::Write;
                        (&mut &*sock).write(rest)
                    }
                    r => r,
                }
            }
            Path::Zc { sent, .. } => {
                let r = if refused {
                    Err(io::Error::from_raw_os_error(libc::EINVAL))
                } else {
                    zc::send_zerocopy(sock, rest)
                };
                match r {
                    Ok(n) => {
                        if n > 0 {
                            *sent += 1;
                            if *sent % ZC_REAP_EVERY == 0 {
                                reap_and_judge(p, sock, io);
                            }
                        }
                        Ok(n)
                    }
                    Err(e) if e.raw_os_error() == Some(libc::ENOBUFS) => {
                        // Out of optmem for pinned pages: wait a little for completions.
                        let _ = zc::wait_errqueue(sock, 10);
                        reap_and_judge(p, sock, io);
                        Err(io::Error::from(io::ErrorKind::WouldBlock))
                    }
                    Err(e) if zc::is_refusal(&e) => {
                        io.fall_back(refusal("MSG_ZEROCOPY", &e, refused));
                        p.path = Path::Write;
                        (&mut &*sock).write(rest)
                    }
                    Err(e) => Err(e),
                }
            }
        }
    }
}

/// Reaps `MSG_ZEROCOPY` completions; switches to `write()` when the kernel copied nearly
/// every send (nothing was gained, and the notifications cost extra work).
fn reap_and_judge(p: &mut StreamPath, sock: &TcpStream, io: &IoReport) {
    let Path::Zc { sent, completed, copied } = &mut p.path else { return };
    if let Ok(r) = zc::reap_zerocopy(sock) {
        *completed += r.completed;
        *copied += r.copied;
    }
    io.set_zerocopy(*completed, *copied);
    if *completed >= ZC_JUDGE_AFTER && *copied * 10 >= *completed * 9 {
        let why = format!(
            "MSG_ZEROCOPY: the kernel copied {} of the first {} sends (local delivery, or a NIC \
             without scatter-gather); using write()",
            *copied, *completed
        );
        let outstanding = *sent - *completed;
        io.fall_back(why);
        // The pinned pages belong to the buffer, which lives as long as its sender; reap the
        // rest in `finish`.
        p.path = Path::Write;
        drain_outstanding(sock, io, outstanding);
    }
}

fn drain_outstanding(sock: &TcpStream, io: &IoReport, outstanding: u64) {
    // Bounded wait: at most 20 × 10 ms.
    let mut left = outstanding;
    for _ in 0..20 {
        if left == 0 {
            break;
        }
        let _ = zc::wait_errqueue(sock, 10);
        if let Ok(r) = zc::reap_zerocopy(sock) {
            left = left.saturating_sub(r.completed);
            io.add_zerocopy(r.completed, r.copied);
        }
    }
}

impl StreamPath {
    /// The path of a stream whose thread could not make its buffer (it ends at once): recorded
    /// as plain `write()`.
    pub(super) fn without_buffer(io: &IoReport) -> Self {
        io.set_send(SendMode::Write);
        StreamPath { path: Path::Write, refuse_once: false }
    }

    /// End of stream: collect the last `MSG_ZEROCOPY` completions so the report is complete
    /// and no page is still pinned when the block is freed.
    pub(super) fn finish(&mut self, sock: &TcpStream, io: &IoReport) {
        if let Path::Zc { sent, completed, copied } = &mut self.path {
            if let Ok(r) = zc::reap_zerocopy(sock) {
                *completed += r.completed;
                *copied += r.copied;
            }
            io.set_zerocopy(*completed, *copied);
            let left = *sent - (*completed).min(*sent);
            drain_outstanding(sock, io, left);
        }
    }
}

/// Why `what` fell back to `write()`: the kernel's refusal, or the test hook's.
#[cfg(feature = "test-hooks")]
fn refusal(what: &str, e: &io::Error, hook: bool) -> String {
    if hook {
        format!("{what} refused ({e}, {}); using write()", crate::config::REFUSE_ZEROCOPY_ENV)
    } else {
        format!("{what} refused ({e}); using write()")
    }
}

/// Why `what` fell back to `write()`: the kernel's refusal.
#[cfg(not(feature = "test-hooks"))]
fn refusal(what: &str, e: &io::Error, _hook: bool) -> String {
    format!("{what} refused ({e}); using write()")
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use std::io::Read;
    use std::net::TcpListener;
    use wireperf_protocol::schema::StreamIo;

    pub(in crate::stream) fn pair() -> (TcpStream, TcpStream) {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let c = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (s, _) = l.accept().unwrap();
        (c, s)
    }

    pub(in crate::stream) fn spec(mode: SendMode) -> StreamSpec {
        StreamSpec {
            len: 128 * 1024,
            call_bytes: 128 * 1024,
            repeating_payload: false,
            rate: 0,
            rcv_timeout: std::time::Duration::from_secs(5),
            affinity: None,
            udp: Default::default(),
            send_mode: mode,
            skip_rx_copy: false,
            file: None,
            notsent_mark: Some(crate::config::HOST_LOCAL_NOTSENT),
            local_qdiscs: Default::default(),
            workers: Default::default(),
            hooks: Default::default(),
        }
    }

    fn run(mode: SendMode, calls: usize) -> (u64, Option<StreamIo>) {
        run_spec(&spec(mode), calls)
    }

    /// Makes `calls` full calls (every block the sender may send at once) and counts what the
    /// peer read.
    fn run_spec(spec: &StreamSpec, calls: usize) -> (u64, Option<StreamIo>) {
        let (tx, mut rx) = pair();
        let reader = std::thread::spawn(move || {
            let mut n = 0u64;
            let mut b = vec![0u8; 65536];
            loop {
                match rx.read(&mut b).unwrap() {
                    0 => return n,
                    k => n += k as u64,
                }
            }
        });
        let report = IoReport::default();
        let s = SendBuffer::new(spec, usize::MAX).unwrap();
        let mut path = s.start(&tx, &report);
        let end = s.block_len() * s.blocks_per_call();
        for _ in 0..calls {
            let mut off = 0;
            while off < end {
                off += s.send(&mut path, &tx, off, end, &report).unwrap();
            }
        }
        path.finish(&tx, &report);
        tx.shutdown(std::net::Shutdown::Write).unwrap();
        (reader.join().unwrap(), report.snapshot())
    }

    #[test]
    fn sendfile_path_moves_every_byte() {
        let (n, io) = run(SendMode::Sendfile, 40);
        assert_eq!(n, 40 * 128 * 1024);
        let io = io.unwrap();
        assert_eq!((io.requested.as_str(), io.used.as_str(), io.fallback), ("sendfile", "sendfile", None));
    }

    #[test]
    fn msg_zerocopy_on_loopback_falls_back_after_copied_completions() {
        // Loopback always copies: after enough completions the sender gives up on it.
        let (n, io) = run(SendMode::MsgZerocopy, 400);
        assert_eq!(n, 400 * 128 * 1024);
        let io = io.unwrap();
        assert_eq!(io.requested, "msg_zerocopy");
        assert_eq!(io.used, "write", "{io:?}");
        assert!(io.fallback.unwrap().contains("copied"));
        let (done, copied) = (io.zerocopy_completed.unwrap(), io.zerocopy_copied.unwrap());
        assert!(done >= ZC_JUDGE_AFTER && copied * 10 >= done * 9, "{done} {copied}");
    }

    #[test]
    fn several_blocks_per_call_on_every_path_unless_paced() {
        for mode in [SendMode::Write, SendMode::Sendfile, SendMode::MsgZerocopy] {
            let sp = StreamSpec { call_bytes: 1024 * 1024, ..spec(mode) };
            let (n, io) = run_spec(&sp, 5);
            assert_eq!(n, 5 * 8 * 128 * 1024, "{mode:?}");
            assert_eq!(io.unwrap().fallback, None, "{mode:?}");
        }
        let paced = StreamSpec { call_bytes: 1024 * 1024, rate: 1_000_000, ..spec(SendMode::Write) };
        assert_eq!(SendBuffer::new(&paced, usize::MAX).unwrap().blocks_per_call(), 1);
        assert_eq!(SendBuffer::new(&sp_call(), 512 * 1024).unwrap().blocks_per_call(), 4, "a worker's cap");
    }

    fn sp_call() -> StreamSpec {
        StreamSpec { call_bytes: 1024 * 1024, ..spec(SendMode::Write) }
    }

    #[test]
    fn write_path_reports_write() {
        let (n, io) = run(SendMode::Write, 3);
        assert_eq!(n, 3 * 128 * 1024);
        assert_eq!(io.unwrap().used, "write");
    }
}
