//! Completions and man pages generated from the argument definitions: the bash script parses
//! and completes in a real bash, and every man page renders through man's own pipeline
//! (`preconv | groff -ww`) without a single warning.

use crate::support::harness::wireperf;
use std::process::Command;

fn completions(shell: &str) -> String {
    let out = Command::new(wireperf()).args(["completions", shell]).output().expect("run wireperf");
    assert!(out.status.success(), "completions {shell}: {}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).expect("utf-8 script");
    assert!(text.contains("bidir") && text.contains("suite"), "{shell} script lacks flags/subcommands");
    text
}

#[test]
fn bash_completion_parses_and_completes_flags_and_subcommands() {
    let dir = tempfile::tempdir().expect("tmp");
    let script = dir.path().join("wireperf.bash");
    std::fs::write(&script, completions("bash")).expect("write");
    let syntax = Command::new("bash").arg("-n").arg(&script).output().expect("bash");
    assert!(syntax.status.success(), "bash -n: {}", String::from_utf8_lossy(&syntax.stderr));
    // A completion query as bash's readline would make it: `wireperf --bi<TAB>` and `wireperf su<TAB>`.
    let query = |words: &str, cword: usize| {
        let prog = format!(
            "source {}; COMP_WORDS=({words}); COMP_CWORD={cword}; COMP_LINE=\"{words}\"; COMP_POINT=${{#COMP_LINE}}; \
             _wireperf wireperf \"${{COMP_WORDS[$COMP_CWORD]}}\" \"${{COMP_WORDS[$COMP_CWORD-1]}}\"; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
            script.display()
        );
        let out = Command::new("bash").arg("-c").arg(prog).output().expect("bash");
        assert!(out.status.success(), "query {words}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).lines().map(str::to_string).collect::<Vec<_>>()
    };
    let flags = query("wireperf --bi", 1);
    assert!(flags.iter().any(|w| w == "--bidir"), "wireperf --bi<TAB> offered {flags:?}");
    let subs = query("wireperf su", 1);
    assert!(subs.iter().any(|w| w == "suite"), "wireperf su<TAB> offered {subs:?}");
}

#[test]
fn zsh_and_fish_scripts_are_generated() {
    assert!(completions("zsh").starts_with("#compdef wireperf"));
    assert!(completions("fish").contains("complete -c wireperf"));
}

#[test]
fn man_pages_render_without_warnings() {
    let dir = tempfile::tempdir().expect("tmp");
    let out = Command::new(wireperf()).args(["man", "--out"]).arg(dir.path()).output().expect("run wireperf");
    assert!(out.status.success(), "man: {}", String::from_utf8_lossy(&out.stderr));
    let pages: Vec<String> = String::from_utf8_lossy(&out.stdout).lines().map(str::to_string).collect();
    for name in ["wireperf.1", "wireperf-suite.1", "wireperf-doctor.1", "wireperf-history.1", "wireperf-selftest.1"] {
        assert!(pages.iter().any(|p| p.ends_with(name)), "no {name} in {pages:?}");
    }
    for page in &pages {
        // man's own pipeline: preconv for UTF-8, then groff with every warning on.
        let sh = format!("preconv '{page}' | groff -ww -man -Tutf8 -z");
        let r = Command::new("sh").arg("-c").arg(&sh).env("LC_ALL", "C.UTF-8").output().expect("groff");
        assert!(r.status.success(), "{sh}: {}", String::from_utf8_lossy(&r.stderr));
        assert!(r.stderr.is_empty(), "{page} has groff warnings:\n{}", String::from_utf8_lossy(&r.stderr));
    }
    let top = dir.path().join("wireperf.1");
    let r =
        Command::new("man").arg("-l").arg(&top).env("MANPAGER", "cat").env("LC_ALL", "C.UTF-8").output().expect("man");
    let text = String::from_utf8_lossy(&r.stdout);
    assert!(r.status.success() && text.contains("SYNOPSIS") && text.contains("--bidir"), "man -l: {text}");
}
