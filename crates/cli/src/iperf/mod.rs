//! iperf3 mode (`wireperf -c HOST …` / `wireperf -s …`): the flags, their lowering into engine
//! configurations, and the entry point that runs the client or the server.
//!
//! - `args.rs` / `args_server.rs` — iperf3's flags and wireperf's public-server flags (clap).
//! - `roles.rs` — which flags are client-only or server-only, derived from their definitions.
//! - `cnum.rs` — numbers read as iperf3 reads them (C's `atoi`/`strtol` leniency).
//! - `lower.rs` — the pure lowering: shared flags and the role check; `lower_client.rs`,
//!   `lower_server.rs`, `lower_zerocopy.rs` and `tos.rs` the per-role and per-value parts.
//! - `files.rs` — what lowering needs from files and the terminal (`-F` size, RSA keys).
//! - `auth.rs` — iperf3 authentication: the checked flags, the server's authorizer, the token.
//! - `repeat.rs` — `--repeat`/`--warmup`/`--confidence` (wireperf only) lowered into a series;
//!   `series.rs` runs it (one client test after another, the suite's statistics) and
//!   `series_text.rs` prints its statistics.

pub mod args;
pub mod args_server;
pub mod auth;
mod cnum;
pub mod files;
pub mod lower;
mod lower_client;
mod lower_server;
mod lower_zerocopy;
mod repeat;
pub mod roles;
mod series;
mod series_text;
mod tos;

use crate::iperf::roles::RoleFlags;

/// Lowers and reads what the flags name: the mode to run, or a parameter error.
pub fn load(a: &args::IperfArgs, roles: &RoleFlags) -> Result<lower::Mode, lower::ParamError> {
    let (mode, pending) = lower::lower(a, roles)?;
    files::finish(mode, &pending)
}

/// Runs iperf3 mode; returns the exit status.
pub fn run(a: &args::IperfArgs, roles: &RoleFlags) -> i32 {
    match load(a, roles) {
        Ok(lower::Mode::Version) => {
            // One write: `wireperf -v | grep -q` reads it whole however early grep exits.
            outln!("{}\n{}", wireperf_engine::report_version(), wireperf_sys::system_info());
            0
        }
        Ok(lower::Mode::Client(cfg, out, repeat)) => {
            if let Some(w) = lower_client::fractional_time_warning(a) {
                eprintln!("wireperf: warning - {w}");
            }
            let save = (!a.no_save).then(|| a.db.clone());
            let save = save.as_ref().map(Option::as_deref);
            let latency = crate::shared::latency::config(a.latency, a.latency_interval);
            match repeat {
                None => crate::client_cmd::run(&cfg, &out, save, a.why, a.tui, latency),
                Some(r) => {
                    let opts = crate::client_cmd::TestOpts { save, why: a.why, latency };
                    series::run(&cfg, &out, &r, &opts, a.tui)
                }
            }
        }
        Ok(lower::Mode::Server(cfg, out, proc)) => crate::server_cmd::run(&cfg, &out, &proc),
        Err(e) => {
            eprintln!("wireperf: parameter error - {e}");
            eprintln!();
            eprintln!("Usage: wireperf [-s|-c host] [options]");
            eprintln!("Try `wireperf --help' for more information.");
            1
        }
    }
}
