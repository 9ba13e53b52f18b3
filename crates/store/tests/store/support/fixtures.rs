//! Real iperf3 runs on loopback, and small helpers.

use std::io::Read;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::Value;
use wireperf_protocol::schema::TestReport;

/// Debian's iperf3; missing is a failure with a clear message, not a skip.
pub fn iperf3() -> PathBuf {
    let p = PathBuf::from("/usr/bin/iperf3");
    assert!(p.exists(), "iperf3 is not installed: apt-get install iperf3 (scripts/test does it)");
    p
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// Kills the server if a test fails before it exits.
struct Guard(Child);

impl Drop for Guard {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Waits for a TCP listener on `port` by reading /proc (a probe connection would be the
/// one-off server's only client).
fn wait_listening(port: u16) {
    let hex = format!(":{port:04X}");
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        for f in ["/proc/net/tcp", "/proc/net/tcp6"] {
            let text = std::fs::read_to_string(f).unwrap_or_default();
            if text.lines().any(|l| {
                let c: Vec<&str> = l.split_whitespace().collect();
                c.len() > 3 && c[1].ends_with(&hex) && c[3] == "0A"
            }) {
                return;
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    panic!("iperf3 server not listening on {port}");
}

/// Both sides' `-J` documents of one real iperf3 test.
pub struct Pair {
    /// The client's document.
    pub client: String,
    /// The server's document.
    pub server: String,
}

/// Runs `iperf3 -s -1 -J` and `iperf3 -c 127.0.0.1 -t 1 -J <extra>`; returns both documents.
pub fn iperf3_pair(extra: &[&str]) -> Pair {
    let port = free_port().to_string();
    let mut server = Command::new(iperf3())
        .args(["-s", "-1", "-J", "-p", &port])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut server_out = server.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = server_out.read_to_string(&mut s);
        s
    });
    let guard = Guard(server);
    wait_listening(port.parse().unwrap());
    let client =
        Command::new(iperf3()).args(["-c", "127.0.0.1", "-p", &port, "-t", "1", "-J"]).args(extra).output().unwrap();
    assert!(client.status.success(), "iperf3 client failed: {}", String::from_utf8_lossy(&client.stdout));
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut guard = guard;
    while guard.0.try_wait().unwrap().is_none() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    drop(guard);
    Pair { client: String::from_utf8(client.stdout).unwrap(), server: reader.join().unwrap() }
}

/// One real client-side TCP document, made once per test process.
pub fn tcp_client_report() -> (String, TestReport) {
    static DOC: OnceLock<String> = OnceLock::new();
    let text = DOC.get_or_init(|| iperf3_pair(&[]).client).clone();
    let r = serde_json::from_str(&text).unwrap();
    (text, r)
}

/// A fresh database path in a temp dir (the dir is returned to keep it alive).
pub fn temp_db() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("sub/dir/history.sqlite");
    (dir, p)
}

/// The number at a JSON pointer.
pub fn f(v: &Value, ptr: &str) -> f64 {
    v.pointer(ptr).and_then(Value::as_f64).unwrap_or_else(|| panic!("no number at {ptr}"))
}

/// The integer at a JSON pointer.
pub fn n(v: &Value, ptr: &str) -> u64 {
    v.pointer(ptr).and_then(Value::as_u64).unwrap_or_else(|| panic!("no integer at {ptr}"))
}

/// File bytes, for "left untouched" checks.
pub fn bytes_of(p: &Path) -> Vec<u8> {
    std::fs::read(p).unwrap()
}
