//! Helpers for running wireperf and stock iperf3 side by side on loopback.

use serde_json::Value;
use std::collections::BTreeMap;
use std::io::Read;
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The wireperf binary under test.
pub fn wireperf() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_wireperf"))
}

/// Debian's iperf3; the suite's setup installs it. A missing binary is a test failure with a
/// clear message, not a silent skip.
pub fn iperf3() -> PathBuf {
    for p in ["/usr/bin/iperf3", "/usr/local/bin/iperf3"] {
        if std::path::Path::new(p).exists() {
            return PathBuf::from(p);
        }
    }
    panic!("iperf3 is not installed: run the test command from the README (it installs Debian's iperf3)");
}

/// A newer stock iperf3 ("3.18" from Debian trixie, "3.22" from sid), unpacked with its own
/// loader by `scripts/stock-iperf3` (the README's test command runs it). Missing → a test
/// failure that says how to install it, never a skip.
pub fn stock_iperf3(version: &str) -> PathBuf {
    let cache =
        std::env::var_os("WIREPERF_PEERS").map_or_else(|| PathBuf::from("/var/cache/wireperf-peers"), PathBuf::from);
    let p = cache.join(format!("iperf3-{version}")).join("iperf3");
    assert!(
        p.exists(),
        "stock iperf3 {version} is not installed at {}: run scripts/stock-iperf3 (the README's test command does)",
        p.display()
    );
    p
}

/// The history database every wireperf child of these tests uses, so that client runs are
/// saved under the target directory and never into the developer's real home.
pub const TEST_DB: &str = concat!(env!("CARGO_TARGET_TMPDIR"), "/cli-tests-history.sqlite");

/// Ports handed out to tests: below Linux's default ephemeral range (32768–60999).
const TEST_PORTS: std::ops::Range<u16> = 20000..32768;

/// A port that was free a moment ago, for TCP and UDP on 127.0.0.1.
///
/// Not `bind(:0)`: that returns a port from the ephemeral range, which every outgoing
/// connection of the tests running in parallel also draws from, so the port could be taken as
/// some client's local port before the test's server (or iperf 2's `-L` listener) binds it.
/// Tests run in separate processes, so the start is spread by process id and clock.
pub fn free_port() -> u16 {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
    let span = u32::from(TEST_PORTS.end - TEST_PORTS.start);
    let start = (std::process::id().wrapping_mul(7919) ^ nanos) % span;
    for i in 0..span {
        let port = TEST_PORTS.start + ((start + i * 97) % span) as u16;
        let tcp = TcpListener::bind(("127.0.0.1", port));
        let udp = std::net::UdpSocket::bind(("127.0.0.1", port));
        if tcp.is_ok() && udp.is_ok() {
            return port;
        }
    }
    panic!("no free port in {TEST_PORTS:?}");
}

/// A server process killed when dropped; its output is collected in the background so it
/// never blocks on a full pipe.
pub struct ServerProc {
    pub child: Child,
    pub port: u16,
    stdout: Arc<Mutex<Vec<u8>>>,
    stderr: Arc<Mutex<Vec<u8>>>,
}

