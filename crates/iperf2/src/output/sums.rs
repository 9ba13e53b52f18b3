//! `[SUM]` bookkeeping: members of a group report separately; once all of a group's samples
//! for one span are in, their sum is due.

use crate::event::Sample;
use std::collections::HashMap;

/// Collects samples per (group, span) until the group is complete.
#[derive(Default)]
pub struct Sums {
    pending: HashMap<(u64, bool, u64), Vec<Sample>>,
}

/// A finished sum.
#[derive(Clone, Debug)]
pub struct Sum {
    /// Span start.
    pub start: f64,
    /// Span end (the latest member's).
    pub end: f64,
    /// Bytes over members.
    pub bytes: u64,
    /// Operations over members.
    pub ops: u64,
    /// Members' read histograms added.
    pub hist: [u64; 8],
}

impl Sums {
    /// Adds a sample; returns the sum when its group is complete (never for groups of one).
    pub fn add(&mut self, s: &Sample) -> Option<Sum> {
        if s.group.size < 2 {
            return None;
        }
        // Interval spans are keyed by their start in milliseconds; finals all start at 0.
        let key = (s.group.key, s.is_final, (s.start * 1000.0).round() as u64);
        let v = self.pending.entry(key).or_default();
        v.push(s.clone());
        if v.len() < s.group.size as usize {
            return None;
        }
        let v = self.pending.remove(&key)?;
        let mut hist = [0u64; 8];
        for m in &v {
            for (h, x) in hist.iter_mut().zip(m.hist) {
                *h += x;
            }
        }
        Some(Sum {
            start: s.start,
            end: v.iter().map(|m| m.end).fold(0.0, f64::max),
            bytes: v.iter().map(|m| m.bytes).sum(),
            ops: v.iter().map(|m| m.ops).sum(),
            hist,
        })
    }
}
