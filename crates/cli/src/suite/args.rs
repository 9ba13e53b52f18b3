//! `wireperf suite` flags, and their lowering into a [`SuiteConfig`].

use crate::shared::endpoint::family;
use clap::Args;
use std::path::PathBuf;
use std::time::Duration;
use wireperf_engine::ClientConfig;
use wireperf_suite::SuiteConfig;

/// `wireperf suite`.
#[derive(Debug, Args)]
pub struct SuiteArgs {
    /// The server (wireperf or stock iperf3), as for `-c`.
    pub host: String,
    /// Server port (default 5201, or 5001 with --iperf2).
    #[arg(short = 'p', long = "port")]
    pub port: Option<u16>,
    /// The server is a stock iperf 2 (`iperf -s`): talk its protocol (TCP phases only).
    #[arg(long)]
    pub iperf2: bool,
    /// Seconds per phase.
    #[arg(short = 't', long = "time", value_parser = crate::shared::seconds::phase, default_value_t = 10)]
    pub time: u32,
    /// Parallel streams per direction.
    #[arg(short = 'P', long = "parallel", default_value_t = 1, value_parser = crate::shared::parallel::parse)]
    pub parallel: u32,
    /// Only use IPv4.
    #[arg(short = '4', long = "version4")]
    pub v4: bool,
    /// Only use IPv6.
    #[arg(short = '6', long = "version6")]
    pub v6: bool,
    /// Local address to bind.
    #[arg(short = 'B', long = "bind")]
    pub bind: Option<std::net::IpAddr>,
    /// Add a UDP phase at a rate derived from the link.
    #[arg(long)]
    pub udp: bool,
    /// Also measure sequential disk speed in DIR (is the disk slower than the network?).
    #[arg(long = "path", value_name = "DIR")]
    pub path: Option<PathBuf>,
    /// Size of the disk test file in MiB.
    #[arg(long = "disk-mib", default_value_t = 256)]
    pub disk_mib: u64,
    /// Do not measure a loopback baseline when a direction is slow.
    #[arg(long)]
    pub no_baseline: bool,
    /// Do not probe round trips idle and under each TCP phase's load. By default the suite
    /// measures them (percentiles, added latency, responsiveness (RPM) and a grade A-F per
    /// phase, each phase's JSON gets `latency`): a queue that fills between the hosts is how
    /// the verdict tells the path from the hosts.
    #[arg(long = "no-latency")]
    pub no_latency: bool,
    /// Accepted for older scripts: latency is measured by default.
    #[arg(long, hide = true, conflicts_with = "no_latency")]
    pub latency: bool,
    /// TCP congestion control for both directions' senders (as iperf3's `-C`: reno, cubic,
    /// bbr, ...); default: each host's own.
    #[arg(short = 'C', long = "congestion", value_name = "ALGO")]
    pub congestion: Option<String>,
    /// Time between latency probes, ms (10-5000).
    #[arg(long = "latency-interval", value_name = "MS", default_value_t = 100, value_parser = crate::shared::latency::parse_interval)]
    pub latency_interval: u64,
    /// Print the whole result as one JSON document.
    #[arg(long)]
    pub json: bool,
    /// Also write the whole result as one JSON document to FILE (the text still goes to
    /// stdout): a script keeps the figures, the user reads the verdicts.
    #[arg(long = "json-file", value_name = "FILE")]
    pub json_file: Option<PathBuf>,
    /// Do not store the run in the history database.
    #[arg(long)]
    pub no_save: bool,
    /// History database (default: $WIREPERF_DB, else ~/.local/share/wireperf/history.sqlite).
    #[arg(long, value_name = "PATH")]
    pub db: Option<PathBuf>,
}

impl SuiteArgs {
    /// Lowers the flags into the suite's configuration.
    pub fn config(&self) -> SuiteConfig {
        let a = self;
        let mut base = ClientConfig::new(a.host.clone(), Default::default());
        base.port = a.port.unwrap_or(if a.iperf2 { 5001 } else { wireperf_protocol::DEFAULT_PORT });
        base.family = family(a.v4, a.v6);
        base.bind = a.bind;
        base.connect_timeout = Some(Duration::from_secs(10));
        SuiteConfig {
            base,
            time: a.time,
            parallel: a.parallel,
            udp: a.udp,
            path: a.path.clone(),
            disk_bytes: a.disk_mib.max(1) * 1024 * 1024,
            baseline: !a.no_baseline,
            iperf2: a.iperf2,
            latency: crate::shared::latency::config(!a.no_latency, a.latency_interval),
            congestion: a.congestion.clone(),
        }
    }
}
