//! `wireperf --iperf2` against Debian's iperf 2.1.8, both directions, on loopback: TCP, `-P 2`,
//! `-r`, `-d`, `--full-duplex`, `-R`, `-u -b 100M` and `-e`. Each test moves 1 s of traffic.
//!
//! Byte counts are compared across the two programs: both count every byte of the stream
//! (the test header included), so they must agree exactly for TCP; UDP compares the server's
//! report as each side sees it. A fresh iperf 2 server per test: 2.1.8's UDP server is known
//! to crash on its second test.

use crate::support::harness::{free_port, wait_for_port_without_connecting, wireperf};
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

fn iperf2() -> PathBuf {
    for p in ["/usr/bin/iperf", "/usr/local/bin/iperf"] {
        if std::path::Path::new(p).exists() {
            return PathBuf::from(p);
        }
    }
    panic!("iperf (2.1.8) is not installed: apt-get install iperf");
}

/// A server whose stdout and stderr go to a file, killed on drop.
struct Srv {
    child: Child,
    out: tempfile::NamedTempFile,
    port: u16,
}

impl Drop for Srv {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Srv {
    fn text(&self) -> String {
        std::fs::read_to_string(self.out.path()).unwrap_or_default()
    }

    /// Waits until stdout has `n` lines matching `pred`, returning them.
    fn wait_lines(&self, n: usize, pred: impl Fn(&str) -> bool) -> Vec<String> {
        let deadline = Instant::now() + Duration::from_secs(8);
        loop {
            let lines: Vec<String> = self.text().lines().filter(|l| pred(l)).map(str::to_string).collect();
            if lines.len() >= n || Instant::now() > deadline {
                return lines;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

fn wait_udp(port: u16) {
    let hex = format!(":{port:04X}");
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        let t = std::fs::read_to_string("/proc/net/udp").unwrap_or_default();
        if t.lines().any(|l| l.split_whitespace().nth(1).is_some_and(|a| a.ends_with(&hex))) {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    panic!("nothing bound to udp port {port}");
}

/// Starts `iperf -s` (`ours` = false) or `wireperf --iperf2 -s` with `args`.
fn server(ours: bool, args: &[&str]) -> Srv {
    let port = free_port();
    let out = tempfile::NamedTempFile::new().expect("tempfile");
    let file = out.reopen().expect("reopen");
    let mut cmd = if ours {
        let mut c = Command::new(wireperf());
        c.arg("--iperf2");
        c
    } else {
        Command::new(iperf2())
    };
    let child = cmd
        .args(["-s", "-p", &port.to_string()])
        .args(args)
        .stdout(Stdio::from(file.try_clone().expect("dup")))
        // Warnings (e.g. a failed connect-back) land in the same file (one shared offset), so a
        // failure shows them; the CSV readers skip lines that are not CSV.
        .stderr(Stdio::from(file))
        .spawn()
        .expect("spawn server");
    if args.contains(&"-u") {
        wait_udp(port);
    } else {
        wait_for_port_without_connecting(port);
    }
    Srv { child, out, port }
}

fn client(ours: bool, port: u16, args: &[&str]) -> Output {
    let mut cmd = if ours {
        let mut c = Command::new(wireperf());
        c.arg("--iperf2");
        c
    } else {
        Command::new(iperf2())
    };
    let out =
        cmd.args(["-c", "127.0.0.1", "-p", &port.to_string(), "-t", "1"]).args(args).output().expect("run client");
    assert!(out.status.success(), "client failed: {}", String::from_utf8_lossy(&out.stderr));
    out
}

/// CSV fields of a line (`-y C`).
fn fields(l: &str) -> Vec<String> {
    l.split(',').map(str::to_string).collect()
}

/// Final (whole-run, per-stream, not sum) CSV lines.
fn csv_finals(text: &str) -> Vec<Vec<String>> {
    text.lines().map(fields).filter(|f| f.len() >= 9 && f[6].starts_with("0.0-") && f[5] != "-1").collect()
}

fn bytes(f: &[String]) -> u64 {
    f[7].parse().expect("bytes field")
}

/// TCP: our client's CSV finals against the iperf 2 server's, stream for stream by port.
fn tcp_ours_to_theirs(client_args: &[&str], want_legs: usize) {
    let s = server(false, &["-y", "C"]);
    let mut args = vec!["-y", "C"];
    args.extend_from_slice(client_args);
    let out = client(true, s.port, &args);
    let ours = csv_finals(&String::from_utf8_lossy(&out.stdout));
    assert_eq!(ours.len(), want_legs, "our legs: {ours:?}");
    let theirs = s.wait_lines(want_legs, |l| fields(l).len() >= 9 && !l.contains(",-1,"));
    let theirs: Vec<Vec<String>> = theirs.iter().map(|l| fields(l)).collect();
    for o in &ours {
        // iperf 2 prints the data sender's address first on both ends, so the same stream
        // has the same four address fields on both sides.
        let t = theirs
            .iter()
            .find(|t| t[1..5] == o[1..5])
            .unwrap_or_else(|| panic!("no peer line for {o:?} in {theirs:?}"));
        assert_eq!(bytes(o), bytes(t), "bytes differ: ours {o:?} theirs {t:?}");
        assert!(bytes(o) > 0);
    }
}

/// TCP: the iperf 2 client against our server.
fn tcp_theirs_to_ours(client_args: &[&str], want_legs: usize) {
    let s = server(true, &["-y", "C"]);
    let mut args = vec!["-y", "C"];
    args.extend_from_slice(client_args);
    let out = client(false, s.port, &args);
    let theirs = csv_finals(&String::from_utf8_lossy(&out.stdout));
    assert_eq!(
        theirs.len(),
        want_legs,
        "their legs: {theirs:?}\nclient stderr: {}\nour server's output:\n{}",
        String::from_utf8_lossy(&out.stderr),
        s.text()
    );
    let ours =
        s.wait_lines(want_legs, |l| fields(l).len() >= 9 && fields(l)[6].starts_with("0.0-") && !l.contains(",-1,"));
    let ours: Vec<Vec<String>> = ours.iter().map(|l| fields(l)).collect();
    for t in &theirs {
        let o =
            ours.iter().find(|o| o[1..5] == t[1..5]).unwrap_or_else(|| panic!("no peer line for {t:?} in {ours:?}"));
        assert_eq!(bytes(o), bytes(t), "bytes differ: ours {o:?} theirs {t:?}");
    }
}

#[test]
fn iperf2_tcp_client_to_iperf2_server() {
    tcp_ours_to_theirs(&[], 1);
}

#[test]
fn iperf2_tcp_iperf2_client_to_our_server() {
    tcp_theirs_to_ours(&[], 1);
}

#[test]
fn iperf2_parallel_two_both_ways() {
    tcp_ours_to_theirs(&["-P", "2"], 2);
    tcp_theirs_to_ours(&["-P", "2"], 2);
}

#[test]
fn iperf2_tradeoff_both_ways() {
    let l = free_port().to_string();
    tcp_ours_to_theirs(&["-r", "-L", &l], 2);
    let l = free_port().to_string();
    tcp_theirs_to_ours(&["-r", "-L", &l], 2);
}

#[test]
fn iperf2_dualtest_both_ways() {
    let l = free_port().to_string();
    tcp_ours_to_theirs(&["-d", "-L", &l], 2);
    let l = free_port().to_string();
    tcp_theirs_to_ours(&["-d", "-L", &l], 2);
}

#[test]
fn iperf2_full_duplex_both_ways() {
    // One socket, both directions: two legs with the same ports; compare the sum of each side.
    for ours_client in [true, false] {
        let s = server(!ours_client, &["-y", "C"]);
        let out = client(ours_client, s.port, &["-y", "C", "--full-duplex"]);
        let c: u64 = csv_finals(&String::from_utf8_lossy(&out.stdout)).iter().map(|f| bytes(f)).sum();
        let lines =
            s.wait_lines(2, |l| fields(l).len() >= 9 && fields(l)[6].starts_with("0.0-") && !l.contains(",-1,"));
        let sv: u64 = lines.iter().map(|l| bytes(&fields(l))).sum();
        assert!(c > 0);
        assert_eq!(c, sv, "full duplex totals differ (our client: {ours_client})");
    }
}

#[test]
fn iperf2_reverse_both_ways() {
    tcp_ours_to_theirs(&["-R"], 1);
    tcp_theirs_to_ours(&["-R"], 1);
}

/// `[  1] 0.0000-1.0000 sec  12.5 MBytes   105 Mbits/sec   0.002 ms 0/8919 (0%)` → (jitter, lost, total).
fn jitter_loss(line: &str) -> (f64, i64, i64) {
    let (_, tail) = line.split_once("/sec").expect("rate");
    let mut w = tail.split_whitespace();
    let jitter: f64 = w.next().and_then(|x| x.parse().ok()).expect("jitter");
    w.next();
    let lt = w.next().expect("lost/total");
    let (l, t) = lt.split_once('/').expect("slash");
    (jitter, l.parse().expect("lost"), t.parse().expect("total"))
}

#[test]
fn iperf2_udp_100m_our_client_to_iperf2_server() {
    let s = server(false, &["-u"]);
    let out = client(true, s.port, &["-u", "-b", "100M"]);
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let report = text.lines().skip_while(|l| !l.contains("Server Report:")).nth(2).expect("server report line");
    let theirs = s.wait_lines(1, |l| l.contains(" ms ") && l.contains('/'));
    let theirs = theirs.first().expect("iperf 2 server line");
    let (oj, ol, ot) = jitter_loss(report);
    let (tj, tl, tt) = jitter_loss(theirs);
    assert_eq!((ol, ot), (tl, tt), "loss: our view {report} vs server {theirs}");
    assert!((oj - tj).abs() < 0.0015, "jitter: {oj} vs {tj}");
    assert!(ot > 8000, "100M for 1 s is ~8900 datagrams of 1470 bytes, got {ot}");
}

#[test]
fn iperf2_udp_100m_iperf2_client_to_our_server() {
    let s = server(true, &["-u"]);
    let out = client(false, s.port, &["-u", "-b", "100M"]);
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let report =
        text.lines().skip_while(|l| !l.contains("Server Report:")).nth(2).expect("server report at the iperf 2 client");
    let ours = s.wait_lines(1, |l| l.contains(" ms ") && l.contains('/'));
    let ours = ours.first().expect("our server line");
    let (oj, ol, ot) = jitter_loss(ours);
    let (tj, tl, tt) = jitter_loss(report);
    assert_eq!((ol, ot), (tl, tt), "loss: our server {ours} vs iperf 2 client's report {report}");
    assert!((oj - tj).abs() < 0.0015, "jitter: {oj} vs {tj}");
    assert!(ot > 8000);
}

#[test]
fn iperf2_enhanced_both_ways() {
    let s = server(false, &["-e"]);
    let out = client(true, s.port, &["-e"]);
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(text.contains("Write/Err  Rtry     Cwnd/RTT(var)        NetPwr"), "{text}");
    assert!(s.wait_lines(1, |l| l.contains("(peer 2.1.8)")).len() == 1, "iperf 2 saw our version: {}", s.text());

    let s = server(true, &["-e"]);
    let out = client(false, s.port, &["-e"]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("Write/Err"));
    let lines = s.wait_lines(1, |l| l.contains("Reads=Dist") || l.contains("sec") && l.matches(':').count() >= 7);
    assert!(!lines.is_empty(), "{}", s.text());
    assert!(s.text().contains("(peer 2.1.8)"), "{}", s.text());
}

/// Our `-J` document of a full-duplex test against iperf 2.1.8, read as a `TestOutcome`: the
/// two sums are opposite directions, each counted by this host, and neither direction has a
/// receiver's count from the peer (iperf 2 exchanges none for TCP).
#[test]
fn iperf2_json_outcome_has_each_direction_as_this_host_counted_it() {
    use wireperf_protocol::outcome::{Counter, Direction, Peer, Side, TestOutcome};
    let s = server(false, &[]);
    let out = client(true, s.port, &["-J", "--full-duplex"]);
    let text = String::from_utf8_lossy(&out.stdout);
    let report = wireperf_protocol::schema::TestReport::from_json_str(&text).expect("our -J document");
    let o = TestOutcome::from_report(&report);
    assert_eq!((o.peer, o.written_by, o.direction), (Peer::Iperf2, Side::Client, Direction::Bidir));
    let up = o.flow(Direction::Upload).expect("upload");
    let down = o.flow(Direction::Download).expect("download");
    let sent = up.sent.expect("the upload's sender count");
    assert_eq!((sent.counted_by, sent.measured_by, up.received), (Counter::Sender, Side::Client, None));
    let got = down.received.expect("the download's receiver count");
    assert_eq!((got.counted_by, got.measured_by, down.sent), (Counter::Receiver, Side::Client, None));
    assert!(sent.bytes > 0 && got.bytes > 0, "{o:?}");
}

/// UDP against iperf 2.1.8: the loss and the receiver's count come from the server's report
/// (measured by the server), not from the document's `sum`, a copy of this host's sent count.
#[test]
fn iperf2_udp_json_outcome_takes_loss_from_the_server_report() {
    use wireperf_protocol::outcome::{Counter, Direction, Side, TestOutcome};
    let s = server(false, &["-u"]);
    let out = client(true, s.port, &["-J", "-u", "-b", "10M"]);
    let text = String::from_utf8_lossy(&out.stdout);
    let report = wireperf_protocol::schema::TestReport::from_json_str(&text).expect("our -J document");
    let o = TestOutcome::from_report(&report);
    let up = o.flow(Direction::Upload).expect("upload");
    let udp = up.udp.expect("loss from the server report");
    assert_eq!(udp.measured_by, Side::Server);
    assert!(udp.packets.is_some_and(|p| p > 500), "10M for 1 s is ~850 datagrams: {udp:?}");
    let (sent, got) = (up.sent.expect("our count"), up.received.expect("the server's count"));
    assert_eq!((got.counted_by, got.measured_by), (Counter::Receiver, Side::Server));
    // iperf 2's server also counts the closing datagram, which our sent total leaves out.
    let datagram = 1470;
    assert!(
        got.bytes > 0 && got.bytes.abs_diff(sent.bytes) <= 2 * datagram,
        "received {} of {}",
        got.bytes,
        sent.bytes
    );
}
