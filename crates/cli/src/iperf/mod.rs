//! iperf3 mode (`wireperf -c HOST …` / `wireperf -s …`): the flags, their lowering into one
//! typed description of the run, and the entry point that runs the client or the server.
//!
//! Flags and their lowering (pure, but for `files.rs`):
//! - `args.rs` / `args_server.rs` — iperf3's flags and wireperf's public-server flags (clap).
//! - `roles.rs` — which flags are client-only or server-only, derived from their definitions
//!   (`roles_tests.rs` checks every one against the whole command line).
//! - `cnum.rs` — numbers read as iperf3 reads them (C's `atoi`/`strtol` leniency).
//! - `run_spec.rs` — what the lowering produces: [`run_spec::Mode`] with a
//!   [`run_spec::ClientRun`] or [`run_spec::ServerRun`], and [`run_spec::ParamError`]. A leaf:
//!   it imports nothing else of `iperf/`.
//! - `lower.rs` — the role check and the choice of role; `lower_common.rs` the flags both
//!   roles share; `lower_client.rs` (the engine's client config) and `lower_server.rs` (the
//!   engine's server config) the per-role parts; `lower_zerocopy.rs` and `tos.rs` per-value
//!   parts.
//! - `files.rs` — what lowering needs from files and the terminal (`-F` size, RSA keys).
//! - `auth.rs` — iperf3 authentication: the checked flags, the server's authorizer, the token.
//! - `repeat.rs` — `--repeat`/`--warmup`/`--confidence` (wireperf only) lowered into a series
//!   (`repeat_tests.rs` checks it through the whole lowering).
//!
//! Running it:
//! - `client_cmd.rs` / `server_cmd.rs` — an iperf3-mode client or server: events to
//!   `text_out.rs`, `json_out.rs` or `debug_out.rs` through `output.rs` (stdout or
//!   `--logfile`); with `--tui` under the `wireperf-tui` live view, text kept in memory until
//!   the screen is back (`live_hosts.rs` reads both hosts' CPU and DSACK counters for it).
//! - `server_log.rs` — the server operator's one-line log; `metrics_endpoint.rs` — `-s
//!   --metrics`: the exporter's counters, or a clear refusal in a build without the `exporter`
//!   feature.
//! - `series.rs` — a client series (one test after another, the suite's statistics);
//!   `series_summary.rs` what it left, `series_text.rs` its statistics as text.

pub mod args;
pub mod args_server;
pub(crate) mod auth;
mod client_cmd;
mod cnum;
mod debug_out;
mod files;
mod json_out;
mod live_hosts;
mod lower;
mod lower_client;
mod lower_common;
mod lower_server;
mod lower_zerocopy;
mod metrics_endpoint;
mod output;
mod repeat;
#[cfg(all(test, feature = "suite"))]
mod repeat_tests;
pub mod roles;
#[cfg(test)]
mod roles_tests;
pub mod run_spec;
mod series;
mod series_summary;
mod series_text;
mod server_cmd;
mod server_log;
mod text_out;
mod tos;

use crate::iperf::roles::RoleFlags;
use crate::iperf::run_spec::{Mode, ParamError};

/// Lowers and reads what the flags name: the run to do, or a parameter error. The flags are
/// not read after this.
pub fn load(a: &args::IperfArgs, roles: &RoleFlags) -> Result<Mode, ParamError> {
    let (mode, pending) = lower::lower(a, roles)?;
    files::finish(mode, &pending)
}

/// Runs iperf3 mode; returns the exit status.
pub fn run(a: &args::IperfArgs, roles: &RoleFlags) -> i32 {
    match load(a, roles) {
        Ok(mode) => run_mode(&mode),
        Err(e) => {
            eprintln!("wireperf: parameter error - {e}");
            eprintln!();
            eprintln!("Usage: wireperf [-s|-c host] [options]");
            eprintln!("Try `wireperf --help' for more information.");
            1
        }
    }
}

/// Runs what the lowering described; returns the exit status.
fn run_mode(mode: &Mode) -> i32 {
    match mode {
        Mode::Version => {
            // One write: `wireperf -v | grep -q` reads it whole however early grep exits.
            outln!("{}\n{}", wireperf_engine::report_version(), wireperf_sys::system_info());
            0
        }
        Mode::Client(run) => {
            for w in &run.warnings {
                eprintln!("wireperf: warning - {w}");
            }
            match &run.repeat {
                None => client_cmd::run(run),
                Some(r) => series::run(run, r),
            }
        }
        Mode::Server(run) => server_cmd::run(run),
    }
}
