//! `wireperf doctor` as a library call: a typed [`DoctorConfig`] in, the report (or the
//! snapshot, apply and undo steps) written out, the exit status back. This is the only module
//! that prints; everything else returns data.

use std::io::Write;
use std::path::PathBuf;

use crate::apply::{self, StepResult};
use crate::error::Error;
use crate::journal;
use crate::read::KernelLogSource;
use crate::root::Root;
use crate::rules::{RuleOptions, Severity};
use crate::{InspectOptions, inspect_with, json, render, snapshot_capture};

/// What `wireperf doctor` is asked to do (the `cli` crate lowers its flags into this).
#[derive(Debug, Clone, Default)]
pub struct DoctorConfig {
    /// Interfaces to inspect (empty: every physical interface; loopback only when named).
    pub interfaces: Vec<String>,
    /// One JSON document (schema_version 1) instead of text.
    pub json: bool,
    /// Read this tree instead of the live system (fixtures, `--snapshot` output).
    pub root: Option<PathBuf>,
    /// Where kernel messages come from.
    pub kernel_log: KernelLogSource,
    /// Capture the files read, command outputs and the kernel log here (a directory, or a
    /// tar archive when it ends in .tar) instead of reporting.
    pub snapshot: Option<PathBuf>,
    /// Apply the safe, reversible fixes after reporting them, recording old values.
    pub apply: bool,
    /// Restore the values recorded by the last apply.
    pub undo: bool,
    /// Journal file for apply/undo (default: [`journal::default_path`]).
    pub journal: Option<PathBuf>,
    /// With `apply`: also make changes that drop the link this SSH session runs over.
    pub force: bool,
    /// Round-trip time to the peer, milliseconds (enables the socket-buffer check).
    pub rtt: Option<f64>,
    /// The MTU wanted: warns when the device cannot do it.
    pub want_mtu: Option<u32>,
}

impl DoctorConfig {
    fn inspect_options(&self) -> InspectOptions {
        InspectOptions {
            root: self.root.clone(),
            interfaces: self.interfaces.clone(),
            kernel_log: self.kernel_log.clone(),
            rules: RuleOptions { rtt_ms: self.rtt, want_mtu: self.want_mtu },
        }
    }
}

/// Runs `wireperf doctor`, writing the report to `out` (the binary's stdout; tests capture it);
/// returns the process exit code. Notes go to stderr.
pub fn run_with(args: &DoctorConfig, out: &mut dyn Write) -> Result<i32, Error> {
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
            let _ = writeln!(out, "restored {}", e.change.describe_restore());
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
                    let _ = writeln!(out, "  done: {}", e.change.describe());
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
