//! `-J` and `--json-stream` output.
//!
//! `-J` prints one iperf3-schema document per test at the end; `--json-stream` prints one line
//! per event (`{"event":"start"|"interval"|"end"|"error","data":…}`), as iperf3 3.17+ does.

use crate::output::Sink;
use serde_json::{Value, json};
use wireperf_engine::{Event, Observer, ServerOutput};
use wireperf_protocol::schema::TestReport;

/// Prints JSON as events arrive.
pub struct JsonObserver {
    sink: Sink,
    stream: bool,
    server: bool,
    last: Option<Value>,
}

impl JsonObserver {
    /// For a client.
    pub fn client(sink: Sink, stream: bool) -> Self {
        Self { sink, stream, server: false, last: None }
    }

    /// For one server test: the document is printed at the end of the test.
    pub fn server(sink: Sink, stream: bool) -> Self {
        Self { sink, stream, server: true, last: None }
    }

    fn line(&self, event: &str, data: Value) {
        self.sink.raw(&format!("{}\n", json!({"event": event, "data": data})));
    }

    /// Prints a failed test's document (with its `error` key).
    pub fn print_error(sink: &Sink, report: &TestReport, stream: bool) {
        if stream {
            let e = report.error.clone().unwrap_or_default();
            sink.raw(&format!("{}\n", json!({"event": "error", "data": e})));
        } else {
            sink.raw(&wireperf_report::cjson::to_cjson_string(report));
        }
    }
}

impl Observer for JsonObserver {
    fn event(&mut self, ev: Event<'_>) {
        match ev {
            Event::TestStart(start) if self.stream => {
                self.line("start", serde_json::to_value(start).unwrap_or(Value::Null));
            }
            Event::Interval(i) if self.stream => {
                self.line("interval", serde_json::to_value(i).unwrap_or(Value::Null));
            }
            Event::End(report) => {
                let v = serde_json::to_value(report).unwrap_or(Value::Null);
                if self.stream {
                    self.line("end", v.get("end").cloned().unwrap_or(Value::Null));
                } else if self.server {
                    self.sink.raw(&wireperf_report::cjson::to_cjson_string(report));
                }
                self.last = Some(v);
            }
            _ => {}
        }
    }

    fn server_output(&mut self) -> Option<ServerOutput> {
        self.last.clone().map(ServerOutput::Json)
    }
}
