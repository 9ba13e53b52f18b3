//! The control connection: a reader thread that turns socket reads into messages on a channel,
//! and the write side used by the test's own thread.
//!
//! One channel carries everything that can wake a test's thread (control bytes, a data stream
//! that reached its byte budget or failed, a data connection handed over by the acceptor), so
//! the thread waits in one place with one deadline: the next interval tick.

use crate::error::EngineError;
use crossbeam_channel::{Receiver, RecvTimeoutError, Sender, unbounded};
use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicI32, Ordering};
use std::thread::JoinHandle;
use std::time::Instant;

/// Something that woke the test thread.
#[derive(Debug)]
pub(crate) enum Wake {
    /// Bytes from the control connection.
    CtrlData(Vec<u8>),
    /// The peer closed the control connection.
    CtrlEof,
    /// Reading the control connection failed.
    CtrlError(io::Error),
    /// A stream reached the `-n`/`-k` budget.
    BudgetReached,
    /// A stream thread failed.
    StreamFailed(EngineError),
    /// Server: a data connection with this test's cookie (already read), with its accept
    /// sequence number: streams are classified by the order the client opened them.
    DataConn(TcpStream, u64),
    /// The process was asked to stop (SIGINT/SIGTERM).
    Interrupt,
}

/// The control connection of one test.
pub(crate) struct Ctrl {
    sock: TcpStream,
    tx: Sender<Wake>,
    rx: Receiver<Wake>,
    reader: Option<JoinHandle<()>>,
    /// The reader thread's kernel id (0 until it runs), so a test can pin it.
    reader_tid: Arc<AtomicI32>,
}

impl Ctrl {
    /// Starts the reader thread on a clone of `sock`.
    pub(crate) fn new(sock: TcpStream) -> io::Result<Self> {
        let (tx, rx) = unbounded();
        let mut rd = sock.try_clone()?;
        let rtx = tx.clone();
        let reader_tid = Arc::new(AtomicI32::new(0));
        let tid = Arc::clone(&reader_tid);
        let reader = std::thread::Builder::new().name("wireperf-ctrl".into()).spawn(move || {
            tid.store(wireperf_sys::current_tid(), Ordering::Release);
            let mut buf = vec![0u8; 16 * 1024];
            loop {
                match rd.read(&mut buf) {
                    Ok(0) => {
                        let _ = rtx.send(Wake::CtrlEof);
                        return;
                    }
                    Ok(n) => {
                        if rtx.send(Wake::CtrlData(buf[..n].to_vec())).is_err() {
                            return;
                        }
                    }
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) => {
                        let _ = rtx.send(Wake::CtrlError(e));
                        return;
                    }
                }
            }
        })?;
        Ok(Self { sock, tx, rx, reader: Some(reader), reader_tid })
    }

    /// Pins the reader thread to `cpu` (a server's `server_affinity`: the reader started
    /// before the parameters named the CPU). It has run by then, since the parameters came
    /// through it; it ends with the test, so nothing is restored.
    pub(crate) fn pin_reader(&self, cpu: usize) -> io::Result<()> {
        match self.reader_tid.load(Ordering::Acquire) {
            0 => Ok(()),
            tid => wireperf_sys::set_task_cpus(tid, &[cpu]),
        }
    }

    /// A sender other threads use to wake the test thread.
    pub(crate) fn notifier(&self) -> Sender<Wake> {
        self.tx.clone()
    }

    /// Writes bytes queued by the session (nothing if empty).
    pub(crate) fn send(&mut self, bytes: &[u8]) -> Result<(), EngineError> {
        if bytes.is_empty() {
            return Ok(());
        }
        self.sock.write_all(bytes).map_err(|err| EngineError::Ctrl { op: "write to", err })
    }

    /// Waits for the next wake-up until `deadline` (`None` = forever). `None` on timeout.
    pub(crate) fn wait(&self, deadline: Option<Instant>) -> Option<Wake> {
        match deadline {
            None => self.rx.recv().ok(),
            Some(d) => match self.rx.recv_deadline(d) {
                Ok(w) => Some(w),
                Err(RecvTimeoutError::Timeout) => None,
                // Cannot happen while we hold `tx`; treat like a closed control connection.
                Err(RecvTimeoutError::Disconnected) => Some(Wake::CtrlEof),
            },
        }
    }

    /// The underlying socket (for addresses and socket options).
    pub(crate) fn socket(&self) -> &TcpStream {
        &self.sock
    }
}

impl Drop for Ctrl {
    fn drop(&mut self) {
        // Shutting down wakes the reader thread out of read(); then it exits.
        let _ = self.sock.shutdown(Shutdown::Both);
        if let Some(r) = self.reader.take() {
            let _ = r.join();
        }
    }
}
