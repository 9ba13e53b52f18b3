//! `wireperf doctor`: the arguments and the entry point the `cli` crate calls. This is the only
//! module that prints; everything else returns data.

use std::io::Write;
use std::path::PathBuf;

use clap::Args;

use crate::apply::{self, StepResult};
use crate::error::Error;
use crate::journal::{self, Change};
use crate::read::KernelLogSource;
use crate::root::Root;
use crate::rules::{RuleOptions, Severity};
use crate::{InspectOptions, inspect_with, json, render, snapshot_capture};

/// Why is this link slow, and what is the fix.
///
/// Inspects every physical network interface (or the named ones): driver, bus (PCI/USB with
/// link speed and chip revision), link, MTU, queues, RPS, rings, coalescing, sysctls, error
/// counters and theoretical goodput; then lists findings worst first, each with evidence and
/// exact fix commands.
///
/// Exit status: 0 no findings above info, 1 a warning, 2 a critical finding.
#[derive(Debug, Clone, Default, Args)]
pub struct DoctorArgs {
    /// Interfaces to inspect (default: every physical interface; loopback is never included
    /// unless named).
    #[arg(value_name = "IFACE")]
    pub interfaces: Vec<String>,

    /// Print one JSON document (schema_version 1) instead of text.
    #[arg(long)]
    pub json: bool,

    /// Read DIR/sys, DIR/proc, DIR/lib/firmware, DIR/wireperf/IF/* instead of the live system;
    /// no command, netlink or ioctl is used. For fixtures and --snapshot output.
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,

    /// Read kernel messages from FILE (as printed by `dmesg`) instead of the live kernel log
    /// (/dev/kmsg or dmesg; with --root: DIR/wireperf/kernel.log when present).
    #[arg(long, value_name = "FILE", conflicts_with = "no_kernel_log")]
    pub kernel_log: Option<PathBuf>,

    /// Do not read the kernel log; log-based rules report "not checked".
    #[arg(long)]
    pub no_kernel_log: bool,

    /// Capture exactly the files the doctor reads, command outputs and the kernel log into
    /// OUT (a directory, or a tar archive when OUT ends in .tar), for a bug report. Replay it
    /// with --root OUT.
    #[arg(long, value_name = "OUT", conflicts_with_all = ["apply", "undo"])]
    pub snapshot: Option<PathBuf>,

    /// Apply the safe, reversible fixes (RPS mask, txqueuelen, sysctls, RX ring size) after
    /// showing them, recording old values in the journal. Needs root. Driver swaps and udev
    /// rules are printed, never applied.
    #[arg(long, conflicts_with = "undo")]
    pub apply: bool,

    /// Restore exactly the values recorded by the last --apply (from the journal). Needs root.
    #[arg(long)]
    pub undo: bool,

    /// Journal file for --apply/--undo (default: /var/lib/wireperf/doctor-journal.json as root,
    /// else $XDG_STATE_HOME/wireperf/doctor-journal.json; with --root: DIR/var/lib/wireperf/).
    #[arg(long, value_name = "FILE")]
    pub journal: Option<PathBuf>,

    /// With --apply: also make changes that drop the link this SSH session runs over.
    #[arg(long)]
    pub force: bool,

    /// Round-trip time to your peer in milliseconds: enables the socket-buffer check
    /// (TCP buffers vs the bandwidth-delay product).
    #[arg(long, value_name = "MS")]
    pub rtt: Option<f64>,

    /// The MTU you want (e.g. 9000): warns when the device cannot do it.
    #[arg(long, value_name = "BYTES")]
    pub want_mtu: Option<u32>,
}

impl DoctorArgs {
    fn inspect_options(&self) -> InspectOptions {
        InspectOptions {
            root: self.root.clone(),
            interfaces: self.interfaces.clone(),
            kernel_log: match (&self.kernel_log, self.no_kernel_log) {
                (Some(f), _) => KernelLogSource::File(f.clone()),
                (None, true) => KernelLogSource::Off,
                (None, false) => KernelLogSource::Auto,
            },
            rules: RuleOptions { rtt_ms: self.rtt, want_mtu: self.want_mtu },
        }
    }
}

