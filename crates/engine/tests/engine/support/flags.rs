//! The client's side of a test as `wireperf -c 127.0.0.1 -p PORT FLAGS` would set it up.
//!
//! The engine is driven with the values the cli gives it, not with values a test finds handy:
//! [`Flags`] sets [`TestParams`] the way `test_params` in crates/cli/src/iperf/lower_client.rs
//! does for each flag (`-n` and `-k` also zero the time, `-u` starts from iperf3's UDP defaults),
//! and [`Flags::client`] fills the [`ClientConfig`] the way that file's `lower` does, so a
//! test of `-R -n 1M` here is the test a user typing those flags runs.

use std::time::Duration;
use wireperf_engine::{ClientConfig, EngineTuning, SendMode};
use wireperf_protocol::{Protocol, TestParams};

/// iperf3's UDP rate without `-b`, as the cli sets it (1 Mbit/s in binary units).
const UDP_DEFAULT_RATE: u64 = 1024 * 1024;

/// `--connect-timeout 5000`: a server that is not there fails the test quickly instead of
/// leaving it to the kernel's connect timeout.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// The flags of one client command line.
#[derive(Clone, Debug)]
pub struct Flags(TestParams);

impl Flags {
    /// No flags: a TCP test of iperf3's defaults.
    pub fn tcp() -> Self {
        Flags(TestParams { protocol: Protocol::Tcp, ..Default::default() })
    }

    /// `-u`: iperf3's UDP defaults, 1 Mbit/s and a datagram size the engine picks.
    pub fn udp() -> Self {
        Flags(TestParams { protocol: Protocol::Udp, len: 0, bandwidth: Some(UDP_DEFAULT_RATE), ..Default::default() })
    }

    /// `-t SECS`.
    pub fn time(mut self, secs: u32) -> Self {
        self.0.time = secs;
        self
    }

    /// `-n BYTES`: ends on bytes, not time.
    pub fn bytes(mut self, n: u64) -> Self {
        self.0.num = n;
        self.0.time = 0;
        self
    }

    /// `-k BLOCKS`: ends on blocks (datagrams for UDP), not time.
    pub fn blocks(mut self, k: u64) -> Self {
        self.0.blockcount = k;
        self.0.time = 0;
        self
    }

    /// `-l LEN`.
    pub fn len(mut self, len: u32) -> Self {
        self.0.len = len;
        self
    }

    /// `-b RATE` (bit/s per stream).
    pub fn bitrate(mut self, rate: u64) -> Self {
        self.0.bandwidth = Some(rate).filter(|&r| r > 0);
        self
    }

    /// `-P N`.
    pub fn parallel(mut self, n: u32) -> Self {
        self.0.parallel = n;
        self
    }

    /// `-R`.
    pub fn reverse(mut self) -> Self {
        self.0.reverse = true;
        self
    }

    /// `--bidir`.
    pub fn bidir(mut self) -> Self {
        self.0.bidirectional = true;
        self
    }

    /// The parameters these flags send the server.
    pub fn params(&self) -> &TestParams {
        &self.0
    }

    /// The client's configuration for a server on 127.0.0.1 at `port`, with the data path
    /// tuned by `tuning` (what the cli reads from `WIREPERF_*` variables; here the test's).
    pub fn client(&self, port: u16, tuning: EngineTuning) -> ClientConfig {
        let mut cfg = ClientConfig::new("127.0.0.1", self.0.clone());
        cfg.port = port;
        cfg.connect_timeout = Some(CONNECT_TIMEOUT);
        // The cli's default without -Z (write(), as iperf3); `ClientConfig::new` has sendfile.
        cfg.send_mode = SendMode::default();
        cfg.tuning = tuning;
        cfg
    }
}
