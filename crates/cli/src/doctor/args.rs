//! `wireperf doctor` flags, and their lowering into a [`DoctorConfig`].

use clap::Args;
use std::path::PathBuf;
use wireperf_doctor::{DoctorConfig, KernelLogSource};

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
    /// Lowers the flags into the doctor's configuration.
    pub fn config(&self) -> DoctorConfig {
        DoctorConfig {
            interfaces: self.interfaces.clone(),
            json: self.json,
            root: self.root.clone(),
            kernel_log: match (&self.kernel_log, self.no_kernel_log) {
                (Some(f), _) => KernelLogSource::File(f.clone()),
                (None, true) => KernelLogSource::Off,
                (None, false) => KernelLogSource::Auto,
            },
            snapshot: self.snapshot.clone(),
            apply: self.apply,
            undo: self.undo,
            journal: self.journal.clone(),
            force: self.force,
            rtt: self.rtt,
            want_mtu: self.want_mtu,
        }
    }
}
