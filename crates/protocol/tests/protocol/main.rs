#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Client and server sessions driven against each other in memory, on a virtual clock.
//!
//! Every state sequence a real test walks through is exercised here without sockets: the
//! `Pair` (in `support/`, with the other helpers) moves bytes between the two sessions
//! (optionally in arbitrary small chunks) and the test plays the engine's part on each side.

#[cfg(feature = "auth")]
mod auth;
mod fuzz_inputs;
mod sessions;
mod support;
