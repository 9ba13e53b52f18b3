//! Helpers of the in-process tests, apart from the tests so a reader tells them at a glance.
//!
//! A test here is one wireperf client against one wireperf server in this process, over
//! 127.0.0.1: [`server`] binds a server on a port the kernel picks and serves exactly one test
//! on a thread (iperf3's `-1`), [`flags`] builds the client's configuration from `-c` flags the
//! way the cli lowers them, [`recorder`] is the observer both ends report to, [`run`] puts them
//! together under time limits, and [`check`] holds the exactness rules the tests assert.

pub mod check;
pub mod flags;
pub mod recorder;
pub mod run;
pub mod server;
