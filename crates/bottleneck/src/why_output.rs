//! `--why`: watch the hosts during a test and name what held each direction back.
//!
//! The watching itself is [`crate::engine_watch`] (shared with the server, the suite and
//! selftest); this module renders the client's verdicts and what the watching cost each host:
//! below iperf3's summary (text) or under the report's `wireperf` key (`-J`). Without `--why`
//! nothing here runs, and plain iperf3 output is unchanged.

use crate::diagnosis::Verdict;
use crate::host_sample::Series;
use serde_json::{Value, json};
use wireperf_doctor::share::SharedHost;
use wireperf_protocol::schema::TestReport;

/// What the watch cost each host: this one's series and the far host's, when it sent one.
#[derive(Debug, Clone, Copy, Default)]
pub struct Watched<'a> {
    /// This host's series (`None` when its watcher could not start).
    pub client: Option<&'a Series>,
    /// The wireperf server's series (`None` against a stock server).
    pub server: Option<&'a Series>,
    /// The server's doctor, when it shared it.
    pub server_host: Option<&'a SharedHost>,
}

impl Watched<'_> {
    /// `{"client": cost, "server": cost}`; a host that sent no cost is `null`.
    pub fn cost_json(&self) -> Value {
        let one = |s: Option<&Series>| s.and_then(|s| s.cost).map_or(Value::Null, |c| c.to_json());
        json!({ "client": one(self.client), "server": one(self.server) })
    }

    /// One line per host that was watched.
    fn cost_text(&self) -> String {
        let mut out = String::new();
        for (side, s) in [("client", self.client), ("server", self.server)] {
            let Some(s) = s else { continue };
            let what = s.cost.map_or_else(|| "not reported (an older wireperf)".to_string(), |c| c.text());
            out.push_str(&format!("Watch cost ({side}): {what}\n"));
        }
        out
    }
}

/// The text block printed after iperf3's summary.
pub fn render_text(verdicts: &[Verdict], watched: Watched<'_>) -> String {
    let mut out = String::from("\n");
    for v in verdicts {
        out.push_str(&crate::verdict_text::render(v));
        out.push('\n');
    }
    if let Some(h) = watched.server_host {
        out.push_str(&server_host_text(h));
    }
    out.push_str(&watched.cost_text());
    out
}

/// The server's doctor in `--why` text: its interface, then each finding with its first fix
/// (to run on the server).
fn server_host_text(h: &SharedHost) -> String {
    let l = &h.link;
    let speed = l.speed_mbps.map(|s| format!(", {s} Mbit/s {} duplex", l.duplex.as_deref().unwrap_or("unknown")));
    let mut out = format!(
        "Server's doctor on {} ({}{}): {}\n",
        h.iface,
        l.driver.as_deref().unwrap_or("driver unknown"),
        speed.unwrap_or_default(),
        if h.findings.is_empty() { "no findings".to_string() } else { format!("{} finding(s)", h.findings.len()) }
    );
    for f in &h.findings {
        out.push_str(&format!("  {} {}: {}\n", f.severity, f.id, f.summary));
        if let Some(fix) = f.fix.first() {
            out.push_str(&format!("    fix on the server: {fix}\n"));
        }
    }
    out
}

/// The `wireperf` extension of a `-J` document: the verdicts, the watch's cost and the
/// server's doctor when it shared it.
pub fn extension(verdicts: &[Verdict], watched: Watched<'_>) -> Value {
    let mut v = json!({ "bottleneck": verdicts, "watch_cost": watched.cost_json() });
    if let (Some(h), Some(m)) = (watched.server_host, v.as_object_mut()) {
        m.insert("server_host".into(), serde_json::to_value(h).unwrap_or(Value::Null));
    }
    v
}

/// The `-J` document with the verdicts under `wireperf.bottleneck` and the cost under
/// `wireperf.watch_cost`.
pub fn json_with_verdicts(report: &TestReport, verdicts: &[Verdict], watched: Watched<'_>) -> Value {
    let mut v = serde_json::to_value(report).unwrap_or(Value::Null);
    if let Some(m) = v.as_object_mut() {
        m.insert("wireperf".into(), extension(verdicts, watched));
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cost::WatchCost;

    #[test]
    fn cost_lines_and_json_per_watched_host() {
        let cost = WatchCost { seconds: 2.0, during_ns: 1_000_000, samples: 2, edges_ns: 4_000_000 };
        let client = Series { cost: Some(cost), ..Default::default() };
        let older = Series::default();
        let w = Watched { client: Some(&client), server: Some(&older), server_host: None };
        let text = render_text(&[], w);
        assert!(text.contains("Watch cost (client): sampling used 1.0 ms CPU in 2.0 s (0.050 % of one core"), "{text}");
        assert!(text.contains("Watch cost (server): not reported (an older wireperf)"), "{text}");
        let j = w.cost_json();
        assert_eq!(j["client"]["cpu_ms"], 1.0);
        assert!(j["server"].is_null());
        // A stock server: no server line at all (the verdict says the far side was not seen).
        let stock = render_text(&[], Watched { client: Some(&client), server: None, server_host: None });
        assert!(!stock.contains("(server)"), "{stock}");
    }
}
