//! The observer both ends of an in-process test report to.
//!
//! The engine lends its events (`Event<'_>` borrows the engine's values), so the recorder keeps
//! owned copies of what the checks need: the connections, the intervals, the report handed to
//! [`Event::End`] and any failure. It is shared behind a mutex because the server's observer is
//! moved to the server's test thread ([`wireperf_engine::ServerHooks::new_test`]) while the test
//! reads it afterwards from its own.

use std::sync::{Arc, Mutex, PoisonError};
use wireperf_engine::{Event, Observer};
use wireperf_protocol::schema::{Connected, Interval, TestReport};

/// What one end reported, in order of arrival within each field.
#[derive(Debug, Default)]
pub struct Seen {
    /// Every [`Event::StreamConnected`].
    pub connected: Vec<Connected>,
    /// [`Event::TestStart`] came.
    pub started: bool,
    /// Every [`Event::Interval`].
    pub intervals: Vec<Interval>,
    /// The report of [`Event::End`], when it came.
    pub end: Option<TestReport>,
    /// Every [`Event::TestFailed`], as text.
    pub failures: Vec<String>,
}

/// An [`Observer`] that records into a shared [`Seen`]; clones record into the same one.
#[derive(Clone, Debug, Default)]
pub struct Recorder(Arc<Mutex<Seen>>);

impl Recorder {
    /// Takes what was recorded so far, leaving it empty.
    pub fn take(&self) -> Seen {
        // A panic elsewhere in the test must not hide what was recorded.
        std::mem::take(&mut *self.0.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

impl Observer for Recorder {
    fn event(&mut self, ev: Event<'_>) {
        let mut seen = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        match ev {
            Event::StreamConnected(c) => seen.connected.push(c.clone()),
            Event::TestStart(_) => seen.started = true,
            Event::Interval(i) => seen.intervals.push(i.clone()),
            Event::End(report) => seen.end = Some(report.clone()),
            Event::TestFailed(e) => seen.failures.push(e.to_string()),
            _ => {}
        }
    }
}
