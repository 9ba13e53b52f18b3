//! Text for `history list`, `show` and `compare`: aligned tables with human units.
//!
//! Rates are decimal (1 Gbit/s = 10^9 bit/s) and sizes binary (1 GByte = 2^30 bytes), as in
//! iperf3's output, so numbers read the same as the test printed them.

use serde_json::Value;
use std::fmt::Write;

use crate::compare::{Comparison, Unit};
use crate::link;
use crate::model::{Direction, PhaseDetail, RunDetail, RunSummary};

/// `941 Mbit/s`, `41.2 Gbit/s`: the one human rate format every reader of results uses.
pub use wireperf_protocol::outcome::words::rate;

/// `4.80 GBytes`, `512 KBytes`, `12 Bytes`.
pub fn bytes(n: u64) -> String {
    let units = ["Bytes", "KBytes", "MBytes", "GBytes", "TBytes"];
    let (v, u) = scale(n as f64, 1024.0, &units);
    if u == "Bytes" { format!("{n} Bytes") } else { format!("{} {u}", three_digits(v)) }
}

fn scale<'a>(mut v: f64, step: f64, units: &[&'a str]) -> (f64, &'a str) {
    let mut i = 0;
    while v.abs() >= step && i + 1 < units.len() {
        v /= step;
        i += 1;
    }
    (v, units[i])
}

