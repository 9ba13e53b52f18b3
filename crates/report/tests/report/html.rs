//! SVG charts and the HTML report, from real iperf3 captures: structure, units, determinism,
//! self-containment, plus reviewed snapshots.

#![allow(clippy::unwrap_used)]

use wireperf_report::svg::{self, Chart, SeriesKind, palette, phase_charts};
use wireperf_report::{all_charts, render_html, render_svg};

use crate::support::runs::{input, report, suite_a, suite_b, udp_only, upload_only};

const SVG_NS: &str = "http://www.w3.org/2000/svg";
const SERIES_PATH: &str = "<path class=\"series\"";

/// Checks that every element opened is closed in order (void HTML elements and `<x/>`
/// excepted); returns the element names in the order they were opened.
fn balanced(doc: &str) -> Vec<String> {
    const VOID: [&str; 4] = ["meta", "br", "hr", "img"];
    let mut stack: Vec<String> = Vec::new();
    let mut opened = Vec::new();
    let mut rest = doc;
    while let Some(i) = rest.find('<') {
        let after = &rest[i + 1..];
        let j = after.find('>').unwrap_or_else(|| panic!("unclosed tag near {:?}", &after[..after.len().min(60)]));
        let tag = &after[..j];
        rest = &after[j + 1..];
        if tag.starts_with('!') {
            continue;
        }
        let name: String =
            tag.trim_start_matches('/').chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '-').collect();
        assert!(!name.is_empty(), "stray '<' before {tag:?}");
        if tag.starts_with('/') {
            let top = stack.pop().unwrap_or_else(|| panic!("</{name}> closes nothing"));
            assert_eq!(top, name, "</{name}> closes <{top}>");
        } else if !tag.ends_with('/') && !VOID.contains(&name.as_str()) {
            stack.push(name.clone());
            opened.push(name);
        }
    }
    assert!(stack.is_empty(), "left open: {stack:?}");
    opened
}

/// `<text …>label</text>` contents inside the group whose start tag contains `group`.
fn texts_in(svg: &str, group: &str) -> Vec<String> {
    let start = svg.find(group).unwrap_or_else(|| panic!("no {group}"));
    let body = &svg[start..];
    let body = &body[..body.find("</g>").unwrap()];
    body.split("<text")
        .skip(1)
        .map(|t| {
            let t = &t[t.find('>').unwrap() + 1..];
            t[..t.find("</text>").unwrap()].to_string()
        })
        .collect()
}

fn series_names(chart: &Chart) -> Vec<&str> {
    chart.series.iter().map(|s| s.name.as_str()).collect()
}

#[test]
fn throughput_has_a_line_per_stream_and_a_sum() {
    let c = phase_charts("t", "upload", &report("up_a"));
    assert_eq!(series_names(&c.throughput), ["stream 5", "stream 7", "sum"]);
    assert_eq!(c.throughput.series[2].kind, SeriesKind::Emphasis);
    // 16 intervals of 0.25 s, none omitted.
    assert!(c.throughput.series.iter().all(|s| s.samples.len() == 16));
    let svg = render_svg(&c.throughput);
    assert_eq!(svg.matches(SERIES_PATH).count(), 3);
    assert_eq!(svg.matches("<path ").count(), 3);
    // Stable colours: streams by position, the sum near-black.
    for (i, colour) in [palette::series(0), palette::series(1), palette::SUM].iter().enumerate() {
        assert_eq!(c.throughput.series[i].colour, *colour);
        assert!(svg.contains(&format!("stroke=\"{colour}\"")));
    }
    // The sum series is the sum of the streams (as iperf3 wrote it).
    let sum = &c.throughput.series[2].samples[3].value;
    let parts: f64 = (0..2).map(|i| c.throughput.series[i].samples[3].value).sum();
    assert!((sum - parts).abs() / sum < 1e-3, "{sum} vs {parts}");
}

#[test]
fn bidir_with_one_stream_each_way_draws_two_sums() {
    let c = phase_charts("t", "bidir", &report("bidir_a"));
    assert_eq!(series_names(&c.throughput), ["sum ↑", "sum ↓"]);
    assert_eq!(c.throughput.series[1].colour, palette::SUM_REVERSE);
    // Only the client's sending stream has TCP_INFO figures.
    assert_eq!(series_names(c.retransmits.as_ref().unwrap()), ["stream 5 ↑"]);
    assert_eq!(series_names(c.cwnd.as_ref().unwrap()), ["stream 5 ↑"]);
}

