//! `--tui` on a real terminal: Debian's tmux runs the client in a detached session of a fixed
//! size; `capture-pane` reads the screen during and after the run.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::harness::{iperf3, json_of, run_client, start_server, wireperf};

const TMUX: &str = "/usr/bin/tmux";

/// A tmux server of its own (`-L`), killed when dropped, also when the test fails.
struct Tmux {
    socket: String,
}

impl Tmux {
    /// Starts `cmd` (a shell command line) in a detached 110×34 session. The pane's shell prints
    /// the exit status and stays, so the screen can be read after the client ends.
    fn start(cmd: &str) -> Self {
        assert!(Path::new(TMUX).exists(), "{TMUX} is missing: install Debian's tmux (scripts/test does)");
        let socket = format!("wireperf-tui-{}-{}", std::process::id(), crate::support::harness::free_port());
        let t = Tmux { socket };
        let line = format!("{cmd}; echo \"client exited $?\"; sleep 60");
        let st = t.tmux(&["new-session", "-d", "-s", "t", "-x", "110", "-y", "34", "sh", "-c", &line]);
        assert!(st.status.success(), "tmux new-session: {}", String::from_utf8_lossy(&st.stderr));
        t
    }

    fn tmux(&self, args: &[&str]) -> std::process::Output {
        Command::new(TMUX).arg("-L").arg(&self.socket).args(args).output().expect("run tmux")
    }

    fn capture(&self) -> String {
        String::from_utf8_lossy(&self.tmux(&["capture-pane", "-p", "-t", "t"]).stdout).into_owned()
    }

    fn send(&self, key: &str) {
        let st = self.tmux(&["send-keys", "-t", "t", key]);
        assert!(st.status.success(), "tmux send-keys: {}", String::from_utf8_lossy(&st.stderr));
    }

    /// Polls the screen until `ok` holds, at most `limit`; panics with the last screen.
    fn wait_for(&self, what: &str, limit: Duration, ok: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + limit;
        loop {
            let s = self.capture();
            if ok(&s) {
                return s;
            }
            assert!(Instant::now() < deadline, "no {what} within {limit:?}; screen:\n{s}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.tmux(&["kill-server"]);
    }
}

/// The shell command running the client with `--tui`, saving into `db`.
fn client_line(port: u16, secs: u32, db: &Path) -> String {
    format!("{} -c 127.0.0.1 -p {port} -t {secs} --tui --db {}", wireperf().display(), db.display())
}

/// The finished test's screen, which stays up for a few seconds after the last result.
fn finished_screen(s: &str) -> bool {
    s.contains("phase: done") && s.contains("back to the summary")
}

/// A figure on the screen: `prefix` followed by a number and `suffix`, e.g. `host 12.5 % busy`.
fn has_figure(screen: &str, prefix: &str, suffix: &str) -> bool {
    screen.match_indices(prefix).any(|(at, _)| {
        let rest = &screen[at + prefix.len()..];
        let num: String = rest.chars().take_while(|c| c.is_ascii_digit() || *c == '.').collect();
        !num.is_empty() && num.parse::<f64>().is_ok() && rest[num.len()..].starts_with(suffix)
    })
}

fn live_screen(s: &str) -> bool {
    s.contains("Throughput") && s.contains("phase: running") && s.contains("] send ") && s.contains("s left")
}

/// The one run in `db`, as `history show --json` has it.
fn saved_run(db: &Path) -> Value {
    let db = db.to_str().unwrap();
    let list = json_of(&run_client(&wireperf(), &["history", "list", "--json", "--db", db]));
    let runs = list.as_array().expect("history list is an array");
    assert_eq!(runs.len(), 1, "{list}");
    let id = runs[0]["id"].as_i64().expect("run id").to_string();
    json_of(&run_client(&wireperf(), &["history", "show", &id, "--json", "--db", db]))
}

/// The summary after the screen is back: iperf3's sender/receiver lines and `iperf Done.`, the
/// live view gone.
fn assert_restored_with_summary(after: &str) {
    assert!(after.contains("client exited 0"), "{after}");
    assert!(after.contains("iperf Done."), "summary missing:\n{after}");
    assert!(
        after.lines().any(|l| l.starts_with("[  ") && l.contains(" sec ") && l.trim_end().ends_with("sender")),
        "{after}"
    );
    assert!(
        after.lines().any(|l| l.starts_with("[  ") && l.contains(" sec ") && l.trim_end().ends_with("receiver")),
        "{after}"
    );
    assert!(!after.contains("Throughput") && !after.contains("phase:"), "the live view was left on screen:\n{after}");
}

#[test]
fn tui_shows_the_chart_live_and_prints_the_summary_after_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.sqlite");
    let server = start_server(&wireperf(), &["-1"]);
    let tmux = Tmux::start(&client_line(server.port, 3, &db));
    let live = tmux.wait_for("live view", Duration::from_secs(15), live_screen);
    assert!(live.contains("bits/sec"), "{live}");
    assert!(live.contains("Retr") && live.contains("RTT") && live.contains("Cwnd"), "{live}");
    // Both hosts: this one live (the process and the whole host), the far one with the results.
    assert!(has_figure(&live, "This host: wireperf ", " %, mean "), "{live}");
    assert!(has_figure(&live, "host ", " % busy"), "this host's CPU, live:\n{live}");
    assert!(live.contains("Far host:  with the results"), "{live}");
    // The DSACK counters are read on every Linux host: the split is always there.
    assert!(has_figure(&live, "Retransmits: ", " real, ") && live.contains(" spurious"), "{live}");
    // Braille dots are the chart's lines.
    assert!(live.chars().any(|c| ('\u{2801}'..='\u{28ff}').contains(&c)), "no chart line:\n{live}");
    let done = tmux.wait_for("finished screen", Duration::from_secs(20), finished_screen);
    assert!(has_figure(&done, "Far host:  wireperf ", " %"), "the wireperf server's CPU:\n{done}");
    assert_eq!(done.matches(" % busy").count(), 2, "both hosts' CPU:\n{done}");
    assert!(has_figure(&done, "iperf3 CPU: ", " % here, "), "{done}");
    assert!(has_figure(&done, "Retransmits: ", " real, "), "{done}");
    let after = tmux.wait_for("end of run", Duration::from_secs(20), |s| s.contains("client exited"));
    assert_restored_with_summary(&after);
    let run = saved_run(&db);
    let report = &run["phase_details"][0]["report"];
    assert!(report["end"]["sum_sent"]["bytes"].as_u64().unwrap() > 0, "{run}");
    assert!(report["end"]["sum_sent"]["seconds"].as_f64().unwrap() > 2.5, "a full 3 s run:\n{run}");
    assert!(report["error"].is_null(), "{run}");
}

#[test]
fn tui_q_ends_the_test_cleanly_with_results_printed_and_saved() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.sqlite");
    let server = start_server(&wireperf(), &["-1"]);
    let tmux = Tmux::start(&client_line(server.port, 30, &db));
    tmux.wait_for("live view", Duration::from_secs(15), live_screen);
    tmux.send("p");
    tmux.wait_for("paused chart", Duration::from_secs(5), |s| s.contains("Throughput (paused)"));
    tmux.send("q");
    let after = tmux.wait_for("end of run", Duration::from_secs(20), |s| s.contains("client exited"));
    assert_restored_with_summary(&after);
    let run = saved_run(&db);
    let end = &run["phase_details"][0]["report"]["end"];
    let secs = end["sum_sent"]["seconds"].as_f64().unwrap();
    assert!(secs > 0.5 && secs < 20.0, "q ended a 30 s test early, with its results: {secs} s\n{run}");
    assert!(end["sum_received"]["bytes"].as_u64().unwrap() > 0, "the server's figures came back:\n{run}");
}

