//! How a TCP stream puts its block on the wire (`-Z`) and takes bytes off it
//! (`--skip-rx-copy`), with automatic fallback to plain `write()` when the kernel refuses.
//!
//! - [`SendMode::Sendfile`] (`-Z`, iperf3's meaning): the block sits in a `memfd`, and each send
//!   is `sendfile(socket, memfd, offset, rest)`. The kernel references the page-cache pages
//!   instead of copying the bytes from user memory.
//! - [`SendMode::MsgZerocopy`] (`--zerocopy=z`, as iperf3's open PR #1720): `send(MSG_ZEROCOPY)`
//!   on the block with `SO_ZEROCOPY` on, completions reaped from the error queue. The kernel
//!   reports when it had to copy anyway (always, for loopback and veth delivery); once most of
//!   the first completions say so, the stream stops asking and uses `write()`, as the kernel
//!   documentation suggests, and reports why.
//! - Receive with `MSG_TRUNC`: TCP discards the bytes in the kernel without copying them.
//!
//! Nothing here allocates or locks per send: the block, the memfd and the state are made once.
//! What happened is published in [`IoReport`] for the `wireperf_io` JSON extras.

use super::StreamSpec;
use crate::config::SendMode;
use std::io::{self, Write};
use std::net::TcpStream;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};
use wireperf_protocol::schema::StreamIo;
use wireperf_sys::zerocopy::{self as zc, MemBlock};

/// Test hook: when set (to anything), the first `sendfile` or `MSG_ZEROCOPY` send of every
/// stream is treated as refused with `EINVAL`, so the fallback path can be exercised end to end
/// on a kernel that would accept the call.
pub const REFUSE_ENV: &str = "WIREPERF_TEST_REFUSE_ZEROCOPY";

/// Completions to look at before judging whether `MSG_ZEROCOPY` pays off.
const ZC_JUDGE_AFTER: u64 = 64;
/// Reap the error queue every this many `MSG_ZEROCOPY` sends (and on `ENOBUFS`).
const ZC_REAP_EVERY: u64 = 32;

/// What a stream's I/O path did, written by the stream thread, read after it ended.
#[derive(Debug, Default)]
pub(crate) struct IoReport {
    requested: AtomicU8,
    used: AtomicU8,
    /// Receive side: 1 = read, 2 = MSG_TRUNC.
    recv: AtomicU8,
    fallback: OnceLock<String>,
    zc_completed: AtomicU64,
    zc_copied: AtomicU64,
    /// Receive side: the highest `SO_RCVLOWAT` the loop set (0 = never).
    low_water: AtomicU64,
    /// Send side: the `TCP_NOTSENT_LOWAT` set on a host-local path (0 = never; `notsent`).
    notsent_lowat: AtomicU64,
}

impl IoReport {
    /// Marks a sender asking for `mode` (what it uses, until a fallback says otherwise).
    pub(super) fn set_send(&self, mode: SendMode) {
        self.requested.store(mode.code(), Ordering::Relaxed);
        self.used.store(mode.code(), Ordering::Relaxed);
    }

    pub(super) fn fall_back(&self, why: String) {
        let _ = self.fallback.set(why);
        self.used.store(SendMode::Write.code(), Ordering::Relaxed);
    }

    /// Marks a receiver (`skip` = MSG_TRUNC).
    pub(crate) fn set_receive(&self, skip: bool) {
        self.recv.store(if skip { 2 } else { 1 }, Ordering::Relaxed);
    }

    /// Records a receive low-water mark the kernel accepted.
    pub(crate) fn note_low_water(&self, bytes: usize) {
        self.low_water.fetch_max(bytes as u64, Ordering::Relaxed);
    }

    /// Records the unsent-queue mark a host-local sender set (`notsent`).
    pub(crate) fn note_notsent_lowat(&self, bytes: usize) {
        self.notsent_lowat.store(bytes as u64, Ordering::Relaxed);
    }

    /// The unsent-queue mark the sender set, if it set one.
    pub(crate) fn notsent_lowat(&self) -> Option<u64> {
        Some(self.notsent_lowat.load(Ordering::Relaxed)).filter(|&b| b > 0)
    }

    /// The JSON extras, once the stream ran (None before).
    pub(crate) fn snapshot(&self) -> Option<StreamIo> {
        match self.recv.load(Ordering::Relaxed) {
            1 | 2 => {
                let name = if self.recv.load(Ordering::Relaxed) == 2 { "msg_trunc" } else { "read" };
                return Some(StreamIo {
                    direction: "receive".into(),
                    requested: name.into(),
                    used: name.into(),
                    low_water_bytes: Some(self.low_water.load(Ordering::Relaxed)).filter(|&b| b > 0),
                    ..Default::default()
                });
            }
            _ => {}
        }
        let requested = SendMode::from_code(self.requested.load(Ordering::Relaxed))?;
        let used = SendMode::from_code(self.used.load(Ordering::Relaxed)).unwrap_or(requested);
        let zc = requested == SendMode::MsgZerocopy;
        Some(StreamIo {
            direction: "send".into(),
            requested: requested.name().into(),
            used: used.name().into(),
            fallback: self.fallback.get().cloned(),
            zerocopy_completed: zc.then(|| self.zc_completed.load(Ordering::Relaxed)),
            zerocopy_copied: zc.then(|| self.zc_copied.load(Ordering::Relaxed)),
            low_water_bytes: None,
            notsent_lowat_bytes: self.notsent_lowat(),
        })
    }
}

