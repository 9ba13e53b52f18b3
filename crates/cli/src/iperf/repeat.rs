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
use crate::iperf::roles::SERIES_FLAGS;
use crate::iperf::run_spec::ParamError;
use wireperf_protocol::TestParams;
use wireperf_suite::series::{MIN_ROUNDS_FOR_CONFIDENCE, RepeatConfig};

/// Tests in a series when `--confidence` is given without `--repeat` (as the suite's rounds).
pub const CONFIDENCE_CAP: usize = 10;

/// The message for a series flag given to a server, when one was (`client_only` are the
/// client-only clap ids given).
pub fn refused_by_server(client_only: &[String]) -> Option<ParamError> {
    let (_, flag) = SERIES_FLAGS.iter().find(|(id, _)| client_only.iter().any(|c| c == id))?;
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
