//! Tests of [`crate::iperf::repeat`] through the whole lowering: the series flags on a
//! command line become the client run's series, or a refusal naming the flag. Kept apart from
//! `repeat.rs` because they call [`crate::iperf::lower`], which itself uses `repeat.rs`.

use crate::iperf::lower::lower;
use crate::iperf::run_spec::{ClientRun, Mode, ParamError};

fn lowered(cmd: &str) -> Result<Mode, ParamError> {
    let (cli, roles) = crate::cli::parse_from(cmd.split_whitespace()).expect("parses");
    lower(&cli.iperf, &roles).map(|(mode, _)| mode)
}

fn repeat(cmd: &str) -> Option<wireperf_suite::series::RepeatConfig> {
    match lowered(cmd) {
        Ok(Mode::Client(ClientRun { repeat, .. })) => repeat,
        other => panic!("{cmd}: {other:?}"),
    }
}

fn refused(cmd: &str) -> String {
    lowered(cmd).expect_err(cmd).to_string()
}

#[test]
fn no_series_flag_is_one_test_as_before() {
    assert_eq!(repeat("wireperf -c h"), None);
    assert_eq!(repeat("wireperf -c h --warmup 0"), None);
}

#[test]
fn the_flags_lower_into_the_series() {
    let r = repeat("wireperf -c h --repeat 5 --warmup 1").expect("a series");
    assert_eq!((r.rounds, r.warmup, r.level, r.width_pct), (5, 1, 95.0, None));
    // --confidence alone: the cap is 10, the level the target's.
    let r = repeat("wireperf -c h --confidence 99,2").expect("a series");
    assert_eq!((r.rounds, r.warmup, r.level, r.width_pct), (10, 0, 99.0, Some(2.0)));
    // -n ends a test too; -t 0 with it is not "no time limit".
    assert!(repeat("wireperf -c h --repeat 2 -n 1M").is_some());
}

#[test]
fn combinations_that_make_no_sense_are_refused_naming_the_flag() {
    assert!(refused("wireperf -c h --repeat 2 --warmup 2").starts_with("--warmup 2 leaves no test of 2"));
    assert!(refused("wireperf -c h --warmup 1").starts_with("--warmup 1 leaves no test of 1"));
    assert!(refused("wireperf -c h --repeat 3 --warmup 1 --confidence 95,5").contains("give --repeat 4 or more"));
    assert!(refused("wireperf -c h --repeat 2 --confidence 95,5").starts_with("--confidence needs 3"));
    assert!(refused("wireperf -c h --repeat 2 --json-stream").starts_with("--repeat cannot be combined"));
    assert!(refused("wireperf -c h --repeat 2 -t 0").contains("-t 0 runs until interrupted"));
    assert!(refused("wireperf -s --repeat 3").starts_with("--repeat is a client option"));
    assert!(refused("wireperf -s --warmup 1").starts_with("--warmup is a client option"));
    // Other client-only flags keep iperf3's words.
    assert_eq!(refused("wireperf -s -t 3"), "some option you are trying to set is client only");
}

#[test]
fn bad_values_are_refused_by_the_suites_parsers() {
    for (argv, flag) in [
        ("wireperf -c h --repeat 0", "--repeat"),
        ("wireperf -c h --warmup 11", "--warmup"),
        ("wireperf -c h --confidence 95", "--confidence"),
    ] {
        let e = crate::cli::parse_from(argv.split_whitespace()).expect_err(argv).to_string();
        assert!(e.contains(flag), "{argv}: {e}");
    }
}
