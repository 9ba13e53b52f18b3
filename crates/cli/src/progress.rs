//! Live progress for long-running commands (the suite): an in-place line with a sparkline on a
//! terminal, plain lines when stdout is a pipe or a file.

use std::io::{IsTerminal, Write};
use wireperf_report::units::format_unit;
use wireperf_suite::{Phase, PhaseResult, Progress};

const SPARKS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];

/// Draws progress on stderr when it is a terminal, else prints plain lines on stdout.
pub struct LiveProgress {
    tty: bool,
    quiet: bool,
    secs: u32,
    samples: Vec<f64>,
}

impl LiveProgress {
    /// `quiet` suppresses everything (JSON output).
    pub fn new(quiet: bool) -> Self {
        Self { tty: std::io::stderr().is_terminal(), quiet, secs: 0, samples: Vec::new() }
    }
}

fn rate(bps: f64) -> String {
    format!("{}s/sec", format_unit(bps / 8.0, 'a'))
}

/// A sparkline of the samples scaled to their maximum.
pub fn sparkline(samples: &[f64]) -> String {
    let max = samples.iter().copied().fold(0.0, f64::max);
    samples
        .iter()
        .map(|&s| if max > 0.0 { SPARKS[((s / max) * 7.0).round().clamp(0.0, 7.0) as usize] } else { SPARKS[0] })
        .collect()
}

impl Progress for LiveProgress {
    fn phase_start(&mut self, phase: Phase, secs: u32) {
        self.secs = secs;
        self.samples.clear();
        if self.quiet {
            return;
        }
        if self.tty {
            eprint!("\r\x1b[2K{:<9} connecting…", phase.name());
            let _ = std::io::stderr().flush();
        }
    }

    fn interval(&mut self, phase: Phase, elapsed: f64, bps: f64) {
        self.samples.push(bps);
        if self.quiet {
            return;
        }
        let left = (f64::from(self.secs) - elapsed).max(0.0);
        if self.tty {
            let tail: Vec<f64> = self.samples.iter().rev().take(30).rev().copied().collect();
            eprint!("\r\x1b[2K{:<9} {:<30} {:>16}  {:>4.0} s left", phase.name(), sparkline(&tail), rate(bps), left);
            let _ = std::io::stderr().flush();
        } else {
            println!("{:<9} {:>5.1}/{} s {:>16}", phase.name(), elapsed, self.secs, rate(bps));
        }
    }

    fn phase_end(&mut self, r: &PhaseResult) {
        if self.quiet {
            return;
        }
        if self.tty {
            eprint!("\r\x1b[2K");
            let _ = std::io::stderr().flush();
        }
        if let Some(e) = &r.error {
            println!("{:<9} failed: {e}", r.phase.name());
        }
    }

    fn note(&mut self, msg: &str) {
        if !self.quiet {
            if self.tty {
                eprint!("\r\x1b[2K{msg}…");
                let _ = std::io::stderr().flush();
            } else {
                println!("{msg}");
            }
        }
    }
}

impl Drop for LiveProgress {
    fn drop(&mut self) {
        if self.tty && !self.quiet {
            eprint!("\r\x1b[2K");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sparkline_scales_to_the_maximum() {
        assert_eq!(sparkline(&[0.0, 50.0, 100.0]), "▁▅█");
        assert_eq!(sparkline(&[0.0, 0.0]), "▁▁");
    }
}
