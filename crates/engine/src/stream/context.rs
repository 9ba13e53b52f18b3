//! What a stream's loop is given ([`LoopCtx`]): the test's spec and the stream's own counters,
//! stop flag, `-n`/`-k` budget and budget notice, in one value instead of six parameters. A
//! leaf of `stream`, beside `spec`; the loops (`tcp`, `udp`, `file`) take it with their socket.

use super::budget::Budget;
use super::counters::Counters;
use super::spec::StreamSpec;
use std::sync::atomic::AtomicBool;

/// What one stream's loop reads and writes besides its socket. Only references: made once per
/// stream thread, and a loop copies the fields out before its first call (no indirection added
/// per block).
#[derive(Clone, Copy)]
pub(crate) struct LoopCtx<'a> {
    /// The test's stream spec.
    pub spec: &'a StreamSpec,
    /// The stream's counters (relaxed stores after every call).
    pub counters: &'a Counters,
    /// The stream's stop flag.
    pub stop: &'a AtomicBool,
    /// The `-n`/`-k` budget of the stream's direction.
    pub budget: Option<&'a Budget>,
    /// A receiver reached the budget: tell the test thread (the loop keeps reading).
    pub on_budget: &'a dyn Fn(),
}
