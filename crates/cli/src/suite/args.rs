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
    /// Run the suite N times (1-100), its phases in order each round, and print per
    /// direction the median, mean, standard deviation, min-max and the confidence interval of
    /// the mean. With --confidence: the most rounds to run (default 10).
    #[arg(long, value_name = "N", value_parser = crate::shared::repeat_args::rounds)]
    pub repeat: Option<usize>,
    /// Leave the first N rounds out of the statistics (a warm-up: cold caches, ARP, a
    /// router's flow setup).
    #[arg(long, value_name = "N", default_value_t = 0, value_parser = crate::shared::repeat_args::warmup)]
    pub warmup: usize,
    /// Repeat until every direction's LEVEL% confidence interval of the mean is within
    /// WIDTH% of it (netperf's -I: 95,5 = within ±2.5%), at least 3 counted rounds, at most
    /// --repeat (default 10); says whether it got there.
    #[arg(long, value_name = "LEVEL,WIDTH", value_parser = crate::shared::repeat_args::confidence)]
    pub confidence: Option<(f64, f64)>,
    /// Gate: the upload and download phases' mean goodput at least RATE (`2G`), or per
    /// direction `up=2G,down=1G`. Exit status 0 when every gate is met, 1 when one is missed,
    /// 2 when the suite could not test (a phase failed, a gate's figure not measured).
    #[arg(long = "expect-min", value_name = "RATE|up=RATE,down=RATE", value_parser = crate::shared::repeat_args::expect_min)]
    pub expect_min: Option<(Option<f64>, Option<f64>)>,
    /// Gate: every TCP phase's loaded round trip (the probes' median, mean over the rounds)
    /// at most MS milliseconds.
    #[arg(long = "expect-max-loaded-latency", value_name = "MS", value_parser = crate::shared::repeat_args::latency_ms, conflicts_with = "no_latency")]
    pub expect_max_loaded_latency: Option<f64>,
    /// Write the gates as a JUnit XML file (one test case per gate and direction) for
    /// GitLab, Jenkins and other CI systems.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// A label stored with the run (`history list --label`, `--compare-to LABEL`):
    /// `before-rps`, `new-dongle`.
    #[arg(long, value_name = "TEXT")]
    pub label: Option<String>,
    /// After the run, compare it with a stored one and say per direction whether the change
    /// is beyond noise (Welch's t-test over each side's rounds): `last` (the newest suite run
    /// against this host), a run id (a series stands for its rounds) or a label (its newest
    /// run). The doctor's fix loop: apply a fix, re-test with --compare-to last, keep it.
    #[arg(long = "compare-to", value_name = "last|ID|LABEL", value_parser = super::baseline::parse, conflicts_with = "no_save")]
    pub compare_to: Option<super::baseline::Baseline>,
    /// Confidence level of --compare-to's verdicts, percent (default 95: a change is called
    /// significant when p < 0.05; 99 cries wolf one time in a hundred rather than twenty).
    #[arg(long, value_name = "LEVEL", value_parser = super::baseline::level, requires = "compare_to")]
    pub significance: Option<f64>,
    /// Gate: exit 1 when a direction is slower than the --compare-to baseline by more than
    /// PCT percent and the change is significant (a drop within noise passes).
    #[arg(long = "fail-on-regression", value_name = "PCT", value_parser = super::baseline::percent, requires = "compare_to")]
    pub fail_on_regression: Option<f64>,
    /// Diagnose, fix, prove: measure a baseline (--repeat rounds of every phase, default 5),
    /// plan every fix the verdicts and both hosts' doctors point at, then per step: ask, apply
    /// it (this host as root; the server only when it runs with --allow-fix), measure the same
    /// rounds again, keep it when the direction it targets improved beyond noise (Welch, 95%)
    /// and nothing got worse, else undo it. `--fix=plan` prints the plan and changes nothing.
    /// docs/fix.md.
    #[arg(long, value_name = "plan", num_args = 0..=1, require_equals = true, default_missing_value = "apply",
          value_parser = ["apply", "plan"], conflicts_with_all = ["compare_to", "fail_on_regression", "expect_min", "expect_max_loaded_latency", "junit"])]
    pub fix: Option<String>,
    /// With --fix: apply every step without asking (scripts; steps by hand are listed only).
    #[arg(long, requires = "fix")]
    pub yes: bool,
    /// With --fix: apply only the steps for these causes (finding or bottleneck ids, comma
    /// separated: `receiver-window,rps-off`); the rest of the plan is printed, not applied.
    #[arg(long = "fix-only", value_name = "IDS", value_delimiter = ',', requires = "fix")]
    pub fix_only: Vec<String>,
    /// With --fix: this host's journal of changes (default: the doctor's,
    /// /var/lib/wireperf/doctor-journal.json as root); `wireperf doctor --undo --journal FILE`
    /// restores what a killed loop left.
    #[arg(long = "journal", value_name = "FILE", requires = "fix")]
    pub journal: Option<PathBuf>,
    /// With --fix, for a server that authenticates its clients: the user (the password comes
    /// from IPERF3_PASSWORD, else the terminal).
    #[arg(long = "username", value_name = "NAME", requires = "fix")]
    pub username: Option<String>,
    /// With --fix, for a server that authenticates its clients: its RSA public key (PEM).
    #[arg(long = "rsa-public-key-path", value_name = "FILE", requires = "fix")]
    pub rsa_public_key_path: Option<String>,
    /// Do not store the run in the history database.
    #[arg(long)]
    pub no_save: bool,
    /// History database (default: $WIREPERF_DB, else ~/.local/share/wireperf/history.sqlite).
    #[arg(long, value_name = "PATH")]
    pub db: Option<PathBuf>,
}

impl SuiteArgs {
    /// The series to run: `None` for a single suite (no --repeat or --confidence).
    pub fn repeat(&self) -> Option<wireperf_suite::series::RepeatConfig> {
        if self.repeat.is_none() && self.confidence.is_none() {
            return None;
        }
        Some(wireperf_suite::series::RepeatConfig {
            rounds: self.repeat.unwrap_or(10),
            warmup: self.warmup,
            level: self.confidence.map_or(95.0, |c| c.0),
            width_pct: self.confidence.map(|c| c.1),
        })
    }

    /// The gates asked for.
    pub fn gates(&self) -> wireperf_suite::gates::Gates {
        wireperf_suite::gates::Gates {
            min_upload_bps: self.expect_min.and_then(|e| e.0),
            min_download_bps: self.expect_min.and_then(|e| e.1),
            max_loaded_latency_ms: self.expect_max_loaded_latency,
        }
    }

    /// Lowers the flags into the suite's configuration.
    pub fn config(&self) -> SuiteConfig {
        let a = self;
        let mut base = ClientConfig::new(a.host.clone(), Default::default());
        base.port = a.port.unwrap_or(if a.iperf2 { 5001 } else { wireperf_protocol::DEFAULT_PORT });
        base.family = family(a.v4, a.v6);
        base.bind = a.bind;
        base.connect_timeout = Some(Duration::from_secs(10));
        base.tuning = crate::shared::tuning::from_env();
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
