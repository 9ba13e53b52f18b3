//! Renderers. [`Output`] takes engine events in arrival order and prints iperf 2 text or CSV
//! as they come, or collects the `-J` document and prints it at the end.

mod csv;
mod json;
mod sums;
mod text;

pub use json::JsonCollector;
pub use text::TextRenderer;

use crate::event::Event;

/// Which output the user asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// iperf 2's text (`-e` adds the enhanced columns).
    Text,
    /// `-y C`.
    Csv,
    /// `-J`: wireperf's iperf3-schema JSON.
    Json,
}

/// Whether this host is the client or the server (changes ids and labels).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// `-c`.
    Client,
    /// `-s`.
    Server,
}

/// One renderer behind one interface.
pub enum Output {
    /// Text or CSV, printed as events arrive.
    Text(TextRenderer),
    /// JSON, printed at the end.
    Json(Box<JsonCollector>),
}

impl Output {
    /// Renders one event.
    pub fn handle(&mut self, e: &Event) {
        match self {
            Output::Text(t) => t.handle(e),
            Output::Json(j) => j.handle(e),
        }
    }
}
