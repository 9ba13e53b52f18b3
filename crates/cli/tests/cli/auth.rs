//! iperf3 authentication both ways with stock iperf3 3.12 (PKCS#1 v1.5 tokens), 3.18 and 3.22
//! (OAEP by default, PKCS#1 v1.5 only with the server's `--use-pkcs1-padding`), and every
//! refusal: wrong password, unknown user, stale timestamp, replayed token, the wrong padding.

use crate::abuse::{Raw, params};
use crate::support::harness::*;
use crate::support::peers::{Peer, per_peer};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{SystemTime, UNIX_EPOCH};
use wireperf_protocol::auth::{Padding, make_token, password_hash, public_key_from_pem};

struct Setup {
    _dir: tempfile::TempDir,
    private: PathBuf,
    public: PathBuf,
    users: PathBuf,
}

fn openssl(args: &[&str]) {
    let out = Command::new("openssl")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("the openssl CLI is needed for the auth tests (Debian package openssl)");
    assert!(out.status.success(), "openssl {args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

/// A key pair made with the exact commands of docs/server.md, and a users file for mario/rossi.
fn setup() -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let private = dir.path().join("private.pem");
    let public = dir.path().join("public.pem");
    let users = dir.path().join("users.csv");
    openssl(&["genrsa", "-out", private.to_str().unwrap(), "2048"]);
    openssl(&["rsa", "-in", private.to_str().unwrap(), "-outform", "PEM", "-pubout", "-out", public.to_str().unwrap()]);
    std::fs::write(&users, format!("# user,sha256(\"{{user}}password\")\nmario,{}\n", password_hash("mario", "rossi")))
        .unwrap();
    Setup { _dir: dir, private, public, users }
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn client(bin: &Path, port: u16, user: &str, pw: &str, key: &Path, extra: &[&str]) -> Output {
    let mut child = Command::new(bin)
        .env("IPERF3_PASSWORD", pw)
        .env("WIREPERF_DB", TEST_DB)
        .args(["-c", "127.0.0.1", "-p", &port.to_string(), "-t", "1", "--username", user])
        .args(["--rsa-public-key-path", s(key)])
        .args(extra)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("client");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while child.try_wait().ok().flatten().is_none() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let _ = child.kill();
    child.wait_with_output().unwrap()
}

fn server_args(k: &Setup) -> Vec<String> {
    vec!["--rsa-private-key-path".into(), s(&k.private).into(), "--authorized-users-path".into(), s(&k.users).into()]
}

fn now() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs() as i64
}

/// A stock client (3.12: PKCS#1 v1.5 tokens; 3.17+: OAEP) against a wireperf server, which
/// takes both paddings.
fn stock_client_authenticates_to_wireperf_and_refusals_are_clear(peer: &Peer) {
    let k = setup();
    // The clients run back to back, and a client exits as soon as it has the results, while
    // the server may still be closing that test: a server without a queue then answers the
    // next client "busy" (a stock one too), which on a loaded machine failed this test. The
    // queue holds the next client until the slot is free; authentication is what is tested.
    let mut args = server_args(&k);
    args.extend(["--queue".to_string(), "10".to_string()]);
    let server = start_server(&wireperf(), &args.iter().map(String::as_str).collect::<Vec<_>>());
    let ok = client(&peer.bin, server.port, "mario", "rossi", &k.public, &[]);
    assert_ok(&ok);
    // wireperf's own client: OAEP by default, PKCS#1 v1.5 on request.
    assert_ok(&client(&wireperf(), server.port, "mario", "rossi", &k.public, &[]));
    assert_ok(&client(&wireperf(), server.port, "mario", "rossi", &k.public, &["--use-pkcs1-padding"]));
    // Wrong password and unknown user: the stock client prints iperf3's message.
    for (user, pw) in [("mario", "wrong"), ("luigi", "rossi")] {
        let out = client(&peer.bin, server.port, user, pw, &k.public, &[]);
        assert!(!out.status.success());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("test authorization failed"), "{user}: {err}");
    }
    // No token at all.
    let out = run_client(&peer.bin, &["-c", "127.0.0.1", "-p", &server.port.to_string(), "-t", "1"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("test authorization failed"));

    let public = public_key_from_pem(&std::fs::read_to_string(&k.public).unwrap()).unwrap();
    // A stale timestamp (one hour old).
    let stale = make_token(&public, "mario", "rossi", now() - 3600, Padding::Pkcs1v15).unwrap();
    let mut r = Raw::connect(server.port, 1);
    r.greet();
    let mut p = params(1, 1);
    p["authtoken"] = stale.into();
    r.send_json(&p);
    assert_eq!(r.server_error(), 142, "IEAUTHTEST");
    // A replayed token: accepted once (CREATE_STREAMS), refused the second time.
    let token = make_token(&public, "mario", "rossi", now(), Padding::Oaep).unwrap();
    let mut p = params(1, 1);
    p["authtoken"] = token.into();
    let mut r = Raw::connect(server.port, 2);
    r.greet();
    r.send_json(&p);
    assert_eq!(r.byte(), 10, "the first use is accepted");
    drop(r);
    let mut r = Raw::connect(server.port, 3);
    r.greet();
    r.send_json(&p);
    assert_eq!(r.server_error(), 142, "the replay is refused");
    // And the server still serves an honest client.
    assert_ok(&client(&peer.bin, server.port, "mario", "rossi", &k.public, &[]));
    // A record is written after its client has seen the test end: await the four honest
    // tests' `finished` and the five refusals rather than sleeping.
    let log = server.await_stderr(std::time::Duration::from_secs(10), |l| {
        l.matches("wireperf: finished").count() >= 4 && l.matches("i_errno=142").count() >= 5
    });
    for why in [
        "wrong password for user 'mario'",
        "unknown user 'luigi'",
        "no authentication token",
        "outside the allowed skew",
        "replayed token for user 'mario'",
    ] {
        assert!(log.contains(why), "no log line with '{why}':\n{log}");
    }
    let refusals = log.lines().filter(|l| l.starts_with("wireperf: failed") && l.contains("i_errno=142")).count();
    assert_eq!(refusals, 5, "{log}");
}

/// The error line after "error - " (stock: "iperf3: error - …", wireperf: "wireperf: error - …").
fn error_of(out: &Output) -> String {
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    err.lines().find_map(|l| l.split_once("error - ").map(|(_, m)| m.to_string())).unwrap_or(err)
}

fn refused(out: &Output, what: &str, stock_says: &str) {
    assert!(!out.status.success(), "{what}: accepted");
    assert_eq!(error_of(out), stock_says, "{what}: {out:?}");
}

/// wireperf's client against a stock server. 3.12 decrypts PKCS#1 v1.5 only; 3.17+ decrypt
/// OAEP, or PKCS#1 v1.5 instead when the server runs with `--use-pkcs1-padding`. A token of
/// the other padding is refused with what the stock client itself says for a refusal, and the
/// server still serves the next client.
fn wireperf_client_authenticates_to_stock_server(peer: &Peer) {
    let k = setup();
    let oaep = peer.version != "3.12";
    let mut configs = vec![(server_args(&k), oaep)];
    if oaep {
        let mut pkcs1 = server_args(&k);
        pkcs1.push("--use-pkcs1-padding".into());
        configs.push((pkcs1, false));
    }
    for (args, server_oaep) in configs {
        let server = start_server(&peer.bin, &args.iter().map(String::as_str).collect::<Vec<_>>());
        let (right, wrong): (&[&str], &[&str]) =
            if server_oaep { (&[], &["--use-pkcs1-padding"]) } else { (&["--use-pkcs1-padding"], &[]) };
        let out = client(&wireperf(), server.port, "mario", "rossi", &k.public, &[right, &["-J"]].concat());
        assert_ok(&out);
        assert!(u(&json_of(&out), "/end/sum_received/bytes") > 0);
        // The stock client's own words for a refusal: 3.12 and 3.18 servers send "test
        // authorization failed", 3.22 closes the control connection.
        let stock = client(&peer.bin, server.port, "mario", "nope", &k.public, &[]);
        assert!(!stock.status.success(), "the stock client was let in with a wrong password");
        let says = error_of(&stock);
        let expected =
            if peer.version == "3.22" { "control socket has closed unexpectedly" } else { "test authorization failed" };
        assert_eq!(says, expected);
        refused(&client(&wireperf(), server.port, "mario", "nope", &k.public, right), "wrong password", &says);
        refused(&client(&wireperf(), server.port, "mario", "rossi", &k.public, wrong), "the other padding", &says);
        // A server that refused a client still serves the next one.
        assert_ok(&client(&wireperf(), server.port, "mario", "rossi", &k.public, right));
    }
}

per_peer!(stock_client_authenticates_to_wireperf_and_refusals_are_clear, wireperf_client_authenticates_to_stock_server);

#[test]
fn client_without_password_and_without_terminal_gets_a_clear_error() {
    let k = setup();
    let out = Command::new(wireperf())
        .env_remove("IPERF3_PASSWORD")
        .args(["-c", "127.0.0.1", "-p", "9", "--username", "mario", "--rsa-public-key-path", s(&k.public)])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("set IPERF3_PASSWORD"), "{out:?}");
    // A user name without a key (or the reverse) is a parameter error, as in iperf3.
    let out = Command::new(wireperf()).args(["-c", "h", "--username", "u"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("path to a valid RSA public key"), "{out:?}");
}
