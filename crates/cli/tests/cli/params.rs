//! Command-line handling: iperf3's parameter errors, version, help, unsupported flags.

use crate::support::harness::*;

fn stderr_of(args: &[&str]) -> (i32, String) {
    let out = run_client(&wireperf(), args);
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn no_role_is_a_parameter_error() {
    let (code, err) = stderr_of(&[]);
    assert_eq!(code, 1);
    assert!(err.contains("parameter error - must either be a client (-c) or server (-s)"), "{err}");
}

#[test]
fn bad_values_get_iperf3_messages() {
    for (args, msg) in [
        (vec!["-c", "h", "-P", "500"], "invalid number of parallel streams (min = 1, max = 128)"),
        (vec!["-c", "h", "-f", "q"], "bad format specifier"),
        (vec!["-c", "h", "-R", "--bidir"], "cannot be both reverse and bidirectional"),
        (vec!["-c", "h", "-n", "1Q"], "invalid unit value or suffix"),
        (vec!["-s", "-c", "h"], "cannot be both server and client"),
        (vec!["-c", "h", "-l", "2M"], "block size too large"),
    ] {
        let (code, err) = stderr_of(&args);
        assert_eq!(code, 1, "{args:?}");
        assert!(err.contains(msg), "{args:?}: {err}");
    }
}

#[test]
fn unsupported_flags_say_so() {
    for args in [vec!["-c", "h", "--sctp"], vec!["-c", "h", "-X", "a"], vec!["-c", "h", "--nstreams", "2"]] {
        let (code, err) = stderr_of(&args);
        assert_eq!(code, 1);
        assert!(err.contains("SCTP (--sctp, -X, --nstreams) is not supported by wireperf"), "{args:?}: {err}");
    }
}

/// What a program says after "parameter error - ", or `None` when the line parsed (the run then
/// fails later, connecting to a closed port).
fn parameter_error(bin: &std::path::Path, args: &[&str]) -> Option<String> {
    let out = std::process::Command::new(bin).args(args).env("WIREPERF_DB", TEST_DB).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    let line = err.lines().find_map(|l| l.split_once("parameter error - ").map(|(_, m)| m.to_string()))?;
    Some(line.trim_end_matches(": ").to_string())
}

/// iperf3 3.22's argument rules, run through the stock 3.22 binary and wireperf side by side:
/// the same lines are refused with the same message, and the same lines parse (numbers read
/// with C's `atoi` leniency where 3.22 reads them so: `-A 0/0`, `-P 2x`).
#[test]
fn argument_rules_are_3_22s() {
    let stock = stock_iperf3("3.22");
    let port = free_port().to_string();
    let file = concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml");
    let port = port.as_str();
    let c = |extra: &[&'static str]| [&["-c", "127.0.0.1", "-p", port, "-t", "1"], extra].concat();
    let s = |extra: &[&'static str]| [&["-s", "-p", port], extra].concat();
    let refused = [
        c(&["-P", "0"]),
        c(&["-P", "-2"]),
        c(&["-P", "129"]),
        c(&["-M", "32768"]),
        c(&["-M", "-1"]),
        c(&["-u", "-F", file]),
        c(&["--cntl-ka=10/5/3"]),
        c(&["-A", "x"]),
        c(&["-A", "0,2000"]),
        c(&["-L", "0"]),
        c(&["-L", "0x100000"]),
        c(&["-L", "x"]),
        s(&["-A", "1,1"]),
        s(&["--server-max-duration", "-1"]),
        s(&["--server-max-duration", "86401"]),
        s(&["--skip-rx-copy"]),
        s(&["--gsro"]),
        s(&["-t", "2"]),
        // Client-only flags a server once took silently (3.12 refuses them too).
        s(&["-u"]),
        s(&["-Z"]),
        s(&["--fq-rate", "1M"]),
        s(&["--pacing-timer", "1000"]),
        s(&["-L", "1"]),
        s(&["--dont-fragment"]),
        s(&["--udp-counters-64bit"]),
        s(&["--sctp"]),
        s(&["--nstreams", "2"]),
    ];
    for args in &refused {
        let theirs = parameter_error(&stock, args).unwrap_or_else(|| panic!("3.22 accepted {args:?}"));
        let ours = parameter_error(&wireperf(), args).unwrap_or_else(|| panic!("wireperf accepted {args:?}"));
        assert_eq!(ours, theirs, "{args:?}");
    }
    let accepted = [
        c(&["-A", "0/0"]),
        c(&["-A", "0,1"]),
        c(&["-L", "5x"]),
        c(&["-L", "0xfffff"]),
        c(&["-P", "2x"]),
        c(&["-M", "32767"]),
        c(&["--json-stream", "--json-stream-full"]),
        c(&["--json-stream-full-output"]),
        c(&["--cntl-ka=20/5/3"]),
        c(&["--gsro", "-u"]),
        c(&["-m"]),
        c(&["--skip-rx-copy", "-R"]),
        c(&["--bind-dev", "lo"]),
    ];
    for args in &accepted {
        assert_eq!(parameter_error(&stock, args), None, "3.22 refused {args:?}");
        assert_eq!(parameter_error(&wireperf(), args), None, "wireperf refused {args:?}");
    }
}

/// 3.22 sets the protocol as it reads `-u` (UDP) and `-m` (TCP over MPTCP): the later one
/// wins. The stock 3.22 client and wireperf, each with both orders, against a wireperf server;
/// the protocol the test ran is the client document's `test_start.protocol`.
#[test]
fn the_later_of_udp_and_mptcp_wins_as_in_3_22() {
    for (order, want) in [(["-u", "-m"], "TCP"), (["-m", "-u"], "UDP")] {
        for client in [stock_iperf3("3.22"), wireperf()] {
            let mut args = vec!["-n", "100K", "-b", "10M"];
            args.extend_from_slice(&order);
            if client == wireperf() {
                args.push("--no-save");
            }
            let v = one_shot_json(&wireperf(), &client, &args);
            assert_eq!(v["start"]["test_start"]["protocol"], want, "{client:?} {order:?}");
        }
    }
}

#[test]
fn version_and_help() {
    let out = run_client(&wireperf(), &["-v"]);
    assert_ok(&out);
    let version = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(version.starts_with("wireperf ") && version.contains("(iperf3 3.22 compatible)"), "{version}");
    let out = run_client(&wireperf(), &["--help"]);
    assert_ok(&out);
    let text = String::from_utf8_lossy(&out.stdout);
    for flag in [
        "--bidir",
        "--get-server-output",
        "--json-stream",
        "--json-stream-full-output",
        "--gsro",
        "--mptcp",
        "--skip-rx-copy",
        "--bind-dev",
        "--server-bitrate-limit",
        "--server-max-duration",
        "selftest",
        "doctor",
    ] {
        assert!(text.contains(flag), "--help lacks {flag}");
    }
}

#[test]
fn connection_refused_is_a_clear_error() {
    let port = free_port().to_string();
    let (code, err) = stderr_of(&["-c", "127.0.0.1", "-p", &port, "-t", "1"]);
    assert_eq!(code, 1);
    assert!(err.contains("unable to connect to server") && err.contains("refused"), "{err}");
}

#[test]
fn selftest_runs_the_suite_and_the_doctor() {
    let out = run_client(&wireperf(), &["selftest", "-t", "1", "--json"]);
    assert_ok(&out);
    let v = json_of(&out);
    let st = &v["selftest"];
    assert_eq!(st["passed"], true);
    let phases = st["suite"]["phases"].as_array().expect("phases");
    assert_eq!(phases.len(), 3);
    for p in phases {
        assert!(p["error"].is_null(), "{p}");
    }
    assert!(phases[0]["upload_bps"].as_f64().unwrap_or(0.0) > 0.0);
    assert!(phases[1]["download_bps"].as_f64().unwrap_or(0.0) > 0.0);
    assert!(phases[2]["upload_bps"].as_f64().unwrap_or(0.0) > 0.0);
    assert!(phases[2]["download_bps"].as_f64().unwrap_or(0.0) > 0.0);
    // Loopback has no ceiling: the verdicts say so instead of inventing one.
    let verdicts = st["suite"]["verdicts"].as_array().expect("verdicts");
    assert!(!verdicts.is_empty(), "the selftest gives a verdict per phase: {}", st["suite"]);
    assert!(
        verdicts.iter().all(|v| v["grade"] == "unknown" && v["text"].as_str().is_some_and(|t| !t.is_empty())),
        "{verdicts:?}"
    );
    assert!(st["doctor"]["interfaces"].is_array(), "{}", st["doctor_error"]);
}
