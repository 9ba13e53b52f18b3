//! Threads and blocking sockets: one OS thread per stream direction, like `wireperf-engine`,
//! reporting [`Event`]s over a channel. Self-contained so iperf 2 mode cannot disturb the
//! iperf3 engine.

mod client;
mod client_header;
mod net;
mod server;
mod tcp;
mod udp;

pub use client::run_client;
pub use server::run_server;

use crate::event::{Dir, Event, Group, Sample, Tag, TcpSnap, UdpFigures};
use crate::stats::Span;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::mpsc::Sender;
use std::time::Instant;

/// Why a run could not go ahead.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// Could not reach or resolve the server.
    #[error("connect failed: {0}")]
    Connect(std::io::Error),
    /// Could not listen.
    #[error("listener bind failed: {0}")]
    Bind(std::io::Error),
    /// Anything else on a socket.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// A message that could not be encoded (a datagram shorter than its header).
    #[error(transparent)]
    Wire(#[from] crate::wire::WireError),
}

/// Shared by every stream of one run: the event channel and counters for ids and groups.
#[derive(Clone)]
pub(crate) struct Shared {
    pub tx: Sender<Event>,
    pub interval: Option<f64>,
    pub enhanced: bool,
    next_id: Arc<AtomicU32>,
    next_group: Arc<AtomicU64>,
}

impl Shared {
    pub fn new(tx: Sender<Event>, interval: Option<f64>, enhanced: bool) -> Self {
        Shared {
            tx,
            interval: interval.filter(|i| *i > 0.0),
            enhanced,
            next_id: Arc::new(AtomicU32::new(1)),
            next_group: Arc::new(AtomicU64::new(1)),
        }
    }

    /// The next stream number.
    pub fn id(&self) -> u32 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    /// A fresh sum group of `size` members.
    pub fn group(&self, size: u32) -> Group {
        Group { key: self.next_group.fetch_add(1, Ordering::Relaxed), size }
    }

    /// Sends an event; a closed channel means output is gone, and the streams just finish.
    pub fn emit(&self, e: Event) {
        let _ = self.tx.send(e);
    }
}

/// One direction of one stream, with what it needs to report itself.
#[derive(Clone)]
pub(crate) struct StreamCtx {
    pub shared: Shared,
    pub id: u32,
    pub dir: Dir,
    pub tag: Tag,
    pub group: Group,
}

impl StreamCtx {
    /// Reports a span.
    pub fn sample(
        &self,
        (start, end): (f64, f64),
        s: Span,
        tcp: Option<TcpSnap>,
        udp: Option<UdpFigures>,
        is_final: bool,
    ) {
        self.shared.emit(Event::Sample(Sample {
            id: self.id,
            dir: self.dir,
            tag: self.tag,
            group: self.group,
            start,
            end,
            bytes: s.bytes,
            ops: s.ops,
            errs: s.errs,
            hist: s.hist,
            tcp,
            udp,
            is_final,
        }));
    }
}

/// Interval boundaries: says when `-i` seconds have passed since the last report.
pub(crate) struct Ticker {
    pub t0: Instant,
    every: Option<f64>,
    last: f64,
}

impl Ticker {
    pub fn new(every: Option<f64>) -> Self {
        Ticker { t0: Instant::now(), every, last: 0.0 }
    }

    /// Seconds since the start.
    pub fn elapsed(&self) -> f64 {
        self.t0.elapsed().as_secs_f64()
    }

    /// The finished interval, when one boundary has passed. Boundaries sit on multiples of
    /// `-i` so lines read `0.0-1.0, 1.0-2.0` even when the loop wakes a little late.
    pub fn poll(&mut self) -> Option<(f64, f64)> {
        let every = self.every?;
        let now = self.elapsed();
        let next = self.last + every;
        if now >= next {
            let span = (self.last, next);
            self.last = next;
            Some(span)
        } else {
            None
        }
    }

    /// Start of the interval in progress.
    pub fn last(&self) -> f64 {
        self.last
    }
}

/// iperf 2's payload pattern: the digits `0`–`9` repeated.
pub(crate) fn pattern(len: usize) -> Vec<u8> {
    (0..len).map(|i| b'0' + (i % 10) as u8).collect()
}
