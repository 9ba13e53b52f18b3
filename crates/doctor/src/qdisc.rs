//! The rate limit of an interface's root qdisc (tbf, or the root classes of htb), so a test
//! can tell "the link is slow" from "someone shaped it". Minimal by design: `tc` is asked, and
//! its output parsed. iproute2 prints htb classes as text even with `-j`, so text is parsed there.

use serde::Serialize;

use crate::error::Error;
use crate::read::commands::run;

/// A shaping limit found on an interface.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RateLimit {
    /// `tbf` or `htb`.
    pub kind: String,
    /// The limit in bit/s (for htb: the largest `ceil` among the root classes).
    pub rate_bps: u64,
}

/// Reads the root qdisc of `iface` with `tc` and returns its rate limit, if it shapes.
pub fn root_rate_limit(iface: &str) -> Result<Option<RateLimit>, Error> {
    let argv: Vec<String> = ["tc", "-j", "qdisc", "show", "dev", iface].iter().map(|s| s.to_string()).collect();
    let json = run(&argv).ok_or_else(|| Error::Command {
        cmd: argv.join(" "),
        msg: "tc is missing or failed (install iproute2)".into(),
    })?;
    match parse_root_qdisc(&json) {
        Some((kind, Some(rate))) => Ok(Some(RateLimit { kind, rate_bps: rate })),
        Some((kind, None)) if kind == "htb" => {
            let argv: Vec<String> = ["tc", "class", "show", "dev", iface].iter().map(|s| s.to_string()).collect();
            let text = run(&argv).unwrap_or_default();
            Ok(parse_htb_root_ceil(&text).map(|rate_bps| RateLimit { kind, rate_bps }))
        }
        _ => Ok(None),
    }
}

/// From `tc -j qdisc show`: the root qdisc's kind and, for tbf, its rate in bit/s
/// (`options.rate` is in bytes/s).
pub fn parse_root_qdisc(json: &str) -> Option<(String, Option<u64>)> {
    let v: serde_json::Value = serde_json::from_str(json).ok()?;
    let q = v.as_array()?.iter().find(|q| q.get("root").and_then(|r| r.as_bool()) == Some(true))?;
    let kind = q.get("kind")?.as_str()?.to_string();
    let rate = (kind == "tbf").then(|| q.get("options")?.get("rate")?.as_u64()).flatten().map(|r| r * 8);
    Some((kind, rate))
}

/// From `tc class show` text: the largest `ceil` of the htb classes attached at the root.
pub fn parse_htb_root_ceil(text: &str) -> Option<u64> {
    text.lines()
        .filter(|l| l.starts_with("class htb") && l.contains(" root "))
        .filter_map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            let i = w.iter().position(|x| *x == "ceil").or_else(|| w.iter().position(|x| *x == "rate"))?;
            parse_rate(w.get(i + 1)?)
        })
        .max()
}

/// `250Mbit` → 250_000_000; also `bit`, `Kbit`, `Gbit`, `Tbit`, and `bps` forms (bytes/s).
pub fn parse_rate(s: &str) -> Option<u64> {
    let lower = s.to_ascii_lowercase();
    let split = lower.find(|c: char| !(c.is_ascii_digit() || c == '.'))?;
    let (num, unit) = lower.split_at(split);
    let n: f64 = num.parse().ok()?;
    let mult = match unit {
        "bit" => 1.0,
        "kbit" => 1e3,
        "mbit" => 1e6,
        "gbit" => 1e9,
        "tbit" => 1e12,
        "bps" => 8.0,
        "kbps" => 8e3,
        "mbps" => 8e6,
        "gbps" => 8e9,
        _ => return None,
    };
    Some((n * mult) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tbf_rate() {
        let j = r#"[{"kind":"tbf","handle":"8001:","root":true,"refcnt":3,"options":{"rate":12500000,"burst":32762,"lat":50000}}]"#;
        assert_eq!(parse_root_qdisc(j), Some(("tbf".into(), Some(100_000_000))));
        let j = r#"[{"kind":"htb","handle":"1:","root":true,"options":{"r2q":10}}]"#;
        assert_eq!(parse_root_qdisc(j), Some(("htb".into(), None)));
        assert_eq!(parse_root_qdisc("[]"), None);
    }

    #[test]
    fn htb_classes() {
        let t = "class htb 1:10 root prio 0 rate 250Mbit ceil 250Mbit burst 1562b cburst 1562b \nclass htb 1:20 parent 1:10 prio 0 rate 1Gbit ceil 1Gbit\n";
        assert_eq!(parse_htb_root_ceil(t), Some(250_000_000));
        assert_eq!(parse_rate("1.5Gbit"), Some(1_500_000_000));
        assert_eq!(parse_rate("12bit"), Some(12));
        assert_eq!(parse_rate("fast"), None);
    }
}