impl Drop for ServerProc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Waits until the [`collect`] threads of `bufs` have read to the end of their pipes (each
/// drops its handle at EOF), so a process's last lines are in the buffers once it has exited;
/// a fixed pause after the exit was a race under load. EOF follows the exit unless a
/// grandchild holds the pipe, hence the bound (2 s, far past the microseconds EOF takes).
pub fn await_eof(bufs: &[&Arc<Mutex<Vec<u8>>>]) {
    let end = Instant::now() + Duration::from_secs(2);
    while bufs.iter().any(|b| Arc::strong_count(b) > 1) && Instant::now() < end {
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Collects a child's pipe on a background thread, so the child never blocks on a full pipe.
pub fn collect(r: Option<impl Read + Send + 'static>) -> Arc<Mutex<Vec<u8>>> {
    let buf = Arc::new(Mutex::new(Vec::new()));
    if let Some(mut r) = r {
        let b = Arc::clone(&buf);
        std::thread::spawn(move || {
            let mut chunk = [0u8; 8192];
            while let Ok(n) = r.read(&mut chunk) {
                if n == 0 {
                    break;
                }
                b.lock().unwrap().extend_from_slice(&chunk[..n]);
            }
        });
    }
    buf
}

impl ServerProc {
    /// Stdout so far.
    pub fn stdout_text(&self) -> String {
        String::from_utf8_lossy(&self.stdout.lock().unwrap()).into_owned()
    }

    /// Stderr so far.
    pub fn stderr_text(&self) -> String {
        String::from_utf8_lossy(&self.stderr.lock().unwrap()).into_owned()
    }

    /// Stderr once `done` holds for it, or as it is after `limit`: a server writes its log
    /// record of a test after the client has seen the test end, so a test that reads the log
    /// awaits the record it needs rather than sleeping a fixed time.
    pub fn await_stderr(&self, limit: Duration, done: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + limit;
        loop {
            let text = self.stderr_text();
            if done(&text) || Instant::now() >= deadline {
                return text;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Waits for the process to exit (for `-1` servers), killing it after `limit`.
    pub fn finish(mut self, limit: Duration) -> (Option<i32>, String, String) {
        let deadline = Instant::now() + limit;
        let code = loop {
            match self.child.try_wait() {
                Ok(Some(st)) => break st.code(),
                _ if Instant::now() >= deadline => {
                    let _ = self.child.kill();
                    break None;
                }
                _ => std::thread::sleep(Duration::from_millis(20)),
            }
        };
        await_eof(&[&self.stdout, &self.stderr]);
        (code, self.stdout_text(), self.stderr_text())
    }
}

/// Starts a server binary with `args` on a fresh port, returning once it listens. Readiness
/// is read from /proc, not by connecting: a probe connection would be a client without a
/// cookie to the server under test.
pub fn start_server(bin: &PathBuf, args: &[&str]) -> ServerProc {
    let port = free_port();
    let mut child = Command::new(bin)
        .env("WIREPERF_DB", TEST_DB)
        .arg("-s")
        .arg("-p")
        .arg(port.to_string())
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn server");
    let stdout = collect(child.stdout.take());
    let stderr = collect(child.stderr.take());
    let s = ServerProc { child, port, stdout, stderr };
    wait_for_port_without_connecting(port);
    s
}

/// Polls /proc/net/tcp{,6} for a listener on the port, without connecting to it.
pub fn wait_for_port_without_connecting(port: u16) {
    let hex = format!(":{port:04X}");
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        for f in ["/proc/net/tcp", "/proc/net/tcp6"] {
            let text = std::fs::read_to_string(f).unwrap_or_default();
            // Column 2 is local_address, column 4 the state (0A = LISTEN).
            if text.lines().any(|l| {
                let cols: Vec<&str> = l.split_whitespace().collect();
                cols.len() > 3 && cols[1].ends_with(&hex) && cols[3] == "0A"
            }) {
                return;
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    panic!("nothing listening on port {port}");
}

/// Runs a client to completion with a time limit. Its pipes are read while it runs: a `-J`
/// document of `-P 128` is larger than a pipe holds, and a client blocked writing it never
/// exits.
pub fn run_client(bin: &PathBuf, args: &[&str]) -> Output {
    run_client_env(bin, args, &[])
}

/// [`run_client`] with extra environment settings.
pub fn run_client_env(bin: &PathBuf, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut child = Command::new(bin)
        .env("WIREPERF_DB", TEST_DB)
        .envs(env.iter().copied())
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn client");
    let (stdout, stderr) = (collect(child.stdout.take()), collect(child.stderr.take()));
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Ok(Some(st)) = child.try_wait() {
            break st;
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            break child.wait().expect("client status");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    await_eof(&[&stdout, &stderr]);
    let take = |b: Arc<Mutex<Vec<u8>>>| std::mem::take(&mut *b.lock().unwrap());
    Output { status, stdout: take(stdout), stderr: take(stderr) }
}

/// Starts a stock iperf3 client against 127.0.0.1:`port` in the background (output piped;
/// it is small, so an unread pipe never blocks it).
pub fn spawn_iperf3(port: u16, args: &[&str]) -> std::process::Child {
    let p = port.to_string();
    Command::new(iperf3())
        .args(["-c", "127.0.0.1", "-p", &p])
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("iperf3")
}

/// Runs `client -c 127.0.0.1 -p PORT -J args…` against a fresh one-shot `server`; asserts the
/// client succeeded and returns its JSON.
pub fn one_shot_json(server: &PathBuf, client: &PathBuf, args: &[&str]) -> Value {
    let srv = start_server(server, &["-1"]);
    let port = srv.port.to_string();
    let mut all = vec!["-c", "127.0.0.1", "-p", &port, "-J"];
    all.extend_from_slice(args);
    let out = run_client(client, &all);
    assert_ok(&out);
    json_of(&out)
}

/// The first stream's wireperf I/O extras (`end.streams[0].wireperf_io`).
pub fn io_of(doc: &Value) -> &Value {
    doc.pointer("/end/streams/0/wireperf_io").unwrap_or_else(|| panic!("no wireperf_io in {}", doc["end"]))
}

/// Parses stdout as JSON, with the process output in the panic message on failure.
pub fn json_of(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}); status {:?}\nstdout:\n{}\nstderr:\n{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// Asserts a zero exit status, showing the output otherwise.
pub fn assert_ok(out: &Output) {
    assert!(
        out.status.success(),
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The shape of a JSON document: path → type name; array elements merge under `[]`.
pub fn key_tree(v: &Value) -> BTreeMap<String, &'static str> {
    let mut out = BTreeMap::new();
    walk(v, String::new(), &mut out);
    out
}

fn walk(v: &Value, path: String, out: &mut BTreeMap<String, &'static str>) {
    let ty = match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(a) => {
            for e in a {
                walk(e, format!("{path}[]"), out);
            }
            "array"
        }
        Value::Object(m) => {
            for (k, e) in m {
                walk(e, format!("{path}.{k}"), out);
            }
            "object"
        }
    };
    out.insert(path, ty);
}

/// Every key iperf3 printed must be in ours with the same type. Paths that legitimately
/// differ in content (server_output_json of a different server) can be excluded by prefix.
pub fn assert_superset(reference: &Value, ours: &Value, skip_prefixes: &[&str]) {
    let theirs = key_tree(reference);
    let mine = key_tree(ours);
    let mut missing = Vec::new();
    for (path, ty) in &theirs {
        if skip_prefixes.iter().any(|p| path.starts_with(p)) {
            continue;
        }
        match mine.get(path) {
            Some(t) if t == ty => {}
            Some(t) => missing.push(format!("{path}: iperf3 {ty}, wireperf {t}")),
            None => missing.push(format!("{path}: missing ({ty})")),
        }
    }
    assert!(missing.is_empty(), "JSON key tree differs from iperf3's:\n{}", missing.join("\n"));
}

/// Integer at a JSON pointer.
pub fn u(v: &Value, ptr: &str) -> u64 {
    v.pointer(ptr).and_then(Value::as_u64).unwrap_or_else(|| panic!("no integer at {ptr} in {v}"))
}
