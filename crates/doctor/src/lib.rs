//! wireperf's link doctor: why is this link slow, and what is the fix.
//!
//! The doctor reads what Linux knows about each NIC (sysfs, procfs, firmware files, the kernel
//! log, and `ip`/`ethtool`/`tc` output), builds a [`LinkSnapshot`] per interface, and runs pure
//! rules over it that produce [`Finding`]s with evidence and exact fix commands. Everything is
//! read through a [`Root`], so a fixture tree or a `--snapshot` replays exactly like a live host.
//!
//! # Layout
//! - `error.rs` — [`Error`], the crate's typed errors.
//! - `root.rs` — [`Root`]: the single gate for file reads (live `/` or `--root DIR`), logging every
//!   access for `--snapshot`; `.errno` sidecar files emulate sysfs read errors in fixtures.
//! - `snapshot.rs` — the data model: [`LinkSnapshot`], [`HostSnapshot`] and their parts;
//!   `link_parts.rs` — the plain parts the readers and `goodput.rs` share (duplex, rings,
//!   coalescing, link modes, the root qdisc), a leaf module.
//! - `read/` — readers: `sysfs.rs` (one interface), `usb.rs` (USB device + binary descriptors),
//!   `procfs.rs` (sysctls, CPUs, softnet), `kernel_log.rs` (dmesg/kmsg → events), `commands.rs`
//!   (`ip`/`ethtool`/`tc` output, run live or replayed), `firmware.rs` (firmware search path).
//! - `adapters.rs` — the adapter table and chip/revision identification (RTL8156 vs RTL8156B).
//! - `goodput.rs` — [`theoretical_goodput`] of a link, with the USB bus ceiling.
//! - `share.rs` — [`share::SharedHost`]: the findings and link facts a wireperf server shares with
//!   its client, in a shape that crosses the wire and reads back.
//! - `ends.rs` — [`ends::compare`]: the two hosts against each other (MTU, line rates, duplex,
//!   receive buffers against the path's BDP), each finding naming both hosts' values.
//! - `rules/` — one file per group of rules; `rules/mod.rs` has [`Finding`], [`Severity`], the registry.
//! - `remedy.rs` — [`remedy::Remedy`]: the one fix (commands, `--apply` actions, persistence) for
//!   a small receive or send buffer, RPS off and a short txqueuelen, which the rules, `ends.rs`
//!   and the bottleneck finder all print.
//! - `render.rs` — the text report. `json.rs` — the `--json` document (schema version [`json::SCHEMA_VERSION`]).
//! - `apply.rs` — `--apply` planning/execution and `--undo`; `journal.rs` — the JSON journal of changes.
//! - `snapshot_capture.rs` — `--snapshot`: copy exactly the files read (+ kernel log) to a dir or tar.
//! - `route.rs` — which interface routes to an IP address. `qdisc.rs` — root qdisc rate limits (tbf/htb).
//! - `command.rs` — [`DoctorConfig`] and [`run_with`]: the whole `wireperf doctor` command
//!   as a library call; the only module that prints. (Its flags are parsed in the `cli` crate.)
//!
//! The bottleneck finder (what a host *did* during a test) is the `wireperf-bottleneck` crate,
//! which reads this crate's snapshot facts; nothing here depends on it.

#![forbid(unsafe_code)]

pub mod adapters;
pub mod apply;
pub mod command;
pub mod ends;
pub mod error;
pub mod goodput;
pub mod journal;
pub mod json;
pub mod link_parts;
pub mod qdisc;
pub mod read;
pub mod remedy;
pub mod render;
pub mod root;
pub mod route;
pub mod rules;
pub mod share;
pub mod snapshot;
pub mod snapshot_capture;

use std::path::PathBuf;

use serde::Serialize;

pub use command::{DoctorConfig, run_with};
pub use error::Error;
pub use goodput::{Goodput, UsbLink, theoretical_goodput};
pub use qdisc::{RateLimit, root_rate_limit};
pub use read::KernelLogSource;
pub use root::Root;
pub use route::interface_for;
pub use rules::{Finding, NotChecked, RuleOptions, Severity};
pub use snapshot::{HostSnapshot, LinkSnapshot};

/// What to inspect and how.
#[derive(Debug, Clone, Default)]
pub struct InspectOptions {
    /// Read files under this directory instead of `/` (no commands, netlink or ioctl).
    pub root: Option<PathBuf>,
    /// Interfaces to inspect; empty = every physical interface (loopback excluded).
    pub interfaces: Vec<String>,
    /// Where kernel messages come from.
    pub kernel_log: KernelLogSource,
    /// Context for the rules (RTT, wanted MTU).
    pub rules: RuleOptions,
}

/// One interface: its snapshot and what the rules concluded.
#[derive(Debug, Clone, Serialize)]
pub struct InterfaceReport {
    /// What was read.
    #[serde(flatten)]
    pub link: LinkSnapshot,
    /// Findings, worst first.
    pub findings: Vec<Finding>,
    /// Rules that could not run, with the missing data.
    pub not_checked: Vec<NotChecked>,
    /// Rules that ran and found nothing (or did not apply).
    pub passed: Vec<&'static str>,
}

impl InterfaceReport {
    /// The ids of the findings, worst first.
    pub fn finding_ids(&self) -> Vec<&'static str> {
        self.findings.iter().map(|f| f.id).collect()
    }
}

/// The doctor's result.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// The root that was read (`/` live).
    pub root: String,
    /// Host facts.
    pub host: HostSnapshot,
    /// One entry per interface.
    pub interfaces: Vec<InterfaceReport>,
}

impl Report {
    /// The worst severity over all findings.
    pub fn worst(&self) -> Option<Severity> {
        self.interfaces.iter().flat_map(|i| i.findings.iter().map(|f| f.severity)).max()
    }

    /// The report of one interface.
    pub fn interface(&self, name: &str) -> Option<&InterfaceReport> {
        self.interfaces.iter().find(|i| i.link.name == name)
    }
}

/// Inspects the interfaces and runs the rules.
///
/// ```no_run
/// let report = wireperf_doctor::inspect(&wireperf_doctor::InspectOptions::default())?;
/// for i in &report.interfaces {
///     println!("{}: {:?}", i.link.name, i.finding_ids());
/// }
/// # Ok::<(), wireperf_doctor::Error>(())
/// ```
pub fn inspect(opts: &InspectOptions) -> Result<Report, Error> {
    let root = match &opts.root {
        Some(d) => Root::at(d),
        None => Root::live(),
    };
    Ok(inspect_with(&root, opts)?.0)
}

/// Like [`inspect`] on a given [`Root`]; also returns the kernel log text that was read, which
/// `--snapshot` stores next to the captured files.
pub fn inspect_with(root: &Root, opts: &InspectOptions) -> Result<(Report, Option<String>), Error> {
    let c = read::collect(root, &opts.interfaces, &opts.kernel_log)?;
    let interfaces = c
        .links
        .into_iter()
        .map(|link| {
            let ev = rules::evaluate(&link, &c.host, &opts.rules);
            InterfaceReport { link, findings: ev.findings, not_checked: ev.not_checked, passed: ev.passed }
        })
        .collect();
    Ok((Report { root: root.base().display().to_string(), host: c.host, interfaces }, c.kernel_log))
}
