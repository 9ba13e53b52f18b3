//! Command-line handling: iperf3's parameter errors, version, help, unsupported flags.

use crate::harness::*;

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
    for args in [vec!["-c", "h", "--sctp"], vec!["-c", "h", "-m"], vec!["-c", "h", "-L", "1"]] {
        let (code, err) = stderr_of(&args);
        assert_eq!(code, 1);
        assert!(err.contains("not supported yet"), "{args:?}: {err}");
    }
}

#[test]
fn version_and_help() {
    let out = run_client(&wireperf(), &["-v"]);
    assert_ok(&out);
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("wireperf "));
    let out = run_client(&wireperf(), &["--help"]);
    assert_ok(&out);
    let text = String::from_utf8_lossy(&out.stdout);
    for flag in ["--bidir", "--get-server-output", "--json-stream", "--server-bitrate-limit", "selftest", "doctor"] {
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
