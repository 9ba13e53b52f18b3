//! What the report's tests are built from, kept apart from the tests (no `#[test]` here):
//! [`build`] (short constructors for schema values), [`runs`] (report inputs from real iperf3
//! captures), and the captured iperf3 text of `fixtures/`.

pub mod build;
pub mod runs;

/// A fixture file's text, in the layout of iperf3 3.18+ (what wireperf prints).
pub fn fixture(name: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/report/fixtures").join(name);
    as_3_18(&std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display())))
}

/// The one text difference between iperf3 3.12 (the captured samples) and 3.18–3.22: a
/// stream's (not `[SUM]`'s) end line with retransmits has 12 spaces between the count and
/// "sender" instead of 13.
pub fn as_3_18(text: &str) -> String {
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
