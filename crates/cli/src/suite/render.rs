//! The text rendering of a [`SuiteResult`] (suite and selftest print it).

use wireperf_report::units::format_unit;
use wireperf_suite::SuiteResult;
use wireperf_suite::verdict::Grade;

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
    let latency: Vec<(&str, wireperf_latency::LatencySummary)> = r
        .phases
        .iter()
        .filter_map(|p| {
            Some((p.phase.name(), p.latency.as_ref().and_then(wireperf_latency::LatencySummary::from_json)?))
        })
        .collect();
    if !latency.is_empty() {
        s.push_str("\nlatency under load:\n");
        for (phase, l) in &latency {
            s.push_str(&format!("  {phase:<9} {}\n", l.line()));
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
    if r.phases.iter().any(|p| !p.bottleneck.is_empty() || p.bottleneck_not_watched.is_some()) {
        s.push_str("\nbottlenecks:\n");
        for p in &r.phases {
            if let Some(why) = &p.bottleneck_not_watched {
                s.push_str(&format!("  {}: {why}\n", p.phase.name()));
            }
            for v in &p.bottleneck {
                // An unknown limit has no place: say so rather than print a side.
                let place = if v.main.limit == wireperf_bottleneck::ids::UNKNOWN {
                    "no rule matched on either host or the path".to_string()
                } else {
                    v.main.side.as_str().to_string()
                };
                s.push_str(&format!("  {} {}: {} ({place})\n", p.phase.name(), v.direction, v.main.limit));
                for e in &v.main.evidence {
                    s.push_str(&format!("      {e}\n"));
                }
                for f in v.main.fix.iter().take(1) {
                    s.push_str(&format!("      fix: {f}\n"));
                }
                if !v.also.is_empty() {
                    let also: Vec<String> =
                        v.also.iter().map(|a| format!("{} ({})", a.limit, a.side.as_str())).collect();
                    s.push_str(&format!("      also: {}\n", also.join(", ")));
                }
                if let Some(rt) = v.retransmits.filter(|rt| rt.total > 0) {
                    s.push_str(&format!("      retransmits: {} real, {} spurious\n", rt.real, rt.spurious));
                }
            }
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
    match (&r.server_host, &r.server_host_note) {
        (Some(h), _) => s.push_str(&server_host(h)),
        (None, Some(note)) => s.push_str(&format!("\nserver's host: {note}\n")),
        (None, None) => {}
    }
    s.push_str(&both_ends(&r.both_ends));
    s
}

/// The two hosts compared: each finding, both hosts' values, the fix with its host.
fn both_ends(findings: &[wireperf_doctor::ends::EndsFinding]) -> String {
    if findings.is_empty() {
        return String::new();
    }
    let mut s = String::from("\nboth ends:\n");
    for f in findings {
        s.push_str(&format!("  {:<4} {}: {}\n", f.severity, f.id, f.summary));
        s.push_str(&format!("       client: {}; server: {}\n", f.client, f.server));
        for fix in &f.fix {
            s.push_str(&format!("       fix {fix}\n"));
        }
    }
    s
}

/// The server's shared host: its link in one line, then each finding with its first fix,
/// which is to be run there.
fn server_host(h: &wireperf_doctor::share::SharedHost) -> String {
    let l = &h.link;
    let mut link: Vec<String> = Vec::new();
    link.extend(l.driver.clone());
    if let Some(speed) = l.speed_mbps {
        link.push(format!("{speed} Mbit/s {} duplex", l.duplex.as_deref().unwrap_or("unknown")));
    }
    link.extend(l.mtu.map(|m| format!("MTU {m}")));
    link.extend(l.usb_speed_mbps.map(|u| format!("USB link {u} Mbit/s")));
    if h.from_fixture {
        link.push("read from --host-root".into());
    }
    let mut s = format!("\nserver's host: {} ({})\n", h.iface, link.join(", "));
    if h.findings.is_empty() {
        s.push_str("  its doctor found nothing\n");
    }
    for f in &h.findings {
        s.push_str(&format!("  {:<4} {}: {}\n", f.severity, f.id, f.summary));
        if let Some(fix) = f.fix.first() {
            s.push_str(&format!("       fix on the server: {fix}\n"));
        }
    }
    for e in h.kernel_events.iter().take(5) {
        s.push_str(&format!("  kernel log on the server: {e}\n"));
    }
    s
}

/// A repeated suite: one line per round, the statistics per phase and direction, whether the
/// confidence target was met, then the last round in full (its verdicts and bottlenecks).
pub fn render_series(series: &wireperf_suite::series::SeriesResult) -> String {
    use wireperf_protocol::outcome::words::rate as short;
    let mut s = String::new();
    for (i, r) in series.rounds.iter().enumerate() {
        let phases: Vec<String> = r
            .phases
            .iter()
            .map(|p| match (&p.error, p.phase) {
                (Some(_), _) => format!("{} failed", p.phase.name()),
                (None, wireperf_suite::Phase::Bidir) => {
                    format!("bidir {} / {}", short(p.upload_bps), short(p.download_bps))
                }
                (None, _) => format!("{} {}", p.phase.name(), short(p.upload_bps.max(p.download_bps))),
            })
            .collect();
        let warm = if i < series.warmup { " (warm-up, not counted)" } else { "" };
        s.push_str(&format!("round {:>2}: {}{warm}\n", i + 1, phases.join(", ")));
    }
    let counted = series.counted().len();
    let level = series.statistics.first().map_or(95.0, |st| st.throughput_bps.level);
    s.push_str(&format!(
        "\nstatistics over {counted} round{}{}, {level}% confidence interval of the mean:\n",
        if counted == 1 { "" } else { "s" },
        match series.warmup {
            0 => String::new(),
            w => format!(" ({w} warm-up round{} left out)", if w == 1 { "" } else { "s" }),
        }
    ));
    s.push_str(&format!(
        "  {:<9} {:<9} {:>14} {:>14} {:>14} {:>31}  {}\n",
        "phase", "direction", "median", "mean", "stdev", "min - max", "confidence interval"
    ));
    for st in &series.statistics {
        let [median, mean, sd, range, ci] = st.throughput_cells("round");
        s.push_str(&format!(
            "  {:<9} {:<9} {median:>14} {mean:>14} {sd:>14} {range:>31}  {ci}\n",
            st.phase.name(),
            st.direction
        ));
        let extra = st.side_figures();
        s.push_str(&format!("  {:<19} {extra}\n", ""));
    }
    if let Some(c) = &series.confidence {
        let widest = c.widest.as_ref().map_or(String::new(), |(n, p)| format!("; the widest: {n} ±{p:.1}%"));
        if c.met {
            s.push_str(&format!(
                "confidence: every direction's {}% interval within ±{}% of its mean after {} counted rounds{widest}\n",
                c.level,
                c.width_pct / 2.0,
                c.counted_rounds
            ));
        } else {
            s.push_str(&format!(
                "confidence: NOT reached: not every {}% interval within ±{}% of its mean after {} counted rounds, the cap{widest}\n",
                c.level,
                c.width_pct / 2.0,
                c.counted_rounds
            ));
        }
    }
    if series.interrupted {
        s.push_str("interrupted: the statistics cover the rounds that ran\n");
    }
    if let Some(last) = series.rounds.last() {
        s.push_str(&format!("\nthe last round in full:\n{}", render(last)));
    }
    s
}

/// The gates, one line each.
pub fn render_gates(gates: &[wireperf_suite::gates::GateResult]) -> String {
    use wireperf_suite::gates::GateStatus;
    let mut s = String::from("\ngates:\n");
    for g in gates {
        let mark = match g.status {
            GateStatus::Met => "met",
            GateStatus::Missed => "MISSED",
            GateStatus::NotMeasured => "NOT MEASURED",
        };
        s.push_str(&format!("  [{mark}] {}: {}\n", g.name, g.message));
    }
    s
}

/// `--compare-to`: per direction, whether the change from the baseline is beyond noise.
pub fn render_comparison(base: wireperf_store::RunId, sig: &wireperf_store::significance::Significance) -> String {
    let runs = |ids: &[wireperf_store::RunId]| match ids {
        [one] => format!("run {one}"),
        many => format!("{} runs", many.len()),
    };
    let mut s = format!(
        "\ncompared with run {base} ({} against {}), {} % confidence, Welch's t-test:\n",
        runs(&sig.a_runs),
        runs(&sig.b_runs),
        sig.level
    );
    if sig.directions.is_empty() {
        s.push_str("  no direction in common with the baseline\n");
    }
    for d in &sig.directions {
        s.push_str(&format!("  {}\n", d.sentence));
    }
    s
}
