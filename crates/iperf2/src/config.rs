//! The lowered test description: what the engine needs, nothing about flags or output.

use std::time::Duration;

/// Transport.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Proto {
    /// TCP streams.
    Tcp,
    /// Paced UDP datagrams.
    Udp,
}

/// The shape of a client test.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Client sends.
    Normal,
    /// `-d`: both directions at once; the server connects back to the client's `-L` port.
    Dual,
    /// `-r`: client sends, then the server connects back and sends.
    Tradeoff,
    /// `--full-duplex`: both directions on the same socket.
    FullDuplex,
    /// `-R`/`--reverse`: the server sends on the client's socket.
    Reverse,
}

/// When a sender stops.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Stop {
    /// After this long.
    Time(Duration),
    /// After this many bytes (the TCP header counts, as in iperf 2).
    Bytes(u64),
}

/// iperf 2's default TCP buffer (`-l`).
pub const DEFAULT_TCP_LEN: usize = 128 * 1024;
/// iperf 2's default UDP datagram size (fits a 1500-byte MTU with IPv4).
pub const DEFAULT_UDP_LEN: usize = 1470;
/// iperf 2's default UDP rate: 1 Mbit/s in its binary units.
pub const DEFAULT_UDP_RATE: u64 = 1024 * 1024;
/// iperf 2's default port.
pub const DEFAULT_PORT: u16 = 5001;

/// A client run.
#[derive(Clone, Debug)]
pub struct ClientConfig {
    /// Server host as typed.
    pub host: String,
    /// Server port.
    pub port: u16,
    /// `-L`: where the server connects back for `-d`/`-r` (default: `port`).
    pub listen_port: Option<u16>,
    /// Transport.
    pub proto: Proto,
    /// Test shape.
    pub mode: Mode,
    /// `-P`.
    pub threads: u32,
    /// `-t` or `-n`.
    pub stop: Stop,
    /// `-i` seconds.
    pub interval: Option<f64>,
    /// `-l` when given.
    pub len: Option<usize>,
    /// `-b` bits per second (UDP).
    pub rate: u64,
    /// `-w`.
    pub window: Option<usize>,
    /// `-e`.
    pub enhanced: bool,
}

impl ClientConfig {
    /// The write size in effect.
    pub fn effective_len(&self) -> usize {
        self.len.unwrap_or(match self.proto {
            Proto::Tcp => DEFAULT_TCP_LEN,
            Proto::Udp => DEFAULT_UDP_LEN,
        })
    }
}

/// A server run.
#[derive(Clone, Debug)]
pub struct ServerConfig {
    /// Listening port.
    pub port: u16,
    /// `-B` bind address.
    pub bind: Option<String>,
    /// Transport.
    pub proto: Proto,
    /// `-i` seconds.
    pub interval: Option<f64>,
    /// `-l` read size.
    pub len: Option<usize>,
    /// `-w`.
    pub window: Option<usize>,
    /// `-e`.
    pub enhanced: bool,
    /// Serve this many tests then exit (`-P n` on an iperf 2 server; `-1` for one).
    pub max_tests: Option<u32>,
}