fn three_digits(v: f64) -> String {
    // Thresholds below 100 and 10 so that 99.96 prints "100", not "100.0".
    if v.abs() >= 99.95 {
        format!("{v:.0}")
    } else if v.abs() >= 9.995 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// A value in its unit.
pub fn value(unit: Unit, v: f64) -> String {
    match unit {
        Unit::BitsPerSecond => rate(v),
        Unit::Bytes => bytes(v.max(0.0) as u64),
        Unit::Count => format!("{v:.0}"),
        Unit::Percent => format!("{v:.1}%"),
        Unit::Seconds => format!("{v:.2} s"),
        Unit::Milliseconds => format!("{v:.3} ms"),
    }
}

/// A TCP sender never has a zero window or RTT: zero means the side that wrote the document
/// did not measure it (the remote sender of a `-R` test).
fn nonzero(v: Option<u64>) -> Option<u64> {
    v.filter(|x| *x != 0)
}

fn opt<T>(v: Option<T>, f: impl Fn(T) -> String) -> String {
    v.map_or_else(|| "-".to_string(), f)
}

/// Column alignment.
#[derive(Clone, Copy)]
enum Align {
    Left,
    Right,
}

/// Lays out rows under a header, two spaces between columns, no trailing blanks.
fn table(out: &mut String, indent: &str, header: &[(&str, Align)], rows: &[Vec<String>]) {
    let mut w: Vec<usize> = header.iter().map(|(h, _)| h.chars().count()).collect();
    for r in rows {
        for (i, c) in r.iter().enumerate() {
            if let Some(x) = w.get_mut(i) {
                *x = (*x).max(c.chars().count());
            }
        }
    }
    let line = |cells: Vec<&str>| {
        let mut s = String::from(indent);
        for (i, c) in cells.iter().enumerate() {
            let pad = w[i].saturating_sub(c.chars().count());
            if i > 0 {
                s.push_str("  ");
            }
            match header[i].1 {
                Align::Left => {
                    s.push_str(c);
                    s.extend(std::iter::repeat_n(' ', pad));
                }
                Align::Right => {
                    s.extend(std::iter::repeat_n(' ', pad));
                    s.push_str(c);
                }
            }
        }
        s.trim_end().to_string()
    };
    let _ = writeln!(out, "{}", line(header.iter().map(|(h, _)| *h).collect()));
    for r in rows {
        let _ = writeln!(out, "{}", line(r.iter().map(String::as_str).collect()));
    }
}

fn remote(s: &RunSummary) -> String {
    match (&s.remote_host, s.remote_port) {
        (Some(h), Some(p)) if h.contains(':') => format!("[{h}]:{p}"),
        (Some(h), Some(p)) => format!("{h}:{p}"),
        (Some(h), None) => h.clone(),
        _ => "-".into(),
    }
}

/// `history list`.
pub fn list(runs: &[RunSummary]) -> String {
    if runs.is_empty() {
        return "No runs in the history yet: every `wireperf -c` run is saved (unless --no-save), \
                and `wireperf history import FILE` takes iperf3 -J files.\n"
            .to_string();
    }
    use Align::{Left as L, Right as R};
    let header = [
        ("ID", R),
        ("TIME (UTC)", L),
        ("KIND", L),
        ("REMOTE", L),
        ("PROTO", L),
        ("PHASES", L),
        ("GOODPUT", R),
        ("RETR", R),
        ("LABEL / ERROR", L),
    ];
    let rows: Vec<Vec<String>> = runs
        .iter()
        .map(|r| {
            let mut note = match (&r.label, &r.figures.error) {
                (_, Some(e)) => format!("error: {e}"),
                (Some(l), None) => l.clone(),
                (None, None) => String::new(),
            };
            let mut phases = r.phases.join(",");
            if let Some(doc) = &r.series {
                phases = format!("series of {}", doc["rounds"].as_u64().unwrap_or(0));
                let means = series_means(doc);
                note = if note.is_empty() { means } else { format!("{note}; {means}") };
            } else if let (Some(head), Some(round)) = (r.series_of, r.series_round) {
                phases = format!("{phases} (round {round} of #{head})");
            }
            vec![
                r.id.to_string(),
                r.time.replace('T', " ").trim_end_matches('Z').to_string(),
                r.kind.to_string(),
                remote(r),
                opt(r.figures.protocol.clone(), |p| p),
                phases,
                opt(r.figures.received_bps, rate),
                opt(r.figures.retransmits, |n| n.to_string()),
                note,
            ]
        })
        .collect();
    let mut out = String::new();
    table(&mut out, "", &header, &rows);
    out
}

fn phase_text(out: &mut String, p: &PhaseDetail) {
    let f = &p.figures;
    let streams = opt(p.num_streams, |n| format!("{n} stream{}", if n == 1 { "" } else { "s" }));
    let _ = writeln!(
        out,
        "\nPhase {} ({}, {}, {streams}, {}, {} side)",
        p.name,
        opt(f.protocol.clone(), |x| x),
        opt(f.direction.clone(), |x| x),
        opt(f.duration, |d| format!("{d:.2} s")),
        p.side.as_str(),
    );
    let mut facts = vec![
        format!("goodput {}", opt(f.received_bps, rate)),
        format!("sender {}", opt(f.sent_bps, rate)),
        format!("received {}", opt(f.received_bytes, bytes)),
    ];
    if let (Some(u), Some(d)) = (p.upload_bps, p.download_bps) {
        facts.push(format!("upload {} / download {}", rate(u), rate(d)));
    }
    if let Some(r) = f.retransmits {
        facts.push(format!("retransmits {r}"));
    }
    if let Some(j) = p.jitter_ms {
        facts.push(format!("jitter {j:.3} ms"));
    }
    if let (Some(l), Some(n)) = (p.lost_packets, p.packets) {
        facts.push(format!("lost {l}/{n} ({})", opt(p.lost_percent, |x| format!("{x:.2}%"))));
    }
    facts.push(format!(
        "CPU local {} remote {}",
        opt(f.cpu_host, |c| format!("{c:.1}%")),
        opt(f.cpu_remote, |c| format!("{c:.1}%"))
    ));
    let _ = writeln!(out, "  {}", facts.join(", "));
    if let Some(e) = &f.error {
        let _ = writeln!(out, "  error: {e}");
    }
    for line in bottleneck_lines(p.bottleneck.as_ref()) {
        let _ = writeln!(out, "  {line}");
    }
    if !p.streams.is_empty() {
        use Align::{Left as L, Right as R};
        let header = [
            ("STREAM", R),
            ("DIR", L),
            ("SENT", R),
            ("RECEIVED", R),
            ("RATE", R),
            ("RETR", R),
            ("MAX CWND", R),
            ("MEAN RTT", R),
        ];
        let rows: Vec<Vec<String>> = p
            .streams
            .iter()
            .map(|s| {
                vec![
                    s.stream.to_string(),
                    opt(s.direction, |d| d.as_str().to_string()),
                    opt(s.sent_bytes, bytes),
                    opt(s.received_bytes, bytes),
                    opt(s.received_bps.or(s.sent_bps), rate),
                    opt(s.retransmits, |n| n.to_string()),
                    opt(nonzero(s.max_cwnd), bytes),
                    opt(nonzero(s.mean_rtt), |r| format!("{:.2} ms", r as f64 / 1000.0)),
                ]
            })
            .collect();
        let _ = writeln!(out, "  streams:");
        table(out, "    ", &header, &rows);
    }
    for dir in [Direction::Upload, Direction::Download] {
        let rows: Vec<Vec<String>> = p
            .sum_series(dir)
            .map(|r| {
                vec![
                    format!("{:.2}-{:.2}", r.start, r.end),
                    bytes(r.bytes),
                    rate(r.bits_per_second),
                    opt(r.retransmits, |n| n.to_string()),
                    opt(nonzero(r.cwnd), bytes),
                    opt(nonzero(r.rtt), |x| format!("{:.2} ms", x as f64 / 1000.0)),
                    if r.omitted { "(omitted)".into() } else { String::new() },
                ]
            })
            .collect();
        if rows.is_empty() {
            continue;
        }
        use Align::{Left as L, Right as R};
        let header = [("SECONDS", L), ("TRANSFER", R), ("RATE", R), ("RETR", R), ("CWND", R), ("RTT", R), ("", L)];
        let _ = writeln!(out, "  intervals, {} (sum over streams):", dir.as_str());
        table(out, "    ", &header, &rows);
    }
}

/// One line per stored verdict: `bottleneck client→server: receiver-cpu (server), also
/// receiver-window (server); retransmits 40 (2 real, 38 spurious)`. Read from the JSON by
/// field name, so a verdict of another wireperf version shows what it has.
fn bottleneck_lines(v: Option<&Value>) -> Vec<String> {
    let limit = |l: &Value| format!("{} ({})", l["limit"].as_str().unwrap_or("?"), l["side"].as_str().unwrap_or("?"));
    v.and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|verdict| {
            let mut line = format!("bottleneck {}: {}", verdict["direction"].as_str().unwrap_or("?"), limit(verdict));
            let also: Vec<String> = verdict["also"].as_array().into_iter().flatten().map(limit).collect();
            if !also.is_empty() {
                line.push_str(&format!(", also {}", also.join(", ")));
            }
            let r = &verdict["retransmits"];
            if let (Some(t), Some(real), Some(sp)) = (r["total"].as_u64(), r["real"].as_u64(), r["spurious"].as_u64()) {
                line.push_str(&format!("; retransmits {t} ({real} real, {sp} spurious)"));
            }
            if verdict["far_side_seen"] == Value::Bool(false) {
                line.push_str("; the server's host was not seen");
            }
            line
        })
        .collect()
}

