//! Data streams: one OS thread per stream moving bytes on a blocking socket, TCP or UDP.
//!
//! The thread owns the hot loop and touches only its own counters (relaxed atomic stores, no
//! locks, no allocation per write). The test thread reads those counters when it samples an
//! interval, and stops the stream with a flag plus a socket shutdown.

mod budget;
mod buffer;
mod counters;
mod file;
mod low_water;
mod tcp;
mod udp;
pub(crate) mod udp_stats;
mod zerocopy;

pub(crate) use budget::Budget;
pub(crate) use counters::Counters;
pub(crate) use udp::{
    UdpOptions, UdpSpec, apply_options as apply_udp_options, client_handshake, server_handshakes, server_listen,
};
pub use zerocopy::SendMode;

use crate::ctrl::Wake;
use crate::error::EngineError;
use crossbeam_channel::Sender;
use std::net::{Shutdown, SocketAddr, TcpStream, UdpSocket};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;
use wireperf_protocol::schema::Connected;

/// What a stream thread needs to run.
#[derive(Clone, Debug)]
pub(crate) struct StreamSpec {
    /// Block size (`-l`): the unit of `-k`, of pacing, and of the receiver's low-water mark.
    pub len: usize,
    /// Unpaced TCP: bytes one write or read call may move, a whole number of blocks
    /// (see [`call_bytes`]).
    pub call_bytes: usize,
    /// Random or `0123456789…` payload.
    pub repeating_payload: bool,
    /// Target rate in bit/s (0 = unlimited).
    pub rate: u64,
    /// Fail when nothing arrives for this long while the test runs (receivers).
    pub rcv_timeout: Duration,
    /// Pin the thread to this CPU.
    pub affinity: Option<usize>,
    /// UDP settings (ignored by TCP streams).
    pub udp: UdpSpec,
    /// TCP senders: write, sendfile (`-Z`) or MSG_ZEROCOPY (`--zerocopy=z`).
    pub send_mode: SendMode,
    /// TCP receivers: discard with `MSG_TRUNC` (`--skip-rx-copy`).
    pub skip_rx_copy: bool,
    /// `-F`: send this file / write what arrives into it (TCP).
    pub file: Option<std::path::PathBuf>,
}

impl StreamSpec {
    /// The spec both ends derive from the test's parameters; what is local to this side comes
    /// as arguments: its receive timeout and affinity, the zero-copy path it uses when the
    /// parameters ask for `-Z`, and its `-F` file.
    pub(crate) fn from_params(
        p: &wireperf_protocol::TestParams,
        rcv_timeout: Duration,
        affinity: Option<usize>,
        zerocopy: SendMode,
        file: Option<std::path::PathBuf>,
    ) -> Self {
        let len = p.len as usize;
        StreamSpec {
            len,
            call_bytes: call_bytes(len, p.total_streams() as usize),
            repeating_payload: p.repeating_payload,
            rate: p.bandwidth.unwrap_or(0),
            rcv_timeout,
            affinity,
            udp: UdpSpec {
                counters_64bit: p.udp_counters_64bit,
                burst: p.burst.unwrap_or(0),
                offload: udp::offload_from_env(),
            },
            send_mode: if p.zerocopy { zerocopy } else { SendMode::Write },
            skip_rx_copy: p.skip_rx_copy,
            file,
        }
    }
}

/// The socket a stream moves data on.
#[derive(Debug)]
pub(crate) enum DataSock {
    /// A TCP data connection.
    Tcp(TcpStream),
    /// A connected UDP socket (after the iperf3 UDP handshake).
    Udp(UdpSocket),
}

impl DataSock {
    fn local_addr(&self) -> std::io::Result<SocketAddr> {
        match self {
            DataSock::Tcp(s) => s.local_addr(),
            DataSock::Udp(s) => s.local_addr(),
        }
    }

    fn peer_addr(&self) -> std::io::Result<SocketAddr> {
        match self {
            DataSock::Tcp(s) => s.peer_addr(),
            DataSock::Udp(s) => s.peer_addr(),
        }
    }

    fn shutdown(&self, how: Shutdown) {
        // UDP: shutdown wakes a reader blocked in recv; a failure (not connected) is harmless
        // because every loop also polls its stop flag.
        let _ = match self {
            DataSock::Tcp(s) => s.shutdown(how),
            DataSock::Udp(s) => socket2::SockRef::from(s).shutdown(how),
        };
    }
}

impl AsFd for DataSock {
    fn as_fd(&self) -> BorrowedFd<'_> {
        match self {
            DataSock::Tcp(s) => s.as_fd(),
            DataSock::Udp(s) => s.as_fd(),
        }
    }
}

