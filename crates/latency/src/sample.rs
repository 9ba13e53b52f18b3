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

/// One round-trip probe.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Probe {
    /// When it was sent, ms since the prober started (monotonic clock).
    pub at_ms: f64,
    /// The load that ran meanwhile.
    pub phase: Phase,
    /// Its round trip in ms; `None` when no answer came within the probe's timeout (lost).
    pub rtt_ms: Option<f64>,
}