/// `history show`.
pub fn show(d: &RunDetail) -> String {
    let s = &d.summary;
    let mut out = String::new();
    let _ = writeln!(out, "Run {}: {} at {}", s.id, s.kind, s.time);
    let mut kv = |k: &str, v: String| {
        let _ = writeln!(out, "  {k:<11} {v}");
    };
    if let Some(c) = &d.command_line {
        kv("command", c.clone());
    }
    if let Some(src) = &d.source {
        kv("source", src.clone());
    }
    kv("remote", remote(s));
    kv("local", opt(s.local_host.clone(), |x| x));
    kv("parameters", d.parameters.to_string());
    if let Some(l) = &s.label {
        kv("label", l.clone());
    }
    kv("stored by", format!("wireperf {}", d.wireperf_version));
    if let Some(e) = &s.figures.error {
        kv("error", e.clone());
    }
    if let Some(doc) = &s.series {
        series_text(&mut out, doc, &d.members);
    } else if let (Some(head), Some(round)) = (s.series_of, s.series_round) {
        let _ = writeln!(out, "  {:<11} round {round} of series {head} (wireperf history show {head})", "series");
    }
    for p in &d.phase_details {
        phase_text(&mut out, p);
    }
    if let Some(doc) = &d.doctor {
        let _ = writeln!(out, "\nLink (doctor snapshot)");
        for i in link::interfaces(doc) {
            let facts: Vec<String> =
                i.fields().into_iter().filter_map(|(k, v)| v.map(|v| format!("{k} {v}"))).collect();
            let _ = writeln!(out, "  {}: {}", i.name, facts.join(", "));
        }
    }
    let ids = link::finding_ids(d.doctor.as_ref(), d.findings.as_ref());
    if !ids.is_empty() {
        let _ = writeln!(out, "  findings: {}", ids.into_iter().collect::<Vec<_>>().join(", "));
    }
    if let Some(v) = &d.verdicts {
        let _ = writeln!(
            out,
            "\nVerdicts\n  {}",
            serde_json::to_string_pretty(v).unwrap_or_default().replace('\n', "\n  ")
        );
    }
    out
}

