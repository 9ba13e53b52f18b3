//! `wireperf suite HOST --fix`: diagnose, fix, prove.
//!
//! The suite names what held each direction back and the doctor what is misconfigured on each
//! host; this crate joins them into a loop a user can trust with their hosts: measure a
//! baseline series, plan every fix the verdicts and findings point at (both hosts, the
//! strongest first), ask before each change, apply one step, measure the same series again,
//! and keep the step only when the direction it targets improved beyond noise (Welch's test)
//! and no direction got significantly worse; otherwise undo it. Every change is journaled on
//! the host that made it before it is made, so an interrupt, a crash or a lost connection
//! leaves nothing behind that `wireperf doctor --undo` cannot restore.
//!
//! # Layout
//! - [`step`]: the words of the loop: hosts, directions, a planned step, what became of it.
//! - [`plan`]: pure: a baseline series and both hosts' facts → the ordered steps.
//! - [`prove`]: pure: two series → per direction the change, its p value, keep or undo.
//! - [`local`]: this host's changes (the doctor's actions and journal).
//! - [`remote`]: the client's end of the fix channel to a `--allow-fix` server.
//! - [`serve`]: the server's end: its own fix for a finding id, journaled, undone when the
//!   channel closes before the step is kept.
//! - [`run`]: the loop itself, with the consent it asks through a trait.
//!
//! Nothing here prints: the CLI renders [`run::FixOutcome`].

#![forbid(unsafe_code)]

pub mod local;
pub mod plan;
pub mod prove;
pub mod remote;
pub mod run;
pub mod serve;
pub mod step;

pub use run::{Consent, FixConfig, FixMode, FixOutcome, run_fix};
pub use step::{Direction, Host, PlannedStep, StepStatus};
