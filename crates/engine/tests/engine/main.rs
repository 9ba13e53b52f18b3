#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The engine crate's integration tests: what no unit test can see. `module_arrows` checks
//! the source itself (the modules' import arrows); `loopback` runs the engine whole, a client
//! against a server in this one process over 127.0.0.1, and asserts exact byte counts, so a
//! counting bug fails here, next to the engine, rather than only in the binary's tests.
//!
//! `support/` holds the helpers of the loopback tests (a one-test server on a free port, the
//! client's configuration as the cli lowers `-c` flags, a recording observer, the exactness
//! checks); every other module is tests.

mod loopback;
mod module_arrows;
mod support;
