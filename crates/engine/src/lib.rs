//! wireperf's test engine: iperf3 sessions over real sockets.
//!
//! The engine drives the sans-I/O sessions of `wireperf-protocol` over a control connection,
//! runs one OS thread per data stream with blocking sockets, and turns stream counters into the
//! `-J` schema values (`Interval`, `End`) that every renderer prints from. It never prints: it
//! reports progress to an [`Observer`].
//!
//! # Layout
//! - [`config`]: what a client or server run needs beyond the wire parameters.
//! - [`event`]: the [`Observer`] trait and the [`Event`]s the engine emits.
//! - [`error`]: [`EngineError`], with the iperf3 error code each failure maps to.
//! - `diskfile`: iperf3's `-F` figures in `end.streams[].diskfile`.
//! - `ctrl`: the control connection: a reader thread feeding a channel, and writes.
//! - `net`: address resolution, connecting and binding data sockets with iperf3's options.
//! - `stream`: data streams: counters shared with the stream thread, TCP send/receive loops,
//!   UDP handshake, paced sender and counting receiver (`udp`, `udp_stats`).
//! - `stream::zerocopy`: the TCP send path (`write`, `sendfile` from a memfd for `-Z`,
//!   `MSG_ZEROCOPY` for `--zerocopy=z`) with fallback, and `MSG_TRUNC` receive.
//! - `sampler`: interval sampling (bytes, TCP_INFO) and per-stream totals.
//! - `summary`: the `end` object from local totals and the peer's results.
//! - `summary_udp`: its UDP part (mixed `udp`/`sum` objects, exact loss, loss split).
//! - `extras`: wireperf's per-stream JSON extras (`wireperf_cpu`, `wireperf_io`).
//! - `report`: helpers that fill the `start` object.
//! - [`client`]: a whole client run.
//! - [`server`]: the listener, the acceptor, the test registry and queue, per-test policy
//!   (limits, authentication hook), operator log records, and one server test.

#![forbid(unsafe_code)]

mod auth;
pub mod client;
pub mod config;
mod ctrl;
mod diskfile;
pub mod error;
pub mod event;
mod extras;
mod net;
mod running;
mod sampler;
pub mod server;
mod session;
mod start;
mod stream;
mod summary;
mod summary_udp;
pub mod timing;

pub use client::run_client;
pub use config::{ClientConfig, Family, SendMode, ServerConfig};
pub use error::EngineError;
pub use event::{Event, Observer, Outcome, ServerOutput};
pub use server::{Server, ServerHooks};
pub use start::{rfc1123, version_line as report_version};