/// One direction of a stored series' statistics, as the suite (or client) wrote it.
#[derive(serde::Deserialize)]
struct StoredStats {
    phase: String,
    direction: String,
    throughput_bps: wireperf_stats::Summary,
    retransmits: Option<wireperf_stats::Summary>,
}

fn stored_stats(doc: &Value) -> Vec<StoredStats> {
    serde_json::from_value(doc["statistics"].clone()).unwrap_or_default()
}

/// `phase direction` as one name (`upload`, `bidir download`).
fn stats_name(st: &StoredStats) -> String {
    if st.phase == st.direction { st.phase.clone() } else { format!("{} {}", st.phase, st.direction) }
}

/// The list line's note for a series head: each direction's mean and interval.
fn series_means(doc: &Value) -> String {
    let parts: Vec<String> = stored_stats(doc)
        .iter()
        .map(|st| {
            let t = &st.throughput_bps;
            match t.relative_half_width() {
                Some(h) => format!("{} {} ±{:.1}%", stats_name(st), rate(t.mean), h * 100.0),
                None => format!("{} {}", stats_name(st), rate(t.mean)),
            }
        })
        .collect();
    format!("means: {}", parts.join(", "))
}

/// `history show` of a series head: its rounds and the statistics over the counted ones.
fn series_text(out: &mut String, doc: &Value, members: &[crate::RunId]) {
    let warmup = doc["warmup"].as_u64().unwrap_or(0);
    let rounds = match (members.first(), members.last()) {
        (Some(a), Some(b)) if a != b => format!("runs {a}-{b}"),
        (Some(a), _) => format!("run {a}"),
        _ => "none stored".into(),
    };
    let warm = match warmup {
        0 => String::new(),
        1 => ", the first a warm-up left out".into(),
        w => format!(", the first {w} warm-ups left out"),
    };
    let _ = writeln!(out, "  {:<11} {} rounds ({rounds}{warm})", "series", members.len());
    let stats = stored_stats(doc);
    let level = stats.first().map_or(95.0, |st| st.throughput_bps.level);
    let _ = writeln!(out, "\nStatistics over the counted rounds ({level}% confidence interval of the mean)");
    use Align::{Left as L, Right as R};
    let header = [
        ("DIRECTION", L),
        ("N", R),
        ("MEDIAN", R),
        ("MEAN", R),
        ("STDEV", R),
        ("MIN - MAX", R),
        ("INTERVAL", L),
        ("RETR MEAN", R),
    ];
    let rows: Vec<Vec<String>> = stats
        .iter()
        .map(|st| {
            let t = &st.throughput_bps;
            let ci = match (t.ci, t.relative_half_width()) {
                (Some((lo, hi)), Some(h)) => format!("[{}, {}] ±{:.1}%", rate(lo.max(0.0)), rate(hi), h * 100.0),
                _ => "none from one round".into(),
            };
            vec![
                stats_name(st),
                t.n.to_string(),
                rate(t.median),
                rate(t.mean),
                rate(t.sd),
                format!("{} - {}", rate(t.min), rate(t.max)),
                ci,
                opt(st.retransmits.as_ref(), |r| format!("{:.1}", r.mean)),
            ]
        })
        .collect();
    table(out, "  ", &header, &rows);
    if let Some(c) = doc.get("confidence").filter(|c| !c.is_null()) {
        let met = c["met"].as_bool().unwrap_or(false);
        let _ = writeln!(
            out,
            "  confidence target {}% within ±{}%: {}",
            c["level"],
            c["width_pct"].as_f64().unwrap_or(0.0) / 2.0,
            if met { "met" } else { "not met (the cap was reached)" }
        );
    }
}

