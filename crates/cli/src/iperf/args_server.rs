//! wireperf's own server flags for a public server: concurrency, queueing, limits, logging.
//!
//! iperf3 has none of these (except `--server-max-duration`, 3.20+); they are flattened into
//! the iperf3 flag set so that `wireperf -s --max-tests 4 --queue 30` reads naturally.

use crate::iperf::roles::PUBLIC_SERVER;
use crate::iperf::run_spec::LogFormat;
use clap::Args;

/// Limits and logging of a public server.
#[derive(Debug, Args, Default)]
pub struct PublicServerArgs {
    /// Run up to N tests at once (iperf3: 1).
    #[arg(long = "max-tests", value_name = "N", help_heading = PUBLIC_SERVER)]
    pub max_tests: Option<usize>,
    /// Hold a client that arrives while the server is full for up to SECS, then start its test
    /// when a slot frees (default: refuse at once with the busy answer).
    #[arg(long = "queue", value_name = "SECS", help_heading = PUBLIC_SERVER)]
    pub queue: Option<u64>,
    /// Clients waiting in the queue at once; beyond it the busy answer (default 16).
    #[arg(long = "queue-max", value_name = "N", help_heading = PUBLIC_SERVER)]
    pub queue_max: Option<usize>,
    /// Running tests per client IP address.
    #[arg(long = "max-tests-per-client", value_name = "N", help_heading = PUBLIC_SERVER)]
    pub max_tests_per_client: Option<usize>,
    /// Refuse tests longer than SECS (time + omit) and tests without a time limit (-n/-k);
    /// end a test the client does not end in time (0 = no limit; as iperf3 3.20+).
    #[arg(long = "server-max-duration", value_name = "SECS", value_parser = crate::iperf::cnum::atoi,
          allow_negative_numbers = true, help_heading = PUBLIC_SERVER)]
    pub server_max_duration: Option<i64>,
    /// Refuse tests with more than N parallel streams (-P).
    #[arg(long = "max-parallel", value_name = "N", help_heading = PUBLIC_SERVER)]
    pub max_parallel: Option<u32>,
    /// Connections allowed between accept and a complete cookie (default 64, a quarter of it per
    /// address).
    #[arg(long = "max-half-open", value_name = "N", help_heading = PUBLIC_SERVER)]
    pub max_half_open: Option<usize>,
    /// Format of the one-line records about each test (stderr, or --logfile).
    #[arg(long = "log-format", value_name = "FORMAT", value_enum, help_heading = PUBLIC_SERVER)]
    pub log_format: Option<LogFormat>,
    /// Share nothing of this host with clients: no samples during a test (`--why`, the suite)
    /// and no doctor findings or link facts. For a server anyone can reach.
    #[arg(long = "no-share-host", help_heading = PUBLIC_SERVER)]
    pub no_share_host: bool,
    /// Read the host facts shared with clients from this directory instead of `/` (as
    /// `doctor --root`; its non-loopback interface stands for the test's): for tests and demos.
    #[arg(long = "host-root", value_name = "DIR", help_heading = PUBLIC_SERVER, conflicts_with = "no_share_host")]
    pub host_root: Option<std::path::PathBuf>,
    /// Read the kernel log shared with clients from this file (as `doctor --kernel-log`).
    #[arg(long = "host-kernel-log", value_name = "FILE", help_heading = PUBLIC_SERVER, conflicts_with = "no_share_host")]
    pub host_kernel_log: Option<std::path::PathBuf>,
    /// Let a `wireperf suite --fix` client change this host: it asks by finding id, this
    /// server recomputes its own doctor's fix and applies only that (never a path or value
    /// sent by the client; never a change that drops the link), journals it, logs it with the
    /// client's address, and restores every change not yet kept when the client's channel
    /// closes. Needs root. Never on a server anyone can reach (docs/fix.md).
    #[arg(long = "allow-fix", help_heading = PUBLIC_SERVER)]
    pub allow_fix: bool,
    /// With --allow-fix: the journal of this host's changes (default: the doctor's);
    /// `wireperf doctor --undo --journal FILE` restores it.
    #[arg(long = "fix-journal", value_name = "FILE", help_heading = PUBLIC_SERVER)]
    pub fix_journal: Option<std::path::PathBuf>,
}
