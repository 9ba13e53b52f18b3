//! The A–F grade of latency under load.
//!
//! The grade reads the **added latency**: the loaded median round trip minus the idle median,
//! i.e. how much the load's queue lengthened a round trip, which is what a call or a game feels
//! and what a better queue discipline (fq_codel, cake) removes. The thresholds follow the
//! bands commonly used by bufferbloat tests (a few ms is unnoticeable, tens of ms hurt
//! real-time traffic, hundreds of ms make interactive use painful):
//!
//! | grade | added latency (loaded p50 − idle p50) |
//! |---|---|
//! | A | < 5 ms |
//! | B | < 30 ms |
//! | C | < 60 ms |
//! | D | < 200 ms |
//! | F | ≥ 200 ms, or more than [`LOSS_F`] of the loaded probes lost |
//!
//! Without idle probes the added latency is unknown and there is no grade.

use serde::{Deserialize, Serialize};

/// Upper bounds (exclusive) of added latency in ms for A, B, C and D.
pub const BANDS_MS: [(Grade, f64); 4] = [(Grade::A, 5.0), (Grade::B, 30.0), (Grade::C, 60.0), (Grade::D, 200.0)];

/// A loaded probe loss above this fraction is an F whatever the round trips: a path that
/// drops a quarter of small probes under load is not responsive.
pub const LOSS_F: f64 = 0.25;

/// A bufferbloat grade.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Grade {
    /// Unnoticeable added latency.
    A,
    /// Small.
    B,
    /// Noticeable for real-time traffic.
    C,
    /// Bad.
    D,
    /// Very bad, or probes lost.
    F,
}

impl Grade {
    /// The grade for `added_ms` of added latency with `loaded_loss` (0..=1) of loaded probes lost.
    pub fn from_added(added_ms: f64, loaded_loss: f64) -> Grade {
        if loaded_loss > LOSS_F {
            return Grade::F;
        }
        BANDS_MS.iter().find(|(_, limit)| added_ms < *limit).map_or(Grade::F, |(g, _)| *g)
    }

    /// The letter.
    pub fn letter(self) -> &'static str {
        match self {
            Grade::A => "A",
            Grade::B => "B",
            Grade::C => "C",
            Grade::D => "D",
            Grade::F => "F",
        }
    }
}

impl std::fmt::Display for Grade {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.letter())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bands() {
        assert_eq!(Grade::from_added(0.3, 0.0), Grade::A);
        assert_eq!(Grade::from_added(-0.2, 0.0), Grade::A);
        assert_eq!(Grade::from_added(4.99, 0.0), Grade::A);
        assert_eq!(Grade::from_added(5.0, 0.0), Grade::B);
        assert_eq!(Grade::from_added(29.9, 0.0), Grade::B);
        assert_eq!(Grade::from_added(45.0, 0.0), Grade::C);
        assert_eq!(Grade::from_added(100.0, 0.0), Grade::D);
        assert_eq!(Grade::from_added(200.0, 0.0), Grade::F);
    }

    #[test]
    fn heavy_probe_loss_is_f() {
        assert_eq!(Grade::from_added(1.0, 0.25), Grade::A);
        assert_eq!(Grade::from_added(1.0, 0.26), Grade::F);
    }
}
