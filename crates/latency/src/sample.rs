//! One probe and the phase it belongs to.

use serde::{Deserialize, Serialize};

/// Which load ran while a probe was in flight.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    /// Before the test's streams send anything: the path's own round trip.
    Idle,
    /// This host sends (client → server).
    Upload,
    /// The server sends (`-R`).
    Download,
    /// Both send (`--bidir`).
    Bidir,
}

impl Phase {
    /// The loaded phase of a test with these flags.
    pub fn of_test(reverse: bool, bidir: bool) -> Phase {
        if bidir {
            Phase::Bidir
        } else if reverse {
            Phase::Download
        } else {
            Phase::Upload
        }
    }

    /// The name used in text and JSON.
    pub fn name(self) -> &'static str {
        match self {
            Phase::Idle => "idle",
            Phase::Upload => "upload",
            Phase::Download => "download",
            Phase::Bidir => "bidir",
        }
    }
}

/// What a probe was.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// A TCP handshake to the server's port (works against any server).
    #[default]
    TcpConnect,
    /// A datagram to a wireperf server's UDP echo (the `wireperf_latency` extension).
    UdpEcho,
    /// A request/response on a wireperf server's echo TCP connection (same extension).
    TcpRr,
}

impl Method {
    /// The name used in text and JSON.
    pub fn name(self) -> &'static str {
        match self {
            Method::TcpConnect => "tcp_connect",
            Method::UdpEcho => "udp_echo",
            Method::TcpRr => "tcp_rr",
        }
    }
}

/// One round-trip probe.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Probe {
    /// When it was sent, ms since the prober started (monotonic clock).
    pub at_ms: f64,
    /// The load that ran meanwhile.
    pub phase: Phase,
    /// Its round trip in ms; `None` when no answer came within the probe's timeout (lost).
    pub rtt_ms: Option<f64>,
    /// What it was (history from before the echo extension holds connect probes only).
    #[serde(default)]
    pub method: Method,
    /// Echo probes: the server's receive time minus the send time, ms — the one-way time
    /// client → server plus the two clocks' (unknown, constant) offset, so only its change
    /// between idle and load means something (see [`crate::direction`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub up_ms: Option<f64>,
}

impl Probe {
    /// A probe without one-way time.
    pub fn new(at_ms: f64, phase: Phase, rtt_ms: Option<f64>, method: Method) -> Probe {
        Probe { at_ms, phase, rtt_ms, method, up_ms: None }
    }
}
