//! `-F FILE`: a real file sent with iperf3's semantics, to wireperf and to stock iperf3 3.12,
//! 3.18 and 3.22 (both ways, byte for byte).

use crate::support::harness::*;
use crate::support::peers::{Peer, per_peer};
use std::time::Duration;

/// A file of `len` pseudo-random bytes (content must survive the trip byte for byte).
fn source_file(dir: &std::path::Path, len: usize) -> std::path::PathBuf {
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let data: Vec<u8> = (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect();
    let p = dir.join("source.bin");
    std::fs::write(&p, data).expect("write source");
    p
}

#[test]
fn file_to_a_wireperf_server_arrives_byte_for_byte() {
    let dir = tempfile::tempdir().expect("tempdir");
    let src = source_file(dir.path(), 5 * 1024 * 1024 + 123);
    let dst = dir.path().join("received.bin");
    let server = start_server(&wireperf(), &["-1", "-F", dst.to_str().expect("path")]);
    let port = server.port.to_string();
    let out = run_client(&wireperf(), &["-c", "127.0.0.1", "-p", &port, "-F", src.to_str().expect("path"), "-J"]);
    assert_ok(&out);
    let _ = server.finish(Duration::from_secs(10));
    let v = json_of(&out);
    let size = 5 * 1024 * 1024 + 123u64;
    assert_eq!(u(&v, "/end/sum_sent/bytes"), size, "the test ends when the file is sent");
    assert_eq!(u(&v, "/end/streams/0/diskfile/sent"), size);
    assert_eq!(u(&v, "/end/streams/0/diskfile/size"), size);
    assert_eq!(u(&v, "/end/streams/0/diskfile/percent_sent"), 100);
    assert_eq!(std::fs::read(&dst).expect("received"), std::fs::read(&src).expect("source"));
}

/// wireperf's `-F` to a stock server that writes what it receives to its own `-F` file.
///
/// Every stock server (3.12 to 3.22) closes its data sockets the moment TEST_END arrives, so
/// what is still unread then never reaches its file, between stock peers too (3.18 to 3.18:
/// 1 of 20 files short on loopback). What it wrote must be the file's start, byte for byte;
/// wireperf's client waits until the server acknowledged the last byte before TEST_END, which
/// makes a short file as rare as between stock peers (it was every other file with 3.18).
fn file_to_a_stock_iperf3_server(peer: &Peer) {
    let dir = tempfile::tempdir().expect("tempdir");
    let src = source_file(dir.path(), 3 * 1024 * 1024);
    let dst = dir.path().join("received.bin");
    let server = start_server(&peer.bin, &["-1", "-F", dst.to_str().expect("path")]);
    let port = server.port.to_string();
    let out = run_client(&wireperf(), &["-c", "127.0.0.1", "-p", &port, "-F", src.to_str().expect("path")]);
    assert_ok(&out);
    let _ = server.finish(Duration::from_secs(10));
    let text = String::from_utf8_lossy(&out.stdout);
    // iperf3's diskfile line under the sender's summary line.
    assert!(text.contains("        Sent 3.00 MBytes / 3.00 MBytes (100%) of "), "{text}");
    let (got, sent) = (std::fs::read(&dst).expect("received"), std::fs::read(&src).expect("source"));
    println!("iperf3 {} wrote {} of {} bytes", peer.version, got.len(), sent.len());
    assert!(
        !got.is_empty() && sent.starts_with(&got),
        "iperf3 {} wrote {} bytes that are not the file's start",
        peer.version,
        got.len()
    );
}

fn stock_iperf3_client_file_to_a_wireperf_server(peer: &Peer) {
    let dir = tempfile::tempdir().expect("tempdir");
    let src = source_file(dir.path(), 2 * 1024 * 1024 + 7);
    let dst = dir.path().join("received.bin");
    let server = start_server(&wireperf(), &["-1", "-F", dst.to_str().expect("path")]);
    let port = server.port.to_string();
    let out = run_client(&peer.bin, &["-c", "127.0.0.1", "-p", &port, "-F", src.to_str().expect("path")]);
    assert_ok(&out);
    let _ = server.finish(Duration::from_secs(10));
    assert!(
        std::fs::read(&dst).expect("received") == std::fs::read(&src).expect("source"),
        "the file from iperf3 {} arrived changed",
        peer.version
    );
}

per_peer!(file_to_a_stock_iperf3_server, stock_iperf3_client_file_to_a_wireperf_server);

#[test]
fn udp_file_transfer_is_refused_as_iperf3_does() {
    let out = run_client(&wireperf(), &["-c", "127.0.0.1", "-u", "-F", "/etc/hostname"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot transfer file using UDP"));
}
