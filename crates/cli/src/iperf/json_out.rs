//! `-J` and `--json-stream` output.
//!
//! `-J` prints one iperf3-schema document per test at the end; `--json-stream` prints one line
//! per event (`{"event":"start"|"interval"|"end"|"error","data":…}`), as iperf3 3.17+ does;
//! with `--json-stream-full-output` (3.21+) the whole `-J` document follows the last event.

use crate::iperf::output::Sink;
use serde_json::{Value, json};
use wireperf_engine::{Event, Observer, ServerOutput};
use wireperf_protocol::schema::TestReport;

/// Which JSON output: `-J` (one document), `--json-stream` (events), or both.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct JsonMode {
    /// Line-delimited events (`--json-stream`).
    pub stream: bool,
    /// The whole document too (`-J`, or `--json-stream-full-output` with `--json-stream`).
    pub document: bool,
}

impl JsonMode {
    /// The mode the output options name.
    pub fn of(out: &crate::iperf::run_spec::OutputOpts) -> Self {
        JsonMode { stream: out.json_stream, document: !out.json_stream || out.json_stream_full }
    }
}

/// Prints JSON as events arrive.
pub struct JsonObserver {
    sink: Sink,
    stream: bool,
    document: bool,
    server: bool,
    last: Option<Value>,
}

impl JsonObserver {
    /// For a client.
    pub fn client(sink: Sink, mode: JsonMode) -> Self {
        Self { sink, stream: mode.stream, document: mode.document, server: false, last: None }
    }

    /// For one server test: the document is printed at the end of the test.
    pub fn server(sink: Sink, mode: JsonMode) -> Self {
        Self { sink, stream: mode.stream, document: mode.document, server: true, last: None }
    }

    fn line(&self, event: &str, data: Value) {
        self.sink.raw(&format!("{}\n", json!({"event": event, "data": data})));
    }

    /// Prints a failed test's document (with its `error` key).
    pub fn print_error(sink: &Sink, report: &TestReport, mode: JsonMode) {
        if mode.stream {
            let e = report.error.clone().unwrap_or_default();
            sink.raw(&format!("{}\n", json!({"event": "error", "data": e})));
        }
        if mode.document {
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
                }
                if self.server && self.document {
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
