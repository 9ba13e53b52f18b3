//! iperf3's wire protocol, without I/O.
//!
//! Everything a wireperf client or server must say to a stock iperf3 peer lives here as pure
//! code: no sockets and no clock reads. Callers feed received bytes in, take bytes to send out,
//! and pass the current time in where timeouts matter. This is the quinn-proto model: the
//! engine drives these types over real sockets, and the tests drive a client and a server
//! against each other in memory with a virtual clock.
//!
//! # Layout
//! - [`cookie`]: the 37-byte session cookie that opens every control and data connection.
//! - [`state`]: the one-byte control states and their wire values.
//! - [`errno`]: iperf3's `i_errno` codes and the messages stock clients print for them.
//! - [`frame`]: the incremental reader for what arrives on the control connection
//!   (cookie, state bytes, length-prefixed JSON, SERVER_ERROR payloads), with size limits.
//! - [`fix_wire`]: the fix channel of `suite --fix` to a `--allow-fix` server (its cookie
//!   and messages).
//! - [`params`]: the test parameters JSON the client sends after PARAM_EXCHANGE.
//! - [`results`]: the results JSON both sides exchange after the test.
//! - [`schema`]: iperf3's `-J` output document as typed structs (start, intervals, end).
//! - [`outcome`]: a finished test per direction ([`TestOutcome`]), read once from a `-J`
//!   document (client- or server-written, iperf3 or iperf 2 peer); [`outcome::words`] has the
//!   one human rate format and percent change. Every reader of results goes through it.
//! - [`client`] / [`server`]: the control-connection state machines of each side.
//! - [`datetime`]: Unix seconds as iperf3's RFC 1123 timestamp and the history's RFC 3339 text.
//! - [`udp`]: the UDP datagram header and the UDP "connect" handshake bytes.
//! - `auth` (feature `auth`): the RSA authentication token: make, decrypt, check, no replay.
//! - `json_num` (private): lenient number reading for what stock peers write (`-1` printed as
//!   an unsigned 64-bit number, integers as floats).

#[cfg(feature = "auth")]
pub mod auth;
pub mod client;
pub mod cookie;
pub mod datetime;
pub mod errno;
pub mod fix_wire;
pub mod frame;
pub mod outcome;
pub mod params;
pub mod results;
pub mod schema;
pub mod server;
pub mod state;
pub mod udp;

mod json_num;

pub use cookie::Cookie;
pub use errno::IperfErrno;
pub use outcome::TestOutcome;
pub use params::{Protocol, TestParams, UdpOffload};
pub use results::{ExchangeResults, StreamResult};
pub use state::State;

/// The default control and data port of iperf3 (and of wireperf in iperf3 mode).
pub const DEFAULT_PORT: u16 = 5201;

/// The version string wireperf reports where iperf3 reports its own (`client_version`, `-J`,
/// `wireperf -v`): the newest iperf3 whose options, parameters and `-J` schema wireperf speaks
/// (interop is tested against 3.12, 3.18 and 3.22).
///
/// Stock peers never interpret it (3.12–3.22 only write `client_version`); it only shows up in
/// output.
pub const IPERF_COMPAT_VERSION: &str = "3.22";
