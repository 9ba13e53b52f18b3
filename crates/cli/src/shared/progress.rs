//! Live progress for long-running commands (the suite, selftest): one `indicatif` line on a
//! terminal (phase, a bar over the phase's seconds, the latest rate), plain lines when stderr is
//! not a terminal.
//!
//! A one-line bar rather than the full-screen view: the suite's phases are short, of several
//! kinds (iperf3, iperf 2, disk), and its report is what the user reads afterwards; a bar on
//! stderr keeps the scroll-back and the report on stdout untouched.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use wireperf_report::units::format_unit;
use wireperf_suite::{Phase, PhaseResult, Progress};

/// Draws progress on stderr when it is a terminal, else prints plain lines on stdout.
pub struct LiveProgress {
    /// The bar, when stderr is a terminal and output is not quiet.
    bar: Option<ProgressBar>,
    quiet: bool,
    secs: u32,
}

const TEMPLATE: &str = "{prefix:<9} [{bar:30}] {pos:>3}/{len} s  {msg}";

impl LiveProgress {
    /// `quiet` suppresses everything (JSON output).
    pub fn new(quiet: bool) -> Self {
        let bar = (!quiet && std::io::stderr().is_terminal()).then(|| {
            let style = ProgressStyle::with_template(TEMPLATE).unwrap_or_else(|_| ProgressStyle::default_bar());
            ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr()).with_style(style.progress_chars("=> "))
        });
        Self { bar, quiet, secs: 0 }
    }
}

fn rate(bps: f64) -> String {
    format!("{}s/sec", format_unit(bps / 8.0, 'a'))
}

impl Progress for LiveProgress {
    fn phase_start(&mut self, phase: Phase, secs: u32) {
        self.secs = secs;
        if let Some(b) = &self.bar {
            b.reset();
            b.set_length(u64::from(secs));
            b.set_prefix(phase.name());
            b.set_message("connecting…");
        }
    }

    fn interval(&mut self, phase: Phase, elapsed: f64, bps: f64) {
        if self.quiet {
            return;
        }
        match &self.bar {
            Some(b) => {
                b.set_position((elapsed.round().max(0.0) as u64).min(u64::from(self.secs)));
                b.set_message(rate(bps));
            }
            None => outln!("{:<9} {:>5.1}/{} s {:>16}", phase.name(), elapsed, self.secs, rate(bps)),
        }
    }

    fn phase_end(&mut self, r: &PhaseResult) {
        if self.quiet {
            return;
        }
        if let Some(e) = &r.error {
            let line = format!("{:<9} failed: {e}", r.phase.name());
            match &self.bar {
                // Printed above the bar, which then goes on with the next phase.
                Some(b) => b.suspend(|| outln!("{line}")),
                None => outln!("{line}"),
            }
        }
    }

    fn note(&mut self, msg: &str) {
        if self.quiet {
            return;
        }
        match &self.bar {
            Some(b) => {
                b.set_prefix("");
                b.set_length(0);
                b.set_message(format!("{msg}…"));
            }
            None => outln!("{msg}"),
        }
    }
}

impl Drop for LiveProgress {
    fn drop(&mut self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}