enum Path {
    Write,
    Sendfile(MemBlock),
    Zc { sent: u64, completed: u64, copied: u64 },
}

/// Sends one fixed block over and over through the chosen path.
pub(crate) struct BlockSender<'a> {
    sock: &'a TcpStream,
    /// Copies of the block, back to back: `per_call` of them for sendfile and MSG_ZEROCOPY,
    /// else a unit that `write_repeated` repeats (`buffer::copies_kept`).
    buf: memmap2::MmapMut,
    block: usize,
    per_call: usize,
    path: Path,
    report: &'a IoReport,
    /// The test hook is armed and has not fired yet.
    refuse_once: bool,
}

impl<'a> BlockSender<'a> {
    /// Prepares the path `spec.send_mode` asks for; falls back to `write()` at once when the
    /// memfd or `SO_ZEROCOPY` cannot be had.
    pub(crate) fn new(sock: &'a TcpStream, spec: &StreamSpec, report: &'a IoReport) -> io::Result<Self> {
        let block = spec.len.max(1);
        // Paced streams keep one block per call: the pacing step is a block, as in iperf3.
        let per_call = if spec.rate > 0 { 1 } else { (spec.call_bytes / block).max(1) };
        let mode = spec.send_mode;
        let copies = super::buffer::copies_kept(block, per_call, mode != SendMode::Write);
        let buf = super::buffer::repeated(&super::buffer::payload(block, spec.repeating_payload), copies)?;
        report.set_send(mode);
        let path = match mode {
            SendMode::Write => Path::Write,
            SendMode::Sendfile => match MemBlock::new(&buf) {
                Ok(m) => Path::Sendfile(m),
                Err(e) => {
                    report.fall_back(format!("memfd_create failed ({e}); using write()"));
                    Path::Write
                }
            },
            SendMode::MsgZerocopy => match zc::set_zerocopy(sock, true) {
                Ok(()) => Path::Zc { sent: 0, completed: 0, copied: 0 },
                Err(e) => {
                    report.fall_back(format!("SO_ZEROCOPY refused ({e}); using write()"));
                    Path::Write
                }
            },
        };
        let refuse_once = mode != SendMode::Write && std::env::var_os(REFUSE_ENV).is_some();
        Ok(Self { sock, buf, block, per_call, path, report, refuse_once })
    }

    /// Block length (`-l`).
    pub(crate) fn block_len(&self) -> usize {
        self.block
    }

    /// How many whole blocks one call may send.
    pub(crate) fn blocks_per_call(&self) -> usize {
        self.per_call
    }

    /// Sends (part of) bytes `off..end` of the buffer (`end` at most `block_len() *
    /// blocks_per_call()`); returns how many bytes went out.
    pub(crate) fn send(&mut self, off: usize, end: usize) -> io::Result<usize> {
        let rest = self.buf.get(off..end.min(self.buf.len())).unwrap_or_default();
        let refused = std::mem::take(&mut self.refuse_once);
        match &mut self.path {
            Path::Write => super::buffer::write_repeated(self.sock, &self.buf, off, end),
            Path::Sendfile(m) => {
                let r = if refused {
                    Err(io::Error::from_raw_os_error(libc::EINVAL))
                } else {
                    zc::sendfile(self.sock, &*m, off as u64, rest.len())
                };
                match r {
                    Err(e) if zc::is_refusal(&e) => {
                        self.report.fall_back(refusal("sendfile", &e, refused));
                        self.path = Path::Write;
                        (&mut &*self.sock).write(rest)
                    }
                    r => r,
                }
            }
            Path::Zc { sent, .. } => {
                let r = if refused {
                    Err(io::Error::from_raw_os_error(libc::EINVAL))
                } else {
                    zc::send_zerocopy(self.sock, rest)
                };
                match r {
                    Ok(n) => {
                        if n > 0 {
                            *sent += 1;
                            if *sent % ZC_REAP_EVERY == 0 {
                                self.reap_and_judge();
                            }
                        }
                        Ok(n)
                    }
                    Err(e) if e.raw_os_error() == Some(libc::ENOBUFS) => {
                        // Out of optmem for pinned pages: wait a little for completions.
                        let _ = zc::wait_errqueue(self.sock, 10);
                        self.reap_and_judge();
                        Err(io::Error::from(io::ErrorKind::WouldBlock))
                    }
                    Err(e) if zc::is_refusal(&e) => {
                        self.report.fall_back(refusal("MSG_ZEROCOPY", &e, refused));
                        self.path = Path::Write;
                        (&mut &*self.sock).write(rest)
                    }
                    Err(e) => Err(e),
                }
            }
        }
    }

