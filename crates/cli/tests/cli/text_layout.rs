//! The client's text output has iperf3 3.12's layout, line for line.
//!
//! The same test is run by stock iperf3 and by wireperf (both against a stock server); the
//! outputs are compared after masking what legitimately differs (digits, unit prefixes, port
//! numbers), so every column position, every fixed word and every trailing space must match.

use crate::harness::*;
use std::time::Duration;

/// Numbers (with the spaces that right-align them) become `#`, unit prefixes `X`, port
/// numbers `P`: values go, every fixed word, separator and trailing space stays. Column
/// widths themselves are proven byte-exact by the report crate's tests.
fn mask(text: &str) -> Vec<String> {
    text.lines()
        .map(|l| {
            let mut s = String::new();
            let mut chars = l.chars().peekable();
            while let Some(c) = chars.next() {
                if c.is_ascii_digit() {
                    let padded = s.ends_with(' ');
                    while s.ends_with(' ') {
                        s.pop();
                    }
                    if padded {
                        s.push(' ');
                    }
                    while chars.peek().is_some_and(|d| d.is_ascii_digit() || *d == '.') {
                        chars.next();
                    }
                    s.push('#');
                } else {
                    s.push(c);
                }
            }
            for p in ["K", "M", "G", "T"] {
                s = s.replace(&format!("{p}bits/sec"), "Xbits/sec").replace(&format!("{p}Bytes"), "XBytes");
            }
            // Ports have 4 or 5 digits depending on luck.
            let mut out = String::new();
            let mut rest = s.as_str();
            while let Some(i) = rest.find("port ") {
                out.push_str(&rest[..i + 5]);
                rest = rest[i + 5..].trim_start_matches('#');
                out.push('P');
            }
            out.push_str(rest);
            out
        })
        .collect()
}

fn client_text(bin: &std::path::PathBuf, args: &[&str]) -> String {
    let server = start_server(&iperf3(), &["-1"]);
    let port = server.port.to_string();
    let mut a = vec!["-c", "127.0.0.1", "-p", &port];
    a.extend_from_slice(args);
    let out = run_client(bin, &a);
    let _ = server.finish(Duration::from_secs(10));
    assert_ok(&out);
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn same_layout(args: &[&str]) {
    let theirs = client_text(&iperf3(), args);
    let ours = client_text(&wireperf(), args);
    let (t, o) = (mask(&theirs), mask(&ours));
    assert_eq!(o, t, "\n--- iperf3 ---\n{theirs}\n--- wireperf ---\n{ours}");
}

#[test]
fn default_test() {
    same_layout(&["-t", "1"]);
}

#[test]
fn reverse() {
    same_layout(&["-t", "1", "-R"]);
}

#[test]
fn bidir() {
    same_layout(&["-t", "1", "--bidir"]);
}

#[test]
fn parallel_with_sums() {
    same_layout(&["-t", "1", "-P", "2"]);
}

#[test]
fn fixed_units_and_title() {
    same_layout(&["-t", "1", "-f", "m", "-T", "lab"]);
}