#[test]
fn tui_against_a_stock_iperf3_server_says_the_far_side_was_not_seen() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.sqlite");
    let server = start_server(&iperf3(), &["-1"]);
    let tmux = Tmux::start(&client_line(server.port, 2, &db));
    let live = tmux.wait_for("live view", Duration::from_secs(15), live_screen);
    assert!(has_figure(&live, "host ", " % busy"), "this host is read whatever the server:\n{live}");
    let done = tmux.wait_for("finished screen", Duration::from_secs(20), finished_screen);
    assert!(done.contains("Far host:  far side not seen"), "{done}");
    assert_eq!(done.matches(" % busy").count(), 1, "only this host's CPU:\n{done}");
    // iperf3's own CPU figures come from any server.
    assert!(has_figure(&done, "iperf3 CPU: ", " % here, "), "{done}");
    let after = tmux.wait_for("end of run", Duration::from_secs(20), |s| s.contains("client exited"));
    assert_restored_with_summary(&after);
}

#[test]
fn tui_udp_receiver_shows_loss_and_jitter_live() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.sqlite");
    let server = start_server(&wireperf(), &["-1"]);
    let line = format!("{} -u -b 20M -R", client_line(server.port, 3, &db));
    let tmux = Tmux::start(&line);
    let live = tmux.wait_for("live UDP view", Duration::from_secs(15), |s| {
        s.contains("phase: running") && s.contains("] recv ") && s.contains("UDP loss: ")
    });
    assert!(live.contains("Streams (UDP)") && live.contains("s left"), "{live}");
    assert!(has_figure(&live, "jitter ", " ms"), "{live}");
    let done = tmux.wait_for("finished screen", Duration::from_secs(20), finished_screen);
    assert!(done.contains("UDP loss: ") && has_figure(&done, "jitter ", " ms"), "{done}");
    let after = tmux.wait_for("end of run", Duration::from_secs(20), |s| s.contains("client exited"));
    assert!(after.contains("client exited 0") && after.contains("iperf Done."), "{after}");
}

#[test]
fn tui_without_a_terminal_changes_nothing_but_a_note() {
    let server = start_server(&wireperf(), &["-1"]);
    let port = server.port.to_string();
    let out = run_client(&wireperf(), &["-c", "127.0.0.1", "-p", &port, "-t", "1", "--tui", "--no-save"]);
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("iperf Done.") && !text.contains('\u{1b}'), "{text}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim(), "wireperf: --tui ignored (stdout is not a terminal); plain output");
}