    /// Reaps `MSG_ZEROCOPY` completions; switches to `write()` when the kernel copied nearly
    /// every send (nothing was gained, and the notifications cost extra work).
    fn reap_and_judge(&mut self) {
        let Path::Zc { sent, completed, copied } = &mut self.path else { return };
        if let Ok(r) = zc::reap_zerocopy(self.sock) {
            *completed += r.completed;
            *copied += r.copied;
        }
        self.report.zc_completed.store(*completed, Ordering::Relaxed);
        self.report.zc_copied.store(*copied, Ordering::Relaxed);
        if *completed >= ZC_JUDGE_AFTER && *copied * 10 >= *completed * 9 {
            let why = format!(
                "MSG_ZEROCOPY: the kernel copied {} of the first {} sends (local delivery, or a NIC \
                 without scatter-gather); using write()",
                *copied, *completed
            );
            let outstanding = *sent - *completed;
            self.report.fall_back(why);
            // The pinned pages belong to `buf`, which lives as long as this sender; reap the
            // rest in `finish`.
            self.path = Path::Write;
            self.drain_outstanding(outstanding);
        }
    }

    fn drain_outstanding(&mut self, outstanding: u64) {
        // Bounded wait: at most 20 × 10 ms.
        let mut left = outstanding;
        for _ in 0..20 {
            if left == 0 {
                break;
            }
            let _ = zc::wait_errqueue(self.sock, 10);
            if let Ok(r) = zc::reap_zerocopy(self.sock) {
                left = left.saturating_sub(r.completed);
                self.report.zc_completed.fetch_add(r.completed, Ordering::Relaxed);
                self.report.zc_copied.fetch_add(r.copied, Ordering::Relaxed);
            }
        }
    }

    /// End of stream: collect the last `MSG_ZEROCOPY` completions so the report is complete
    /// and no page is still pinned when the block is freed.
    pub(crate) fn finish(&mut self) {
        if let Path::Zc { sent, completed, copied } = &mut self.path {
            if let Ok(r) = zc::reap_zerocopy(self.sock) {
                *completed += r.completed;
                *copied += r.copied;
            }
            self.report.zc_completed.store(*completed, Ordering::Relaxed);
            self.report.zc_copied.store(*copied, Ordering::Relaxed);
            let left = *sent - (*completed).min(*sent);
            self.drain_outstanding(left);
        }
    }
}

/// Why `what` fell back to `write()`: the kernel's refusal, or the test hook's.
pub(super) fn refusal(what: &str, e: &io::Error, hook: bool) -> String {
    if hook {
        format!("{what} refused ({e}, {REFUSE_ENV}); using write()")
    } else {
        format!("{what} refused ({e}); using write()")
    }
}

/// One receive call: `read()` into `buf`, or with `skip` a `recv(MSG_TRUNC)` that discards up
/// to `buf.len()` bytes in the kernel.
pub(crate) fn receive(sock: &TcpStream, buf: &mut [u8], skip: bool) -> io::Result<usize> {
    if skip { zc::recv_discard(sock, buf) } else { io::Read::read(&mut &*sock, buf) }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use std::io::Read;
    use std::net::TcpListener;

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
            notsent_mark: Some(super::super::spec::HOST_LOCAL_NOTSENT),
            local_qdiscs: Default::default(),
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
        let mut s = BlockSender::new(&tx, spec, &report).unwrap();
        let end = s.block_len() * s.blocks_per_call();
        for _ in 0..calls {
            let mut off = 0;
            while off < end {
                off += s.send(off, end).unwrap();
            }
        }
        s.finish();
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
        let report = IoReport::default();
        let (tx, _rx) = pair();
        assert_eq!(BlockSender::new(&tx, &paced, &report).unwrap().blocks_per_call(), 1);
    }

    #[test]
    fn write_path_reports_write() {
        let (n, io) = run(SendMode::Write, 3);
        assert_eq!(n, 3 * 128 * 1024);
        assert_eq!(io.unwrap().used, "write");
    }

    #[test]
    fn receive_with_skip_counts_the_same_bytes() {
        let (mut tx, rx) = pair();
        let w = std::thread::spawn(move || tx.write_all(&vec![7u8; 1_000_000]).unwrap());
        let mut buf = vec![0u8; 131_072];
        let mut total = 0;
        loop {
            match receive(&rx, &mut buf, true).unwrap() {
                0 => break,
                n => total += n,
            }
        }
        w.join().unwrap();
        assert_eq!(total, 1_000_000);
        assert!(buf.iter().all(|&b| b == 0), "MSG_TRUNC must not copy into the buffer");
    }
}
