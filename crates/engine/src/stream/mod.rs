//! Data streams: an OS thread per stream moving bytes on a blocking socket (TCP or UDP), or,
//! when a direction has more TCP streams than workers allowed (one per CPU, or what
//! `EngineTuning::stream_workers` says), shared workers moving them on nonblocking sockets (`worker`,
//! placed by `schedule`, moved between workers by `balance` through `crew`).
//!
//! The loop touches only its stream's counters (relaxed atomic stores, no locks, no
//! allocation per write). The test thread reads those counters when it samples an interval,
//! and stops the stream with a flag plus a socket shutdown.

mod balance;
mod budget;
mod buffer;
mod context;
mod counters;
mod crew;
mod file;
mod io_report;
mod loop_end;
mod low_water;
mod notsent;
mod recv_path;
pub(crate) mod schedule;
mod send_path;
mod sock;
mod spec;
mod tcp;
mod udp;
pub(crate) mod udp_stats;
mod worker;

pub(crate) use budget::Budget;
pub(crate) use counters::Counters;
pub(crate) use loop_end::{LoopEnd, after_read_error};
pub(crate) use sock::DataSock;
pub(crate) use spec::StreamSpec;
pub(crate) use udp::{
    UdpOptions, apply_options as apply_udp_options, client_handshake, default_recv_buffer as default_udp_recv_buffer,
    server_handshakes, server_listen,
};
pub(crate) use worker::{Member, WorkerLink, spawn as spawn_workers};

use crate::ctrl::Wake;
use crate::error::EngineError;
use context::LoopCtx;
use crossbeam_channel::Sender;
use std::net::Shutdown;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use wireperf_protocol::schema::Connected;

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
    runner: Runner,
}

/// What runs a stream's loop.
enum Runner {
    /// Not started, or already joined.
    None,
    /// A thread of its own.
    Thread(JoinHandle<()>),
    /// A shared worker (which the test run joins).
    Worker(WorkerLink),
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
            runner: Runner::None,
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

    /// True when this stream's loop can share a worker with others (plain TCP: no `-F` file,
    /// no `MSG_ZEROCOPY`, whose completions want a thread of their own).
    pub(crate) fn shareable(&self, spec: &StreamSpec) -> bool {
        !self.is_udp()
            && spec.file.is_none()
            && !(self.sender && spec.send_mode == crate::config::SendMode::MsgZerocopy)
    }

    /// What a shared worker needs to run this stream.
    pub(crate) fn member(&self, budget: Option<Arc<Budget>>) -> Member {
        Member {
            sock: Arc::clone(&self.sock),
            counters: Arc::clone(&self.counters),
            stop: Arc::clone(&self.stop),
            budget,
        }
    }

    /// Records that a shared worker runs this stream.
    pub(crate) fn attach_worker(&mut self, link: WorkerLink) {
        self.runner = Runner::Worker(link);
    }

    /// Starts the stream's own thread.
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
                let ctx = LoopCtx {
                    spec: &spec,
                    counters: &counters,
                    stop: &stop,
                    budget: budget.as_deref(),
                    on_budget: &on_budget,
                };
                let res = match (&*sock, sender) {
                    (DataSock::Tcp(s), true) if spec.file.is_some() => file::send_loop(s, &ctx),
                    (DataSock::Tcp(s), false) if spec.file.is_some() => file::recv_loop(s, &ctx),
                    (DataSock::Tcp(s), true) => tcp::send_loop(s, &ctx),
                    (DataSock::Tcp(s), false) => tcp::recv_loop(s, &ctx),
                    (DataSock::Udp(s), true) => udp::send_loop(s, &ctx),
                    (DataSock::Udp(s), false) => udp::recv_loop(s, &ctx),
                };
                counters.record_thread_cpu();
                match res {
                    Ok(LoopEnd::Budget) => {
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
        self.runner = Runner::Thread(handle);
        Ok(())
    }

    /// Marks the stream as past the running phase: receive timeouts no longer apply.
    pub(crate) fn set_draining(&self) {
        self.counters.draining.store(true, Ordering::Relaxed);
    }

    /// Tells the loop to stop without waiting for it.
    pub(crate) fn request_stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Runner::Worker(w) = &self.runner {
            w.wake();
        }
    }

    /// Stops the loop and waits for it; counters are final afterwards.
    ///
    /// `hard` also shuts the socket down, which wakes a thread blocked in a read.
    pub(crate) fn stop(&mut self, hard: bool) {
        self.request_stop();
        if hard {
            self.sock.shutdown(Shutdown::Both);
        }
        match std::mem::replace(&mut self.runner, Runner::None) {
            Runner::Thread(t) => {
                let _ = t.join();
            }
            Runner::Worker(w) => {
                // The worker looks at the flag when woken, at the latest after its timeout.
                while !self.counters.finished.load(Ordering::Acquire) && !w.exited() {
                    std::thread::sleep(std::time::Duration::from_millis(1));
                }
            }
            Runner::None => {}
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

    /// True once the loop has ended.
    pub(crate) fn is_finished(&self) -> bool {
        match &self.runner {
            Runner::None => true,
            Runner::Thread(t) => t.is_finished(),
            Runner::Worker(w) => self.counters.finished.load(Ordering::Acquire) || w.exited(),
        }
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        self.stop(true);
    }
}
