//! wireperf-report integration tests: captured iperf3 3.12 samples rebuilt from schema
//! values and compared byte for byte (fixtures are verbatim copies of the samples in
//! `shared/reference/iperf3-output.md`, trailing spaces and tabs included); and the HTML/SVG
//! report from real `-J` captures, down to a headless Chromium screenshot.

mod build;
mod client_text;
mod client_variants;
mod extensions;
mod html;
mod json;
mod runs;
mod screenshot;
mod server_text;

/// A fixture file's text, in the layout of iperf3 3.18+ (what wireperf prints).
fn fixture(name: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/report/fixtures").join(name);
    as_3_18(&std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display())))
}

/// The one text difference between iperf3 3.12 (the captured samples) and 3.18–3.22: a
/// stream's (not `[SUM]`'s) end line with retransmits has 12 spaces between the count and
/// "sender" instead of 13.
fn as_3_18(text: &str) -> String {
    const OLD: &str = "             sender";
    text.split_inclusive('\n')
        .map(|line| {
            let body = line.trim_end_matches('\n');
            let before = body.strip_suffix(OLD).filter(|b| b.ends_with(|c: char| c.is_ascii_digit()));
            match before {
                Some(b) if !body.contains("[SUM]") => {
                    line.replacen(&format!("{b}{OLD}"), &format!("{b}{}", &OLD[1..]), 1)
                }
                _ => line.to_string(),
            }
        })
        .collect()
}

#[test]
fn the_3_18_layout_moves_only_stream_sender_lines() {
    let old = "[  5]   0.00-2.00   sec  4.46 GBytes  19.1 Gbits/sec    1             sender\n\
               [SUM]   0.00-2.00   sec  4.46 GBytes  19.1 Gbits/sec    1             sender\n";
    let new = as_3_18(old);
    assert!(new.starts_with("[  5]   0.00-2.00   sec  4.46 GBytes  19.1 Gbits/sec    1            sender\n"), "{new}");
    assert!(new.ends_with("Gbits/sec    1             sender\n"), "{new}");
}
