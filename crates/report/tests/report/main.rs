//! wireperf-report integration tests: captured iperf3 3.12 samples rebuilt from schema
//! values and compared byte for byte (fixtures are verbatim copies of the samples in
//! `shared/reference/iperf3-output.md`, trailing spaces and tabs included); and the HTML/SVG
//! report from real `-J` captures, down to a headless Chromium screenshot.

mod client_text;
mod client_variants;
mod extensions;
mod html;
mod json;
mod screenshot;
mod server_text;
mod support;

use support::as_3_18;

#[test]
fn the_3_18_layout_moves_only_stream_sender_lines() {
    let old = "[  5]   0.00-2.00   sec  4.46 GBytes  19.1 Gbits/sec    1             sender\n\
               [SUM]   0.00-2.00   sec  4.46 GBytes  19.1 Gbits/sec    1             sender\n";
    let new = as_3_18(old);
    assert!(new.starts_with("[  5]   0.00-2.00   sec  4.46 GBytes  19.1 Gbits/sec    1            sender\n"), "{new}");
    assert!(new.ends_with("Gbits/sec    1             sender\n"), "{new}");
}
