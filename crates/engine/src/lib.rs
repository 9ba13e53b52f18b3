//! wireperf's test engine: iperf3 sessions over real sockets.
//!
//! The engine drives the sans-I/O sessions of `wireperf-protocol` over a control connection,
//! runs each data stream on a thread of its own with a blocking socket (or, when a direction has
//! more TCP streams than CPUs, those streams on one shared epoll worker per CPU), and
//! turns stream counters into the `-J` schema values (`Interval`, `End`) that every renderer
//! prints from. It never prints: it reports progress to an [`Observer`].
//!
//! # Layout
//! Leaves first; every module imports only modules listed above it (no import loops).
//! - [`error`]: [`EngineError`], with the iperf3 error code each failure maps to.
//! - `auth`: the [`server::AuthHook`] a server owner plugs in ([`server::Authorizer`]).
//! - [`config`]: what a client or server run needs beyond the wire parameters, the small
//!   choice types it carries ([`Family`], [`SendMode`]) and the data path's tuning
//!   ([`EngineTuning`], which the cli fills from the environment: the engine reads none).
//! - [`timing`]: pure datagram-timing maths shared with the iperf 2 engine: the pacing
//!   schedule and RFC 3550 jitter.
//! - [`event`]: the [`Observer`] trait and the [`Event`]s the engine emits.
//! - `start`: fills the report's `start` object (version line, timestamp, `test_start`).
//! - `diskfile`: iperf3's `-F` figures in `end.streams[].diskfile`.
//! - `ctrl`: the control connection: a reader thread feeding a channel, and writes.
//! - `net`: address resolution, connecting and binding data sockets with iperf3's options.
//! - `stream`: data streams and their threads. Inside it: `spec` (what a stream thread is
//!   given), `loop_end` (how a loop ends, the read-error rule), `counters`, `budget` (`-n`/`-k`),
//!   `context` (what a loop is given), `sock` (the data socket), `buffer`, `low_water`,
//!   `io_report` (what `wireperf_io` says), `send_path` (the one TCP send path, for stream
//!   threads and shared workers: `write`, `sendfile` from a memfd for `-Z`, `MSG_ZEROCOPY`,
//!   each fallback saying why), `recv_path` (`read` or `MSG_TRUNC`), `tcp`, `file` (`-F`),
//!   `udp` (handshake, paced sender, counting receiver), `udp_stats` (exact loss, order, duplicates), `schedule`
//!   (which streams get a thread of their own and which share a worker), `balance` (sans-I/O:
//!   when a stream should move to another worker of its direction), `crew` (a direction's
//!   workers: their reports, the balancer's orders, the inboxes streams are handed through),
//!   `worker` (a shared worker's epoll loop over nonblocking TCP streams: its poll loop,
//!   senders, receivers, accounting and start, one file each).
//! - `sampler`: interval sampling (bytes, TCP_INFO) and per-stream totals (`LocalStream`).
//! - `summary_udp`: the UDP part of `end` (mixed `udp`/`sum` objects, exact loss, loss split).
//! - `summary`: the `end` object from local totals and the peer's results.
//! - `extras`: wireperf's per-stream JSON extras (`wireperf_cpu`, `wireperf_io`).
//! - `running`: the running phase both roles share: stream threads, interval clock, omit,
//!   draining, the final sample.
//! - `session`: what client and server share about one test: the stream plan from
//!   `TestParams` (who sends on stream i, the `--bidir` split, budgets, length) and the end of
//!   the test (`end`, diskfile, extras, intervals, the results for the peer).
//! - `driver`: the control loop both roles run (send, wait, wake, clock, the session's
//!   events), each role supplying what differs, and the measured test both keep.
//! - [`client`]: a whole client run.
//! - [`server`]: the listener, the acceptor, the test registry and queue, per-test policy
//!   (limits, authentication), operator log records, and one server test (`server::one_test`).

#![forbid(unsafe_code)]

mod auth;
pub mod client;
pub mod config;
mod ctrl;
mod diskfile;
mod driver;
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

pub use client::{run_client, run_client_finishing};
#[cfg(feature = "test-hooks")]
pub use config::REFUSE_ZEROCOPY_ENV;
pub use config::{
    ClientConfig, EngineTuning, Family, HOST_LOCAL_NOTSENT, HOST_LOCAL_NOTSENT_OWN_CPUS, NotsentMark, SendMode,
    ServerConfig, StreamWorkers, TestHooks,
};
pub use error::EngineError;
pub use event::{Event, Observer, Outcome, ServerOutput};
pub use server::{Server, ServerHooks};
pub use start::{rfc1123, version_line as report_version};
