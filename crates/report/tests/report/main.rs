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

/// A fixture file's text.
fn fixture(name: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/report/fixtures").join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}
