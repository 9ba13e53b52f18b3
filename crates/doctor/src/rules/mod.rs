//! Rules: pure functions from a snapshot to findings (link-facts §5, R1–R17 and a few more).
//!
//! Each rule returns `Fired`, `Passed` (or not applicable: silent), or `NotChecked(reason)` when
//! the data it needs was not reported. A rule never guesses: "not checked" is printed instead.
//!
//! Files: `usb.rs` (adapter on the wrong driver, USB 2 link, Gen1 cap, protocol errors,
//! autosuspend), `link.rs` (link down, duplex, speed below capability, flaps, MTU), `driver.rs`
//! (firmware, Realtek's out-of-tree driver, TX timeouts), `tuning.rs` (RPS, rings, coalescing,
//! txqueuelen, socket buffers). What a rule is made of (findings, their context and outcome, the helpers that build them) is
//! `parts.rs`, a leaf every rule file imports.

mod driver;
mod link;
mod parts;
mod tuning;
mod usb;

pub use parts::{Action, Ctx, Finding, Fix, NotChecked, Outcome, RuleOptions, Severity};

use crate::snapshot::{HostSnapshot, LinkSnapshot};

type Rule = fn(&Ctx) -> Outcome;

/// All rules with their ids, in the order ties are printed.
pub const RULES: &[(&str, Rule)] = &[
    ("link-down", link::link_down),
    ("generic-usb-driver", usb::generic_usb_driver),
    ("half-duplex", link::half_duplex),
    ("usb2-link", usb::usb2_link),
    ("usb-bus-limit", usb::usb_bus_limit),
    ("usb-protocol-errors", usb::usb_protocol_errors),
    ("firmware-missing", driver::firmware_missing),
    ("speed-below-capability", link::speed_below_capability),
    ("link-flaps", link::link_flaps),
    ("tx-timeouts", driver::tx_timeouts),
    ("rps-off", tuning::rps_off),
    ("mtu-locked", link::mtu_locked),
    ("small-rings", tuning::small_rings),
    ("coalescing", tuning::coalescing),
    ("txqueuelen", tuning::txqueuelen),
    ("socket-buffers", tuning::socket_buffers),
    ("vendor-driver", driver::vendor_driver),
    ("usb-autosuspend", usb::usb_autosuspend),
];

/// Result of running every rule on one interface.
#[derive(Debug, Clone, Default)]
pub struct Evaluation {
    /// Findings, worst first.
    pub findings: Vec<Finding>,
    /// Rules that lacked data.
    pub not_checked: Vec<NotChecked>,
    /// Rules that ran and passed (or did not apply).
    pub passed: Vec<&'static str>,
}

/// Runs every rule on one interface.
pub fn evaluate(link: &LinkSnapshot, host: &HostSnapshot, opts: &RuleOptions) -> Evaluation {
    let ctx = Ctx { link, host, opts };
    let mut ev = Evaluation::default();
    for (id, rule) in RULES {
        match rule(&ctx) {
            Outcome::Fired(f) => ev.findings.push(f),
            Outcome::Passed => ev.passed.push(id),
            Outcome::NotChecked(reason) => ev.not_checked.push(NotChecked { id, reason }),
        }
    }
    // Stable sort: worst first, rule order within a severity.
    ev.findings.sort_by_key(|f| std::cmp::Reverse(f.severity));
    ev
}
