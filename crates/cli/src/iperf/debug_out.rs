//! `-d`: every engine event is also written to stderr, prefixed `debug:`, so a user can see
//! where a test stops without a packet capture.

use wireperf_engine::{Event, Observer, ServerOutput};

struct Debug {
    inner: Box<dyn Observer + Send>,
}

impl Observer for Debug {
    fn event(&mut self, ev: Event<'_>) {
        match &ev {
            // The whole report is long; the summary keys are what a user wants to see.
            Event::End(r) => {
                eprintln!("debug: end: sum_sent {:?} sum_received {:?}", r.end.sum_sent, r.end.sum_received)
            }
            Event::Interval(i) => {
                eprintln!("debug: interval {:.2}-{:.2} {} bytes", i.sum.start, i.sum.end, i.sum.bytes)
            }
            other => eprintln!("debug: {other:?}"),
        }
        self.inner.event(ev);
    }

    fn server_output(&mut self) -> Option<ServerOutput> {
        self.inner.server_output()
    }

    fn watch_results(&mut self) -> Option<serde_json::Value> {
        self.inner.watch_results()
    }

    fn peer_watch(&mut self, watch: &serde_json::Value) {
        self.inner.peer_watch(watch);
    }
}

/// Wraps `inner` so events are logged when `debug` is on.
pub fn wrap(inner: Box<dyn Observer + Send>, debug: bool) -> Box<dyn Observer + Send> {
    if debug { Box::new(Debug { inner }) } else { inner }
}
