//! `/probe` query parameters → a [`ProbeSpec`].
//!
//! Names follow wireperf's flags (`duration`, `reverse`, `bidir`, `udp`, `bitrate`,
//! `parallel`); the names of the widely used iperf3 exporter (`port`, `period`,
//! `reverse_mode`, `udp_mode`) are accepted too, so its Prometheus configs work unchanged.
//! `repeat` (wireperf's own) runs a series of tests in one probe.

use std::collections::HashMap;
use wireperf_report::units::parse_rate_burst;

/// Longest test a probe may ask for, seconds (the scrape timeout usually clamps far lower).
pub const MAX_DURATION: u32 = 3600;
/// iperf3's limit on streams per direction.
pub const MAX_PARALLEL: u32 = 128;
/// Most tests one probe may run back to back (`repeat`). Ten give a confidence interval about
/// as tight as a busy path allows (the t quantile is 2.26 at 10, 1.96 at infinity), and keep a
/// scrape's load on the link bounded: more tests belong in more scrapes.
pub const MAX_REPEAT: u32 = 10;

/// One probe's test, as asked for.
#[derive(Clone, Debug, PartialEq)]
pub struct ProbeSpec {
    /// Host name or address (no brackets).
    pub host: String,
    /// Server port.
    pub port: u16,
    /// Requested test length, seconds (clamped later to fit the scrape timeout).
    pub duration: u32,
    /// Target sends (`-R`).
    pub reverse: bool,
    /// Both directions (`--bidir`).
    pub bidir: bool,
    /// UDP (`-u`).
    pub udp: bool,
    /// Target rate per stream, bit/s (`-b`); `None` = unlimited (TCP) or 1 Mbit/s (UDP).
    pub bitrate: Option<u64>,
    /// Datagrams per pacing burst (`-b RATE/BURST`).
    pub burst: Option<u32>,
    /// Streams per direction (`-P`).
    pub parallel: u32,
    /// Latency under load beside the test (`latency=1`): idle and loaded round trips, the
    /// added latency, RPM and grade (`--latency`); costs about a second of idle probes.
    pub latency: bool,
    /// Tests run back to back in this probe (`repeat=N`, 1..=[`MAX_REPEAT`]); with 2 or more
    /// the probe also publishes the series' mean and confidence interval. 1 = one test.
    pub repeat: u32,
}

/// Defaults for what a query leaves out.
#[derive(Clone, Copy, Debug)]
pub struct SpecDefaults {
    /// Port when neither `target` nor `port` names one.
    pub port: u16,
    /// Test length when `duration`/`period` is absent, seconds.
    pub duration: u32,
}

/// A query the exporter cannot run (answered with HTTP 400).
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ParamError {
    /// `target` is missing or empty.
    #[error("'target' parameter must be specified")]
    NoTarget,
    /// A value does not parse.
    #[error("'{name}' parameter: {why}")]
    Bad {
        /// Parameter name.
        name: &'static str,
        /// What is wrong.
        why: String,
    },
}

fn bad(name: &'static str, why: impl Into<String>) -> ParamError {
    ParamError::Bad { name, why: why.into() }
}

/// Splits `HOST`, `HOST:PORT`, `[V6]`, `[V6]:PORT` or a bare IPv6 address.
pub fn split_target(target: &str) -> Result<(String, Option<u16>), ParamError> {
    let port =
        |p: &str| p.parse::<u16>().ok().filter(|&p| p > 0).ok_or_else(|| bad("target", format!("bad port '{p}'")));
    if let Some(rest) = target.strip_prefix('[') {
        let (host, tail) = rest.split_once(']').ok_or_else(|| bad("target", "missing ']'"))?;
        return match tail {
            "" => Ok((host.to_string(), None)),
            t => match t.strip_prefix(':') {
                Some(p) => Ok((host.to_string(), Some(port(p)?))),
                None => Err(bad("target", format!("unexpected '{t}' after ']'"))),
            },
        };
    }
    match target.matches(':').count() {
        1 => {
            let (h, p) = target.split_once(':').ok_or_else(|| bad("target", "bad host"))?;
            Ok((h.to_string(), Some(port(p)?)))
        }
        _ => Ok((target.to_string(), None)),
    }
}