#[test]
fn tcp_sender_charts_only_where_the_report_has_sender_figures() {
    let up = phase_charts("t", "upload", &report("up_a"));
    let retr = up.retransmits.as_ref().unwrap();
    assert_eq!(series_names(retr), ["stream 5", "stream 7"]);
    assert!(retr.series.iter().all(|s| s.kind == SeriesKind::Bar));
    let cwnd = up.cwnd.as_ref().unwrap();
    assert_eq!(cwnd.series.len(), 2);
    let svg = render_svg(retr);
    assert_eq!(svg.matches(SERIES_PATH).count(), 2);
    assert_eq!(svg.matches("data-kind=\"bar\"").count(), 2);
    // A receiving client (-R) and UDP have no cwnd or retransmits.
    let down = phase_charts("t", "download", &report("down_a"));
    assert!(down.retransmits.is_none() && down.cwnd.is_none());
    let udp = phase_charts("t", "udp", &report("udp_a"));
    assert!(udp.retransmits.is_none() && udp.cwnd.is_none());
    assert_eq!(series_names(&udp.throughput), ["sum"]);
}

/// A tick label's number times its unit's multiplier.
fn tick_value(label: &str) -> f64 {
    let mut parts = label.split(' ');
    let n: f64 = parts.next().unwrap().parse().unwrap();
    let unit = parts.next().unwrap_or("");
    let mult = match unit.chars().next() {
        Some('K') => 1e3,
        Some('M') => 1e6,
        Some('G') => 1e9,
        _ => 1.0,
    };
    n * mult
}

fn assert_nice_steps(labels: &[String]) {
    assert!(labels.len() >= 2, "{labels:?}");
    assert_eq!(labels[0], "0");
    let values: Vec<f64> = labels.iter().map(|l| tick_value(l)).collect();
    let step = values[1];
    let mantissa = step / 10f64.powf(step.log10().floor());
    assert!([1.0, 2.0, 5.0].iter().any(|m| (mantissa - m).abs() < 1e-9), "step {step} of {labels:?}");
    for w in values.windows(2) {
        assert!((w[1] - w[0] - step).abs() < step * 1e-9, "{labels:?}");
    }
}

#[test]
fn axes_have_nice_ticks_units_and_labels() {
    let c = phase_charts("t", "upload", &report("up_a"));
    let svg = render_svg(&c.throughput);
    let y = texts_in(&svg, "class=\"axis y-axis\"");
    assert_nice_steps(&y);
    assert!(y[1..].iter().all(|l| l.ends_with(" Gbit/s")), "{y:?}");
    // The top tick is at or above the highest sample, and less than one step above it.
    let top = tick_value(y.last().unwrap());
    let max = c.throughput.y_max();
    assert!(top >= max && top - max < tick_value(&y[1]), "{top} vs {max}");
    let x = texts_in(&svg, "class=\"axis x-axis\"");
    assert_eq!(x, ["0", "1", "2", "3", "4"]);
    assert!(svg.contains(">Time (s)</text>"));
    assert!(svg.contains(">Throughput</text>"));

    let cwnd = render_svg(c.cwnd.as_ref().unwrap());
    let y = texts_in(&cwnd, "class=\"axis y-axis\"");
    assert!(y[1..].iter().all(|l| l.ends_with("Byte")), "{y:?}");
    let retr = render_svg(c.retransmits.as_ref().unwrap());
    let y = texts_in(&retr, "class=\"axis y-axis\"");
    assert_nice_steps(&y);
    assert!(y.iter().all(|l| l.parse::<u64>().is_ok()), "{y:?}");
}

#[test]
fn svg_is_accessible_balanced_and_standalone() {
    for chart in all_charts(&input(vec![suite_a(), suite_b()])) {
        let svg = render_svg(&chart);
        assert!(svg.starts_with(&format!("<svg xmlns=\"{SVG_NS}\"")));
        let opened = balanced(&svg);
        assert_eq!(opened[0], "svg");
        assert_eq!(opened[1], "title", "{}: <title> first for screen readers", chart.id);
        assert!(svg.contains(&format!("aria-labelledby=\"{0}-title {0}-desc\"", chart.id)));
        assert!(svg.contains(&format!(">{}</title>", chart.title)));
        // One legend entry and one path per series.
        assert_eq!(svg.matches("class=\"swatch\"").count(), chart.series.len());
        assert_eq!(svg.matches(SERIES_PATH).count(), chart.series.len());
        assert_eq!(svg.matches("http").count(), 1, "{}", chart.id);
    }
}

