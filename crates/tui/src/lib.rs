//! wireperf's live full-screen view of a running client test (`wireperf -c HOST --tui`).
//!
//! Built on `ratatui` with its `crossterm` backend. The view is an [`Observer`] wrapper: it folds
//! the engine's events into its own state and passes each one on unchanged, so the text or JSON
//! output, the history entry and the exit status are those of a run without the view.
//!
//! # Layout
//! - [`hosts`]: what the view asks a [`HostProbe`] for (both hosts' CPU, retransmits split
//!   by DSACK) — the binary supplies one built on the bottleneck finder's watch.
//! - [`state`]: [`LiveState`], the figures and chart series folded from events; no terminal.
//! - [`view`]: draws a [`LiveState`] into a ratatui frame (header with phase and time left,
//!   throughput chart per stream and sum, stream table, hosts box, keys); tested on
//!   ratatui's `TestBackend`.
//! - [`live`]: the real terminal: raw mode and the alternate screen, a thread that redraws and
//!   reads keys (`p` pause chart, `q`/Ctrl-C end the test), and [`LiveObserver`].
//!
//! [`Observer`]: wireperf_engine::Observer

pub mod hosts;
pub mod live;
pub mod state;
pub mod view;

pub use hosts::{FarHost, HostCpu, HostProbe, HostsNow, RetransmitSplit};
pub use live::{Controls, LiveObserver, LiveView};
pub use state::LiveState;
