//! Both hosts' per-CPU load over a phase, from the bottleneck watch's stored samples: one chart
//! per host, one line per CPU (busy percent per sampling interval). Drawn beside the
//! throughput chart, so a CPU pinned at 100 % while the rate sagged is seen at a glance.

use serde_json::Value;

use super::chart::{Chart, HALF, Sample, Series, SeriesKind};
use super::palette;
use super::scale::AxisUnit;

/// The CPU charts of one phase (`client` first, then `server`; a host not watched has none).
pub fn cpu_charts(id_prefix: &str, phase: &str, cpu_load: &Value) -> Vec<Chart> {
    ["client", "server"].iter().filter_map(|host| host_chart(id_prefix, phase, host, cpu_load.get(*host)?)).collect()
}

fn host_chart(id_prefix: &str, phase: &str, host: &str, load: &Value) -> Option<Chart> {
    let t: Vec<f64> = load.get("t")?.as_array()?.iter().filter_map(Value::as_f64).collect();
    let cpus = load.get("cpus")?.as_array()?;
    let series: Vec<Series> = cpus
        .iter()
        .enumerate()
        .filter_map(|(cpu, busy)| {
            let busy: Vec<f64> = busy.as_array()?.iter().filter_map(Value::as_f64).collect();
            let samples: Vec<Sample> = t
                .iter()
                .zip(&busy)
                .enumerate()
                .map(|(i, (end, value))| Sample {
                    start: if i == 0 { 0.0 } else { t[i - 1] },
                    end: *end,
                    value: *value,
                })
                .collect();
            (!samples.is_empty()).then(|| Series {
                name: format!("CPU{cpu}"),
                colour: palette::series(cpu),
                kind: SeriesKind::Line,
                samples,
            })
        })
        .collect();
    (!series.is_empty()).then(|| Chart {
        id: format!("{id_prefix}-cpu-{host}"),
        title: format!("{phase}: {host} CPU busy %"),
        description: format!(
            "Line chart of each CPU's busy percent on the {host} host during the {phase} phase, {} CPUs.",
            series.len()
        ),
        y_label: "CPU busy %".to_string(),
        y_unit: AxisUnit::Count,
        width: HALF.0,
        height: HALF.1,
        series,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn one_chart_per_host_one_line_per_cpu() {
        let load = json!({
            "client": {"t": [1.0, 2.0], "cpus": [[10.0, 20.0], [90.0, 100.0]]},
            "server": {"t": [1.0], "cpus": [[50.0]]}
        });
        let charts = cpu_charts("run-1-upload", "upload", &load);
        assert_eq!(charts.len(), 2);
        assert_eq!(charts[0].id, "run-1-upload-cpu-client");
        assert_eq!(charts[0].series.len(), 2);
        assert_eq!(charts[0].series[1].name, "CPU1");
        assert_eq!(charts[0].series[1].samples[1], Sample { start: 1.0, end: 2.0, value: 100.0 });
        assert_eq!(charts[1].title, "upload: server CPU busy %");
        // A host that was not watched (stock iperf3 server) has no chart; junk has none either.
        assert_eq!(cpu_charts("p", "upload", &json!({"client": load["client"].clone()})).len(), 1);
        assert!(cpu_charts("p", "upload", &json!({"server": {"t": "x"}})).is_empty());
    }
}