#[test]
fn chart_ids_are_unique_file_names() {
    let charts = all_charts(&input(vec![suite_a(), suite_b(), suite_a()]));
    let mut ids: Vec<&str> = charts.iter().map(|c| c.id.as_str()).collect();
    assert!(ids.contains(&"run-12-upload-throughput"));
    assert!(ids.contains(&"run-12-upload-2-throughput"));
    assert!(ids.contains(&"compare-download-throughput"));
    assert!(ids.iter().all(|id| { id.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-') }));
    let n = ids.len();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), n);
}

#[test]
fn overlay_has_one_series_per_run_for_each_shared_phase() {
    let runs = [suite_a(), suite_b()];
    let charts = svg::overlay_charts(&runs);
    let titles: Vec<&str> = charts.iter().map(|c| c.title.as_str()).collect();
    // bidir only ran in the first suite: nothing to compare it with.
    assert_eq!(titles, ["upload: throughput by run", "download: throughput by run"]);
    for c in &charts {
        assert_eq!(series_names(c), ["run 12 · suite 127.0.0.1", "run 13 · suite 127.0.0.1, -b 8G"]);
        assert_eq!(c.series[0].colour, palette::series(0));
        assert_eq!(c.series[1].colour, palette::series(1));
        assert_eq!(render_svg(c).matches(SERIES_PATH).count(), 2);
    }
}

#[test]
fn html_is_self_contained_balanced_and_deterministic() {
    let inp = input(vec![suite_a(), suite_b()]);
    let html = render_html(&inp);
    assert_eq!(html, render_html(&inp.clone()), "same input, same bytes");
    assert!(html.starts_with("<!DOCTYPE html>\n<html lang=\"en\">"));
    balanced(html.trim_start_matches("<!DOCTYPE html>\n"));
    // No network: the SVG namespace (an identifier, never fetched) is the only URL.
    assert_eq!(html.matches("http://").count(), html.matches(SVG_NS).count(), "only the SVG namespace may be a URL");
    assert!(!html.contains("https://"));
    for banned in ["<script", "<link", "<img", "src=", "url(", "@import", "@font-face"] {
        assert!(!html.contains(banned), "{banned}");
    }
    // Every chart is inline, each with one path per series.
    let charts = all_charts(&inp);
    let series: usize = charts.iter().map(|c| c.series.len()).sum();
    assert_eq!(html.matches("<svg ").count(), charts.len());
    assert_eq!(html.matches(SERIES_PATH).count(), series);
}

#[test]
fn html_shows_metadata_summary_verdicts_and_findings() {
    let html = render_html(&input(vec![suite_a()]));
    assert!(html.contains("<title>wireperf report: run 12 · suite 127.0.0.1</title>"));
    for fact in ["iperf 3.12", "127.0.0.1 port 5399", "TCP, 2 streams, 4 s per phase", "bbr"] {
        assert!(html.contains(fact), "{fact}");
    }
    // Summary: upload, download, and both directions of bidir.
    let table = &html[html.find("<table class=\"summary\"").unwrap()..];
    let table = &table[..table.find("</table>").unwrap()];
    assert_eq!(table.matches("<tr><td class=\"phase\">").count(), 4);
    assert!(table.contains("13.7 Gbit/s"), "upload receiver rate");
    assert!(table.contains("16.1 Gbit/s"), "download receiver rate");
    // Verdicts (the suite's shape): one item each, badge by grade, heading phase · direction,
    // rates and ratios in words, remarks after them.
    let v = &html[html.find("<ul class=\"notes verdicts\">").unwrap()..];
    let v = &v[..v.find("</ul>\n").unwrap_or(v.find("<h3>").unwrap())];
    assert_eq!(v.matches("<li class=").count(), 4, "{v}");
    assert!(v.contains("<span class=\"badge neutral\">unknown</span><span class=\"title\">upload</span>"));
    assert!(v.contains("<span class=\"badge ok\">good</span><span class=\"title\">download</span>"));
    assert!(v.contains("<span class=\"badge crit\">slow</span><span class=\"title\">bidir · upload</span>"));
    assert!(
        v.contains(
            "<b>measured bps:</b> 16.1 Gbit/s</li><li><b>ceiling bps:</b> 18.0 Gbit/s</li><li><b>ratio:</b> 89%</li>"
        ),
        "{v}"
    );
    assert!(v.contains(
        "<span class=\"title\">remarks</span></div><p class=\"note-text\">upload and download differ by 15%"
    ));
    // Findings: id, severity, evidence, fix commands in <pre>, escaped.
    assert!(html.contains("<span class=\"badge crit\">crit</span><code>generic-usb-driver</code>"));
    assert!(html.contains("<li>driver: cdc_ncm</li>"));
    assert!(html.contains("<pre>sudo ethtool -G enx00e04c680001 rx 4096</pre>"));
    assert!(html.contains("ATTR{idVendor}==&quot;0bda&quot;"));
    // One run: no comparison.
    assert!(!html.contains("id=\"comparison\""));
}

#[test]
fn html_compares_two_runs() {
    let html = render_html(&input(vec![suite_a(), suite_b()]));
    let cmp = &html[html.find("id=\"comparison\"").unwrap()..];
    let cmp = &cmp[..cmp.find("</section>").unwrap()];
    assert!(cmp.contains("baseline run 12 · suite 127.0.0.1"));
    // upload: 13.7 → 12.1 Gbit/s, download 16.1 → 11.3 Gbit/s, from the captures' end sums.
    assert!(cmp.contains("<span class=\"delta down\">−12.0%</span>"), "{cmp}");
    assert!(cmp.contains("<span class=\"delta down\">−29.6%</span>"), "{cmp}");
    assert_eq!(cmp.matches("<svg ").count(), 2);
    // The comparison comes before the runs.
    assert!(html.find("id=\"comparison\"").unwrap() < html.find("id=\"run-12\"").unwrap());
}

#[test]
fn empty_and_failed_inputs_still_render() {
    let html = render_html(&input(vec![]));
    balanced(html.trim_start_matches("<!DOCTYPE html>\n"));
    assert!(html.contains("No runs to show."));
    let mut run = upload_only();
    run.phases[0].1.error = Some("unable to connect to server: <refused>".into());
    let html = render_html(&input(vec![run]));
    assert!(html.contains("error: unable to connect to server: &lt;refused&gt;"));
}

/// One element per line, so a snapshot diff shows what changed.
fn lines(doc: &str) -> String {
    doc.replace("><", ">\n<")
}

#[test]
fn snapshot_upload_retransmits_svg() {
    let c = phase_charts("run-7-upload", "upload", &report("up_a"));
    insta::assert_snapshot!(lines(&render_svg(c.retransmits.as_ref().unwrap())));
}

#[test]
fn snapshot_udp_report_html() {
    insta::assert_snapshot!(lines(&render_html(&input(vec![udp_only()]))));
}

#[test]
fn a_watched_phase_draws_both_hosts_cpus_and_its_bottleneck() {
    let mut run = upload_only();
    run.watch = vec![wireperf_report::PhaseWatch {
        phase: "upload".into(),
        bottleneck: Some(serde_json::json!([{"direction": "client→server", "limit": "receiver-cpu",
            "side": "server", "evidence": ["CPU1 on the server was 100% busy"], "fix": ["find it: top"]}])),
        cpu_load: Some(serde_json::json!({
            "client": {"t": [1.0, 2.0], "cpus": [[12.0, 14.0], [3.0, 2.0]]},
            "server": {"t": [1.0, 2.0], "cpus": [[5.0, 4.0], [100.0, 99.5]]}})),
    }];
    let one = input(vec![run]);
    let ids: Vec<String> = all_charts(&one).into_iter().map(|c| c.id).collect();
    assert!(
        ids.iter().any(|i| i.ends_with("-cpu-client")) && ids.iter().any(|i| i.ends_with("-cpu-server")),
        "{ids:?}"
    );
    let page = render_html(&one);
    balanced(&page);
    assert!(page.contains("upload: server CPU busy %") && page.contains("CPU1"), "CPU chart missing");
    assert!(page.contains("<h4>Bottleneck</h4>") && page.contains("receiver-cpu"), "bottleneck missing");
    // An unwatched run draws neither.
    let plain = render_html(&input(vec![upload_only()]));
    assert!(!plain.contains("CPU busy %") && !plain.contains("<h4>Bottleneck</h4>"));
}