fn run_line(tag: &str, s: &RunSummary) -> String {
    let mut line = format!("{tag}: run {} ({}, {}, {})", s.id, s.kind, s.time, remote(s));
    if let Some(l) = &s.label {
        let _ = write!(line, " \"{l}\"");
    }
    line
}

/// `history compare`.
pub fn compare(c: &Comparison) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{}", run_line("A", &c.a));
    let _ = writeln!(out, "{}", run_line("B", &c.b));
    let sig = &c.significance;
    for (tag, runs) in [("A", &sig.a_runs), ("B", &sig.b_runs)] {
        if runs.len() > 1 {
            let ids: Vec<String> = runs.iter().map(ToString::to_string).collect();
            let _ = writeln!(out, "{tag} series: runs {} (the table shows run {})", ids.join(", "), ids[0]);
        }
    }
    let _ = writeln!(out);
    use Align::{Left as L, Right as R};
    let header = [("PHASE", L), ("METRIC", L), ("A", R), ("B", R), ("CHANGE", R)];
    let mut rows = Vec::new();
    for p in &c.phases {
        let mut first = true;
        for m in &p.metrics {
            rows.push(vec![
                if first { p.name.clone() } else { String::new() },
                m.label.to_string(),
                opt(m.a, |v| value(m.unit, v)),
                opt(m.b, |v| value(m.unit, v)),
                opt(m.change_percent, |x| format!("{x:+.1}%")),
            ]);
            first = false;
        }
        if p.metrics.is_empty() {
            rows.push(vec![p.name.clone(), "(no figures)".into(), String::new(), String::new(), String::new()]);
        }
    }
    table(&mut out, "", &header, &rows);
    let missing: Vec<String> = c
        .phases
        .iter()
        .filter(|p| !(p.in_a && p.in_b))
        .map(|p| format!("{} only in {}", p.name, if p.in_a { "A" } else { "B" }))
        .collect();
    if !missing.is_empty() {
        let _ = writeln!(out, "({})", missing.join("; "));
    }
    if !sig.directions.is_empty() {
        let _ = writeln!(out, "\nBeyond noise? (goodput, {} % confidence, Welch's t-test)", sig.level);
        for d in &sig.directions {
            let _ = writeln!(out, "  {}", d.sentence);
        }
    }
    let _ = writeln!(out, "\nLink changes");
    let l = &c.link;
    match (l.a_has_doctor, l.b_has_doctor) {
        (false, false) => {
            let _ = writeln!(out, "  no doctor snapshot with either run: link facts unknown");
        }
        (false, true) | (true, false) => {
            let which = if l.a_has_doctor { "B" } else { "A" };
            let _ = writeln!(out, "  run {which} has no doctor snapshot: link facts cannot be compared");
        }
        (true, true) if l.changes.is_empty() && l.findings_added.is_empty() && l.findings_removed.is_empty() => {
            let _ = writeln!(out, "  none: same driver, speed, duplex, MTU and findings");
        }
        (true, true) => {}
    }
    for ch in &l.changes {
        let _ = writeln!(
            out,
            "  {}: {} {} -> {}",
            ch.interface,
            ch.field,
            opt(ch.a.clone(), |x| x),
            opt(ch.b.clone(), |x| x)
        );
    }
    for f in &l.findings_added {
        let _ = writeln!(out, "  finding added:   {f}");
    }
    for f in &l.findings_removed {
        let _ = writeln!(out, "  finding removed: {f}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    // Rates are outcome::words::rate, tested there.
    #[test]
    fn sizes_read_like_iperf3() {
        assert_eq!(bytes(5_153_960_755), "4.80 GBytes");
        assert_eq!(bytes(12), "12 Bytes");
        assert_eq!(bytes(1023 * 1024), "1023 KBytes");
    }
}