/// Runs `wireperf doctor`; returns the process exit code. Output goes to stdout, notes to stderr.
pub fn run(args: &DoctorArgs) -> Result<i32, Error> {
    run_with(args, &mut std::io::stdout().lock())
}

/// Like [`run`], writing the report to `out` (tests and embedders capture it this way).
pub fn run_with(args: &DoctorArgs, out: &mut dyn Write) -> Result<i32, Error> {
    let root = match &args.root {
        Some(d) => Root::at(d),
        None => Root::live(),
    };
    let is_root_user = apply::is_root_user();
    if (args.apply || args.undo) && root.is_live() && !is_root_user {
        return Err(Error::NeedRoot);
    }
    let journal_path = args.journal.clone().unwrap_or_else(|| journal::default_path(&root, is_root_user));
    if args.undo {
        let entries = apply::undo(&root, &journal_path)?;
        for e in &entries {
            let _ = writeln!(out, "restored {}", describe_restore(&e.change));
        }
        let _ = writeln!(out, "undo complete: {} change(s) restored from {}", entries.len(), journal_path.display());
        return Ok(0);
    }
    let opts = args.inspect_options();
    let (report, kernel_log) = inspect_with(&root, &opts)?;
    if let Some(dest) = &args.snapshot {
        let sum = snapshot_capture::capture(&root, kernel_log.as_deref(), dest)?;
        let _ = writeln!(
            out,
            "snapshot written to {} ({} files and links); replay with: wireperf doctor --root {}",
            dest.display(),
            sum.entries,
            if dest.extension().is_some_and(|e| e == "tar") {
                "DIR_WHERE_YOU_UNPACKED_IT".to_string()
            } else {
                dest.display().to_string()
            }
        );
        for s in &sum.skipped {
            eprintln!("snapshot: skipped {s}");
        }
        return Ok(0);
    }
    if args.json {
        let _ = writeln!(out, "{}", json::to_string(&report)?);
    } else {
        let _ = write!(out, "{}", render::render(&report));
    }
    if args.apply {
        let session = apply::session_interface(&root);
        let steps = apply::plan(&report, &args.interfaces, args.force, session.as_deref());
        let _ = writeln!(out, "\napply: {} change(s)", steps.len());
        for s in &steps {
            let _ = writeln!(
                out,
                "  [{}] {}: {}{}",
                s.iface,
                s.finding,
                s.describe(),
                s.refused.as_ref().map(|r| format!("  (refused: {r})")).unwrap_or_default()
            );
        }
        if steps.is_empty() {
            return Ok(0);
        }
        let results = apply::execute(&root, &steps, &journal_path)?;
        for r in &results {
            match r {
                StepResult::Applied(e) => {
                    let _ = writeln!(out, "  done: {}", describe_change(&e.change));
                }
                StepResult::Skipped(s, why) => {
                    let _ = writeln!(out, "  skipped: {} — {why}", s.describe());
                }
            }
        }
        let _ = writeln!(
            out,
            "journal: {} (undo with: wireperf doctor --undo{})",
            journal_path.display(),
            args.journal.as_ref().map(|j| format!(" --journal {}", j.display())).unwrap_or_default()
        );
        return Ok(0);
    }
    Ok(match report.worst() {
        Some(Severity::Crit) => 2,
        Some(Severity::Warn) => 1,
        _ => 0,
    })
}

fn describe_change(c: &Change) -> String {
    match c {
        Change::File { path, old, new } => format!("/{path}: {} → {}", old.replace('\t', " "), new.replace('\t', " ")),
        Change::RxRing { iface, old, new } => format!("{iface} rx ring: {old} → {new}"),
    }
}

fn describe_restore(c: &Change) -> String {
    match c {
        Change::File { path, old, new } => format!("/{path}: {} → {}", new.replace('\t', " "), old.replace('\t', " ")),
        Change::RxRing { iface, old, new } => format!("{iface} rx ring: {new} → {old}"),
    }
}