fn boolean(q: &HashMap<String, String>, names: &[&'static str]) -> Result<bool, ParamError> {
    for &n in names {
        if let Some(v) = q.get(n) {
            return match v.to_ascii_lowercase().as_str() {
                "" | "1" | "true" | "yes" | "on" => Ok(true),
                "0" | "false" | "no" | "off" => Ok(false),
                other => Err(bad(n, format!("'{other}' is not a boolean (use 1/0 or true/false)"))),
            };
        }
    }
    Ok(false)
}

/// Seconds as `5`, `5.0` or `5s` (the iperf3 exporter's `period` is a Go duration).
fn seconds(name: &'static str, v: &str) -> Result<u32, ParamError> {
    let num = v.strip_suffix('s').unwrap_or(v);
    let secs: f64 = num.parse().map_err(|_| bad(name, format!("'{v}' is not a number of seconds")))?;
    if !(secs >= 1.0 && secs <= f64::from(MAX_DURATION)) {
        return Err(bad(name, format!("must be between 1 and {MAX_DURATION} seconds")));
    }
    Ok(secs.round() as u32)
}

impl ProbeSpec {
    /// Reads a `/probe` query.
    pub fn from_query(q: &HashMap<String, String>, d: SpecDefaults) -> Result<Self, ParamError> {
        let target = q.get("target").map(|t| t.trim()).filter(|t| !t.is_empty()).ok_or(ParamError::NoTarget)?;
        let (host, target_port) = split_target(target)?;
        if host.is_empty() {
            return Err(bad("target", "empty host"));
        }
        let port = match (target_port, q.get("port")) {
            (Some(p), _) => p,
            (None, Some(p)) => {
                p.parse::<u16>().ok().filter(|&p| p > 0).ok_or_else(|| bad("port", format!("bad port '{p}'")))?
            }
            (None, None) => d.port,
        };
        let duration =
            match q.get("duration").map(|v| ("duration", v)).or_else(|| q.get("period").map(|v| ("period", v))) {
                Some((name, v)) => seconds(name, v)?,
                None => d.duration,
            };
        let reverse = boolean(q, &["reverse", "reverse_mode"])?;
        let bidir = boolean(q, &["bidir"])?;
        if reverse && bidir {
            return Err(bad("reverse", "cannot be both reverse and bidirectional"));
        }
        let udp = boolean(q, &["udp", "udp_mode"])?;
        let (bitrate, burst) = match q.get("bitrate").filter(|b| !b.is_empty()) {
            Some(b) => {
                let (rate, burst) = parse_rate_burst(b).map_err(|e| bad("bitrate", e.to_string()))?;
                (Some(rate).filter(|&r| r > 0), burst)
            }
            None => (None, None),
        };
        let parallel = match q.get("parallel") {
            Some(p) => p
                .parse::<u32>()
                .ok()
                .filter(|p| (1..=MAX_PARALLEL).contains(p))
                .ok_or_else(|| bad("parallel", format!("must be 1..{MAX_PARALLEL}")))?,
            None => 1,
        };
        let latency = boolean(q, &["latency"])?;
        let repeat = match q.get("repeat") {
            Some(r) => r.parse::<u32>().ok().filter(|r| (1..=MAX_REPEAT).contains(r)).ok_or_else(|| {
                bad("repeat", format!("must be a whole number of tests from 1 to {MAX_REPEAT}, not '{r}'"))
            })?,
            None => 1,
        };
        Ok(Self { host, port, duration, reverse, bidir, udp, bitrate, burst, parallel, latency, repeat })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const D: SpecDefaults = SpecDefaults { port: 5201, duration: 5 };

    fn q(s: &str) -> HashMap<String, String> {
        s.split('&')
            .filter(|kv| !kv.is_empty())
            .map(|kv| {
                let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
                (k.to_string(), v.to_string())
            })
            .collect()
    }

    #[test]
    fn targets_with_and_without_ports() {
        assert_eq!(split_target("h").unwrap(), ("h".into(), None));
        assert_eq!(split_target("h:5202").unwrap(), ("h".into(), Some(5202)));
        assert_eq!(split_target("::1").unwrap(), ("::1".into(), None));
        assert_eq!(split_target("[::1]:7").unwrap(), ("::1".into(), Some(7)));
        assert_eq!(split_target("[fe80::1]").unwrap(), ("fe80::1".into(), None));
        assert!(split_target("h:0").is_err());
        assert!(split_target("h:x").is_err());
        assert!(split_target("[::1").is_err());
    }

    #[test]
    fn wireperf_names() {
        let s =
            ProbeSpec::from_query(&q("target=10.0.0.9:5202&duration=3&bidir=1&bitrate=100M/5&parallel=4&latency=1"), D)
                .unwrap();
        assert_eq!(
            s,
            ProbeSpec {
                host: "10.0.0.9".into(),
                port: 5202,
                duration: 3,
                reverse: false,
                bidir: true,
                udp: false,
                bitrate: Some(100_000_000),
                burst: Some(5),
                parallel: 4,
                latency: true,
                repeat: 1,
            }
        );
    }

    #[test]
    fn iperf3_exporter_names_and_defaults() {
        let s = ProbeSpec::from_query(&q("target=h&port=5300&period=10s&reverse_mode=true&udp_mode=true"), D).unwrap();
        assert_eq!((s.port, s.duration, s.reverse, s.udp, s.parallel), (5300, 10, true, true, 1));
        let s = ProbeSpec::from_query(&q("target=h"), D).unwrap();
        assert_eq!((s.port, s.duration, s.reverse, s.bitrate), (5201, 5, false, None));
    }

    #[test]
    fn bad_queries_say_what_is_wrong() {
        let err = |s: &str| ProbeSpec::from_query(&q(s), D).unwrap_err().to_string();
        assert_eq!(err(""), "'target' parameter must be specified");
        assert_eq!(err("target="), "'target' parameter must be specified");
        assert!(err("target=h&reverse=1&bidir=1").contains("both reverse and bidirectional"));
        assert!(err("target=h&parallel=0").starts_with("'parallel'"));
        assert!(err("target=h&duration=0").starts_with("'duration'"));
        assert!(err("target=h&udp=maybe").starts_with("'udp'"));
        assert!(err("target=h&bitrate=fast").starts_with("'bitrate'"));
    }

    #[test]
    fn repeat_is_one_by_default_and_bounded() {
        assert_eq!(ProbeSpec::from_query(&q("target=h"), D).unwrap().repeat, 1);
        assert_eq!(ProbeSpec::from_query(&q("target=h&repeat=1"), D).unwrap().repeat, 1);
        assert_eq!(ProbeSpec::from_query(&q("target=h&repeat=3&duration=2"), D).unwrap().repeat, 3);
        assert_eq!(ProbeSpec::from_query(&q("target=h&repeat=10"), D).unwrap().repeat, MAX_REPEAT);
        let err = |s: &str| ProbeSpec::from_query(&q(s), D).unwrap_err().to_string();
        assert_eq!(
            err("target=h&repeat=0"),
            "'repeat' parameter: must be a whole number of tests from 1 to 10, not '0'"
        );
        assert_eq!(
            err("target=h&repeat=11"),
            "'repeat' parameter: must be a whole number of tests from 1 to 10, not '11'"
        );
        assert_eq!(
            err("target=h&repeat=abc"),
            "'repeat' parameter: must be a whole number of tests from 1 to 10, not 'abc'"
        );
        assert!(err("target=h&repeat=").starts_with("'repeat'"));
        assert!(err("target=h&repeat=-2").starts_with("'repeat'"));
        assert!(err("target=h&repeat=2.5").starts_with("'repeat'"));
    }
}
