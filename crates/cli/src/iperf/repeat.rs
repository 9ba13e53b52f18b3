//! `-c HOST --repeat N [--warmup K] [--confidence LEVEL,WIDTH]`: the flags of a series of
//! client tests (a wireperf extension; iperf3 has none of them), lowered into a
//! [`RepeatConfig`].
//!
//! The values are read by the parsers the suite uses (`crate::shared::repeat_args`), so `suite
//! --repeat 0` and `-c HOST --repeat 0` refuse the same values with the same words. What
//! depends on the other flags (a warm-up that leaves nothing to count, a confidence target
//! that can never be judged, tests that never end, a JSON stream of several tests) is refused
//! here, as a parameter error naming the flag.

use crate::iperf::args::IperfArgs;
use crate::iperf::lower::ParamError;
use wireperf_protocol::TestParams;
use wireperf_suite::series::{MIN_ROUNDS_FOR_CONFIDENCE, RepeatConfig};

/// The clap ids of the series flags: client-only, and refused by a server with a message that
/// names them (iperf3's "client only" names nothing, and these are not iperf3's flags).
pub const FLAGS: [(&str, &str); 3] = [("repeat", "--repeat"), ("warmup", "--warmup"), ("confidence", "--confidence")];

/// Tests in a series when `--confidence` is given without `--repeat` (as the suite's rounds).
pub const CONFIDENCE_CAP: usize = 10;

pub use crate::shared::repeat_args::{confidence, rounds, warmup};

/// The message for a series flag given to a server, when one was (`client_only` are the
/// client-only clap ids given).
pub fn refused_by_server(client_only: &[String]) -> Option<ParamError> {
    let (_, flag) = FLAGS.iter().find(|(id, _)| client_only.iter().any(|c| c == id))?;
    Some(ParamError::Msg(format!(
        "{flag} is a client option (wireperf -c HOST {flag} ...): a server runs whatever tests its clients ask for"
    )))
}

/// The series the flags ask for: `None` without `--repeat` and `--confidence` (one test, as
/// iperf3 runs it). `p` are the test's parameters and `sends_file` whether `-F` ends it.
pub fn config(a: &IperfArgs, p: &TestParams, sends_file: bool) -> Result<Option<RepeatConfig>, ParamError> {
    let err = |m: String| Err(ParamError::Msg(m));
    if a.repeat.is_none() && a.confidence.is_none() {
        return match a.warmup {
            Some(k) if k > 0 => err(format!("--warmup {k} leaves no test of 1 to count: add --repeat N above it")),
            _ => Ok(None),
        };
    }
    let flag = if a.repeat.is_some() { "--repeat" } else { "--confidence" };
    let cfg = RepeatConfig {
        rounds: a.repeat.unwrap_or(CONFIDENCE_CAP),
        warmup: a.warmup.unwrap_or(0),
        level: a.confidence.map_or(95.0, |c| c.0),
        width_pct: a.confidence.map(|c| c.1),
    };
    if cfg.warmup > 0 && cfg.warmup >= cfg.rounds {
        return err(format!(
            "--warmup {} leaves no test of {} to count: give --repeat above it",
            cfg.warmup, cfg.rounds
        ));
    }
    if cfg.width_pct.is_some() && cfg.rounds - cfg.warmup < MIN_ROUNDS_FOR_CONFIDENCE {
        return err(format!(
            "--confidence needs {MIN_ROUNDS_FOR_CONFIDENCE} counted tests to judge, and --repeat {} with --warmup {} \
             counts {}: give --repeat {} or more",
            cfg.rounds,
            cfg.warmup,
            cfg.rounds - cfg.warmup,
            MIN_ROUNDS_FOR_CONFIDENCE + cfg.warmup
        ));
    }
    if a.json_stream {
        return err(format!(
            "{flag} cannot be combined with --json-stream (one stream would carry several tests' events): \
             use -J for one document with every test and the statistics"
        ));
    }
    // `-t 0` without -n/-k/-F is iperf3's "no time limit": the first test would never end.
    if p.time == 0 && p.num == 0 && p.blockcount == 0 && !sends_file {
        return err(format!(
            "{flag} needs tests that end by themselves, and -t 0 runs until interrupted: give -t N, -n or -k"
        ));
    }
    Ok(Some(cfg))
}

#[cfg(all(test, feature = "suite"))]
mod tests {
    use crate::iperf::lower::{Mode, ParamError, lower};

    fn lowered(cmd: &str) -> Result<Mode, ParamError> {
        let (cli, roles) = crate::cli::parse_from(cmd.split_whitespace()).expect("parses");
        lower(&cli.iperf, &roles).map(|(mode, _)| mode)
    }

    fn repeat(cmd: &str) -> Option<wireperf_suite::series::RepeatConfig> {
        match lowered(cmd) {
            Ok(Mode::Client(_, _, r)) => r,
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
}
