//! A verdict as text: the block `--why`, the suite and selftest print.
//!
//! ```text
//! Bottleneck client→server: shaper (client)
//!   evidence: tbf on eth0 (client) shapes what the client sends …
//!   fix:      see it: tc qdisc show dev eth0
//!   also:     path-loss (path): 120 real retransmits …
//!   retransmits: 130 (120 real, 10 spurious)
//! ```

use std::fmt::Write;

use crate::diagnosis::Verdict;

/// The verdict as lines (no trailing newline on the last).
pub fn render(v: &Verdict) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "Bottleneck {}: {} ({})", v.direction, v.main.limit, v.main.side.as_str());
    for e in &v.main.evidence {
        let _ = writeln!(out, "  evidence: {e}");
    }
    for f in &v.main.fix {
        let _ = writeln!(out, "  fix:      {f}");
    }
    for a in &v.also {
        let _ = writeln!(out, "  also:     {} ({}): {}", a.limit, a.side.as_str(), a.evidence.join("; "));
    }
    if let Some(r) = v.retransmits {
        let _ = writeln!(out, "  retransmits: {} ({} real, {} spurious)", r.total, r.real, r.spurious);
    }
    for n in &v.not_checked {
        let _ = writeln!(out, "  not seen: {n}");
    }
    out.pop();
    out
}
