//! wireperf-iperf2: talk to the iperf 2 servers and clients people already have.
//!
//! `wireperf --iperf2 -c HOST` / `-s` speak iperf 2.1.x's protocol: the test header at the
//! start of each TCP stream (or in each UDP datagram), `-d`/`-r` where the server connects
//! back, `--full-duplex` and `--reverse` on one socket, and the UDP server report. Output is
//! iperf 2's text layout (`-e` enhanced, `-y C` CSV) or wireperf's `-J` JSON in the iperf3
//! schema ([`wireperf_protocol::schema::TestReport`]).
//!
//! # Layout
//!
//! - [`wire`]: sans-I/O codecs — client header, header ack, UDP datagram header, server report.
//! - [`units`]: iperf 2's number formatting (`1.65 GBytes`, `14.1 Gbits/sec`, `%.2g`) and
//!   size/rate parsing (iperf 2's `-b` suffixes are binary).
//! - [`config`]: the lowered test description the engine runs.
//! - [`stats`]: pure counters — per-interval TCP figures, the read-size histogram, UDP
//!   loss/jitter/out-of-order accounting (jitter and the UDP pacing schedule are the engine's
//!   [`wireperf_engine::timing`], shared with the iperf3 streams).
//! - [`event`]: what the engine reports while running (connections, intervals, totals).
//! - [`streams`]: threads and blocking sockets: the client, the server, TCP and UDP streams.
//! - [`output`]: renderers — iperf 2 text, CSV, and the JSON `TestReport`.
//! - [`run`]: one test ([`run::Test`]) run to its output, and [`run::client_report`] for the
//!   suite. (`--iperf2` flags are parsed in the `cli` crate.)

#![forbid(unsafe_code)]

pub mod config;
pub mod event;
pub mod output;
pub mod run;
pub mod stats;
pub mod streams;
pub mod units;
pub mod wire;