/// One data stream as the test thread sees it.
pub(crate) struct Stream {
    /// Id on the wire (1, 3, 4, 5, …).
    pub wire_id: i32,
    /// Number shown in brackets (the socket's file descriptor, as iperf3 shows).
    pub socket: i32,
    /// This host sends on it.
    pub sender: bool,
    /// Addresses for output.
    pub connected: Connected,
    /// Shared with the thread.
    pub counters: Arc<Counters>,
    sock: Arc<DataSock>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

/// What a receive loop does after a failed read, the same for TCP and UDP: stop when asked;
/// on a transient error (timeout, would-block) keep waiting unless the stream has been silent
/// past `--rcv-timeout` while the test runs; on any other error fail, unless the test is
/// already stopping or draining. `None` means: read again.
pub(crate) fn after_read_error(
    err: std::io::Error,
    transient: bool,
    stop: &AtomicBool,
    counters: &Counters,
    silent_for: Duration,
    rcv_timeout: Duration,
    fail: impl FnOnce(std::io::Error) -> EngineError,
) -> Option<Result<tcp::LoopEnd, EngineError>> {
    let stopping = stop.load(Ordering::Relaxed);
    let draining = counters.draining.load(Ordering::Relaxed);
    if transient {
        if stopping {
            return Some(Ok(tcp::LoopEnd::Stopped));
        }
        if !draining && silent_for > rcv_timeout {
            return Some(Err(EngineError::RecvTimeout));
        }
        return None;
    }
    if stopping || draining {
        return Some(Ok(tcp::LoopEnd::Stopped));
    }
    Some(Err(fail(err)))
}

/// Buffer memory all the TCP streams of one test may use for their system calls together.
const CALL_BUDGET: usize = 32 * 1024 * 1024;
/// The most one stream moves in one call.
const CALL_MAX: usize = 1024 * 1024;

/// Bytes per write/read call for each of `streams` unpaced TCP streams with `len`-byte blocks.
///
/// iperf3 makes one system call per block (128 KiB by default). On a fast path the
/// per-call cost (syscall, wake-ups, socket lock) is what limits one stream, so wireperf moves
/// whole blocks, up to 1 MiB, per call: a single loopback stream went from about 20 to 40
/// Gbit/s on the 2-vCPU VM (BENCHMARKS.md). Blocks stay the unit of `-k` and pacing; with
/// many streams the size shrinks so the buffers stay under 32 MiB in all.
fn call_bytes(len: usize, streams: usize) -> usize {
    let len = len.max(1);
    let per_stream = (CALL_BUDGET / streams.max(1)).min(CALL_MAX);
    (per_stream / len).max(1) * len
}

/// The wire ids iperf3 gives streams in creation order: 1, 3, 4, 5, …
pub(crate) fn wire_id(index: usize) -> i32 {
    if index == 0 { 1 } else { index as i32 + 2 }
}

impl Stream {
    /// Wraps a connected data socket.
    pub(crate) fn new(index: usize, sock: DataSock, sender: bool) -> Self {
        let connected = Connected {
            socket: sock.as_fd().as_raw_fd(),
            local_host: sock.local_addr().map(|a| crate::net::show_ip(a.ip())).unwrap_or_default(),
            local_port: sock.local_addr().map(|a| a.port()).unwrap_or(0),
            remote_host: sock.peer_addr().map(|a| crate::net::show_ip(a.ip())).unwrap_or_default(),
            remote_port: sock.peer_addr().map(|a| a.port()).unwrap_or(0),
        };
        Self {
            wire_id: wire_id(index),
            socket: sock.as_fd().as_raw_fd(),
            sender,
            connected,
            counters: Arc::new(Counters::default()),
            sock: Arc::new(sock),
            stop: Arc::new(AtomicBool::new(false)),
            thread: None,
        }
    }

    /// The socket, for TCP_INFO and socket options.
    pub(crate) fn socket_ref(&self) -> BorrowedFd<'_> {
        self.sock.as_fd()
    }

    /// True for a UDP stream.
    pub(crate) fn is_udp(&self) -> bool {
        matches!(*self.sock, DataSock::Udp(_))
    }

    /// The receiving socket's drop counter (`sk_drops`, what `SO_RXQ_OVFL` reports); 0 when the
    /// kernel cannot say.
    pub(crate) fn socket_drops(&self) -> u32 {
        wireperf_sys::sockopt::socket_drops(self.sock.as_fd()).unwrap_or(0)
    }

