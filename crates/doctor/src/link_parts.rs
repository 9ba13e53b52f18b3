//! The plain parts of a link's snapshot that a reader fills from one source (sysfs or
//! `ethtool`/`tc` output) and the goodput maths reads: duplex, rings, coalescing, link modes,
//! the root qdisc.
//!
//! A leaf: it imports nothing of this crate, so the readers (`read/commands.rs`) and
//! `goodput.rs` use these types without importing `snapshot.rs`, which imports them back
//! (it holds them in `LinkSnapshot` and re-exports them).

use serde::Serialize;

/// Duplex as sysfs/ethtool report it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Duplex {
    /// Full duplex.
    Full,
    /// Half duplex (cosmetic on cdc_ncm, a real mismatch on a PHY driver).
    Half,
    /// The driver says "unknown".
    Unknown,
}

impl Duplex {
    /// Parses sysfs `duplex` / ethtool `Duplex:` text.
    pub fn parse(s: &str) -> Option<Duplex> {
        match s.trim().to_ascii_lowercase().as_str() {
            "full" => Some(Duplex::Full),
            "half" => Some(Duplex::Half),
            s if s.starts_with("unknown") => Some(Duplex::Unknown),
            _ => None,
        }
    }

    /// Lower-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Duplex::Full => "full",
            Duplex::Half => "half",
            Duplex::Unknown => "unknown",
        }
    }
}

/// Ring sizes (`ethtool -g`).
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct Rings {
    /// Current RX ring.
    pub rx: Option<u32>,
    /// Maximum RX ring.
    pub rx_max: Option<u32>,
    /// Current TX ring.
    pub tx: Option<u32>,
    /// Maximum TX ring.
    pub tx_max: Option<u32>,
}

/// Interrupt coalescing (`ethtool -c`). r8152 reports `rx_usecs` in nanoseconds.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct Coalesce {
    /// rx-usecs as the driver reports it.
    pub rx_usecs: Option<u32>,
    /// tx-usecs.
    pub tx_usecs: Option<u32>,
    /// Adaptive RX on.
    pub adaptive_rx: Option<bool>,
}

/// Link modes (`ethtool IF`): speeds in Mbit/s.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct LinkModes {
    /// Speeds our side supports (empty when "Not reported").
    pub supported: Vec<u32>,
    /// Speeds the link partner advertises; `None` when not reported.
    pub partner: Option<Vec<u32>>,
    /// Auto-negotiation on.
    pub autoneg: Option<bool>,
}

/// The root qdisc and its counters.
#[derive(Debug, Clone, Default, Serialize)]
pub struct QdiscInfo {
    /// Kind, e.g. `pfifo_fast`, `fq_codel`, `noqueue`.
    pub kind: String,
    /// Packets dropped by the qdisc.
    pub drops: Option<u64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duplex_parses() {
        assert_eq!(Duplex::parse("half\n"), Some(Duplex::Half));
        assert_eq!(Duplex::parse("Unknown! (255)"), Some(Duplex::Unknown));
        assert_eq!(Duplex::parse("x"), None);
    }
}
