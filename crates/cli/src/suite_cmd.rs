//! `wireperf suite HOST` and the text rendering of a [`SuiteResult`].

use crate::progress::LiveProgress;
use clap::Args;
use std::path::PathBuf;
use std::time::Duration;
use wireperf_engine::{ClientConfig, Family};
use wireperf_report::units::format_unit;
use wireperf_suite::verdict::Grade;
use wireperf_suite::{SuiteConfig, SuiteResult, run_suite};

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
    #[arg(short = 't', long = "time", default_value_t = 10)]
    pub time: u32,
    /// Parallel streams per direction.
    #[arg(short = 'P', long = "parallel", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=128))]
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
    /// Print the whole result as one JSON document.
    #[arg(long)]
    pub json: bool,
    /// Do not store the run in the history database.
    #[arg(long)]
    pub no_save: bool,
    /// History database (default: $WIREPERF_DB, else ~/.local/share/wireperf/history.sqlite).
    #[arg(long, value_name = "PATH")]
    pub db: Option<PathBuf>,
}

/// Stores a suite (or selftest) run with its phases, doctor report and verdicts.
pub fn save(
    result: &SuiteResult,
    kind: wireperf_store::RunKind,
    db: Option<&std::path::Path>,
) -> Result<wireperf_store::RunId, wireperf_store::StoreError> {
    let mut run = wireperf_store::NewRun::new(kind, Some(wireperf_store::current_command_line()));
    for p in &result.phases {
        run = run.phase(p.phase.name(), p.report.clone());
    }
    run.doctor = result.link.doctor.as_ref().and_then(|d| serde_json::to_value(d).ok());
    run.findings = result.link.doctor.as_ref().and_then(|d| serde_json::to_value(&d.findings).ok());
    run.verdicts = serde_json::to_value(&result.verdicts).ok();
    run.error = result.phases.iter().find_map(|p| p.error.clone());
    wireperf_store::Store::open_default(db)?.insert_run(&run)
}

/// Builds the suite configuration from the arguments.
pub fn config(a: &SuiteArgs) -> SuiteConfig {
    let mut base = ClientConfig::new(a.host.clone(), Default::default());
    base.port = a.port.unwrap_or(if a.iperf2 { 5001 } else { wireperf_protocol::DEFAULT_PORT });
    base.family = match (a.v4, a.v6) {
        (true, false) => Family::V4,
        (false, true) => Family::V6,
        _ => Family::Any,
    };
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
    }
}

fn rate(bps: f64) -> String {
    if bps > 0.0 { format!("{}s/sec", format_unit(bps / 8.0, 'a')) } else { "-".into() }
}

/// The human-readable result.
pub fn render(r: &SuiteResult) -> String {
    let mut s = String::new();
    s.push_str(&format!(
        "wireperf suite: {} port {}, {} s per phase, {} stream{} per direction\n",
        r.server,
        r.port,
        r.seconds,
        r.parallel,
        if r.parallel == 1 { "" } else { "s" }
    ));
    match (&r.link.iface, &r.link.ceiling) {
        (Some(i), Some(c)) => s.push_str(&format!(
            "link: {i}{}, ceiling {} TCP / {} UDP ({})\n",
            r.link.doctor.as_ref().and_then(|d| d.link.driver.as_ref()).map(|d| format!(" ({d})")).unwrap_or_default(),
            rate(c.tcp_bps as f64),
            rate(c.udp_bps as f64),
            c.described_as
        )),
        (Some(i), None) => s.push_str(&format!("link: {i}\n")),
        _ => {}
    }
    if let Some(n) = &r.link.note {
        s.push_str(&format!("note: {n}\n"));
    }
    s.push_str(&format!("\n{:<10} {:>16} {:>16} {:>8}\n", "phase", "upload", "download", "retr"));
    for p in &r.phases {
        match &p.error {
            None => s.push_str(&format!(
                "{:<10} {:>16} {:>16} {:>8}{}\n",
                p.phase.name(),
                rate(p.upload_bps),
                rate(p.download_bps),
                p.retransmits,
                p.udp_loss.map(|(l, t)| format!("  loss {l}/{t}")).unwrap_or_default()
            )),
            Some(e) => s.push_str(&format!("{:<10} failed: {e}\n", p.phase.name())),
        }
    }
    if !r.verdicts.is_empty() {
        s.push_str("\nverdicts:\n");
        for v in &r.verdicts {
            let mark = match v.grade {
                Grade::Good => "good",
                Grade::Fair => "fair",
                Grade::Slow => "SLOW",
                Grade::Unknown => "  - ",
            };
            s.push_str(&format!("  [{mark}] {}: {}\n", v.phase, v.text));
        }
    }
    if !r.remarks.is_empty() {
        s.push_str("\nremarks:\n");
        for m in &r.remarks {
            s.push_str(&format!("  - {m}\n"));
        }
    }
    if let Some(d) = &r.disk {
        s.push_str(&format!(
            "\ndisk {}: write {:.0} MB/s, read {}{}\n",
            d.path.display(),
            d.write_bytes_per_sec / 1e6,
            d.read_bytes_per_sec
                .map_or("not measured (no direct I/O on this filesystem)".into(), |r| format!("{:.0} MB/s", r / 1e6)),
            if d.direct_io { " (direct I/O)" } else { "" }
        ));
    }
    if let Some(e) = &r.disk_error {
        s.push_str(&format!("\ndisk check failed: {e}\n"));
    }
    if let Some(d) = r.link.doctor.as_ref().filter(|d| !d.findings.is_empty()) {
        s.push_str(&format!("\ndoctor findings on {}:\n", d.link.name));
        for f in &d.findings {
            s.push_str(&format!("  {:<4} {}: {}\n", format!("{:?}", f.severity).to_lowercase(), f.id, f.summary));
        }
        s.push_str("  (run `wireperf doctor` for evidence and fixes)\n");
    }
    s
}

/// Runs the suite; returns the exit status (1 if a phase failed).
pub fn run(a: &SuiteArgs) -> i32 {
    let cfg = config(a);
    let interrupt = crate::signals::interrupt_flag();
    let mut progress = LiveProgress::new(a.json);
    let result = run_suite(&cfg, &mut progress, &interrupt);
    drop(progress);
    let saved = if a.no_save {
        None
    } else {
        match save(&result, wireperf_store::RunKind::Suite, a.db.as_deref()) {
            Ok(id) => Some(id),
            Err(e) => {
                eprintln!("wireperf: warning - the run was not saved to history: {e}");
                None
            }
        }
    };
    if a.json {
        let mut doc = serde_json::to_value(&result).unwrap_or_default();
        if let (Some(id), Some(obj)) = (saved, doc.as_object_mut()) {
            obj.insert("saved_run".into(), serde_json::json!(id.0));
        }
        match serde_json::to_string_pretty(&doc) {
            Ok(j) => println!("{j}"),
            Err(e) => {
                eprintln!("wireperf: error - cannot encode the result: {e}");
                return 1;
            }
        }
    } else {
        print!("{}", render(&result));
        if let Some(id) = saved {
            println!("\nsaved as run #{} (wireperf history show {})", id.0, id.0);
        }
    }
    i32::from(!result.all_ok())
}