    /// Starts the stream's thread.
    pub(crate) fn start(
        &mut self,
        spec: &StreamSpec,
        budget: Option<Arc<Budget>>,
        notify: Sender<Wake>,
    ) -> Result<(), EngineError> {
        let sock = Arc::clone(&self.sock);
        let counters = Arc::clone(&self.counters);
        let stop = Arc::clone(&self.stop);
        let spec = spec.clone();
        let sender = self.sender;
        let name = format!("wireperf-{}-{}", if sender { "tx" } else { "rx" }, self.wire_id);
        let handle = std::thread::Builder::new()
            .name(name)
            .spawn(move || {
                if let Some(cpu) = spec.affinity {
                    let _ = wireperf_sys::set_thread_affinity(cpu);
                }
                let note = notify.clone();
                let on_budget = move || {
                    let _ = note.send(Wake::BudgetReached);
                };
                let res = match (&*sock, sender) {
                    (DataSock::Tcp(s), true) if spec.file.is_some() => file::send_loop(
                        s,
                        spec.file.as_deref().unwrap_or(std::path::Path::new("")),
                        &spec,
                        &counters,
                        &stop,
                    ),
                    (DataSock::Tcp(s), false) if spec.file.is_some() => file::recv_loop(
                        s,
                        spec.file.as_deref().unwrap_or(std::path::Path::new("")),
                        &spec,
                        &counters,
                        &stop,
                    ),
                    (DataSock::Tcp(s), true) => tcp::send_loop(s, &spec, &counters, &stop, budget.as_deref()),
                    (DataSock::Tcp(s), false) => {
                        tcp::recv_loop(s, &spec, &counters, &stop, budget.as_deref(), &on_budget)
                    }
                    (DataSock::Udp(s), true) => udp::send_loop(s, &spec, &counters, &stop, budget.as_deref()),
                    (DataSock::Udp(s), false) => {
                        udp::recv_loop(s, &spec, &counters, &stop, budget.as_deref(), &on_budget)
                    }
                };
                counters.record_thread_cpu();
                match res {
                    Ok(tcp::LoopEnd::Budget) => {
                        let _ = notify.send(Wake::BudgetReached);
                    }
                    Ok(_) => {}
                    Err(e) if !stop.load(Ordering::Relaxed) => {
                        let _ = notify.send(Wake::StreamFailed(e));
                    }
                    Err(_) => {}
                }
                counters.finished.store(true, Ordering::Release);
            })
            .map_err(|err| EngineError::Stream { op: "start a thread for", err })?;
        self.thread = Some(handle);
        Ok(())
    }

    /// Marks the stream as past the running phase: receive timeouts no longer apply.
    pub(crate) fn set_draining(&self) {
        self.counters.draining.store(true, Ordering::Relaxed);
    }

    /// Stops the thread and waits for it; counters are final afterwards.
    ///
    /// `hard` also shuts the socket down, which wakes a thread blocked in a read.
    pub(crate) fn stop(&mut self, hard: bool) {
        self.stop.store(true, Ordering::Relaxed);
        if hard {
            self.sock.shutdown(Shutdown::Both);
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }

    /// Half-closes the sending direction so the peer reads EOF after the last byte.
    pub(crate) fn finish_sending(&self) {
        if !self.is_udp() {
            self.sock.shutdown(Shutdown::Write);
        }
    }

    /// True while data waits in the socket's receive queue, i.e. the thread has not read it
    /// yet (it may not have been scheduled). Unknown counts as empty.
    pub(crate) fn has_queued_input(&self) -> bool {
        wireperf_sys::sockopt::receive_queue_bytes(&*self.sock).is_ok_and(|b| b > 0)
    }

    /// True once the thread has exited.
    pub(crate) fn is_finished(&self) -> bool {
        self.thread.as_ref().is_none_or(|t| t.is_finished())
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        self.stop(true);
    }
}

#[cfg(test)]
mod tests {
    use super::call_bytes;

    #[test]
    fn calls_move_whole_blocks_within_the_memory_budget() {
        const K: usize = 1024;
        assert_eq!(call_bytes(128 * K, 1), 1024 * K, "8 default blocks per call");
        assert_eq!(call_bytes(128 * K, 64), 512 * K, "32 MiB shared by 64 streams");
        assert_eq!(call_bytes(128 * K, 1000), 128 * K, "never less than one block");
        assert_eq!(call_bytes(3000, 1), 349 * 3000, "whole blocks only");
        assert_eq!(call_bytes(4096 * K, 1), 4096 * K, "a block above 1 MiB is one call");
        assert_eq!(call_bytes(0, 0), 1024 * K, "degenerate input does not panic");
    }
}
