//! The client's text output has stock iperf3's layout (3.12, 3.18 and 3.22), line for line;
//! where 3.18+ differ from 3.12 (one space on a stream's sender line), 3.22's.
//!
//! The same test is run by a stock iperf3 and by wireperf (both against that version's server); the
//! outputs are compared after masking what legitimately differs (digits, unit prefixes, port
//! numbers), so every column position, every fixed word and every trailing space must match.

use crate::support::harness::*;
use crate::support::peers::{Peer, per_peer};
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

fn client_text(server: &std::path::PathBuf, bin: &std::path::PathBuf, args: &[&str]) -> String {
    let server = start_server(server, &["-1"]);
    let port = server.port.to_string();
    let mut a = vec!["-c", "127.0.0.1", "-p", &port];
    a.extend_from_slice(args);
    let out = run_client(bin, &a);
    let _ = server.finish(Duration::from_secs(10));
    assert_ok(&out);
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// wireperf prints 3.18+'s layout, which differs from 3.12's in one place: a stream's (not
/// `[SUM]`'s) end line with retransmits has one space less before "sender".
fn as_3_18(masked: Vec<String>) -> Vec<String> {
    masked
        .into_iter()
        .map(|l| if l.contains("[SUM]") { l } else { l.replace("#             sender", "#            sender") })
        .collect()
}

fn same_layout(peer: &Peer, args: &[&str]) {
    let theirs = client_text(&peer.bin, &peer.bin, args);
    let ours = client_text(&peer.bin, &wireperf(), args);
    let (mut t, o) = (mask(&theirs), mask(&ours));
    if peer.version == "3.12" {
        t = as_3_18(t);
    }
    assert_eq!(o, t, "\n--- iperf3 {} ---\n{theirs}\n--- wireperf ---\n{ours}", peer.version);
}

fn default_test(peer: &Peer) {
    same_layout(peer, &["-t", "1"]);
}

fn reverse(peer: &Peer) {
    same_layout(peer, &["-t", "1", "-R"]);
}

fn bidir(peer: &Peer) {
    same_layout(peer, &["-t", "1", "--bidir"]);
}

fn parallel_with_sums(peer: &Peer) {
    same_layout(peer, &["-t", "1", "-P", "2"]);
}

fn fixed_units_and_title(peer: &Peer) {
    same_layout(peer, &["-t", "1", "-f", "m", "-T", "lab"]);
}

fn udp(peer: &Peer) {
    same_layout(peer, &["-t", "1", "-u", "-b", "10M"]);
}

per_peer!(default_test, reverse, bidir, parallel_with_sums, fixed_units_and_title, udp);
