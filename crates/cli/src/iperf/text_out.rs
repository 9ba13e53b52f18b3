//! iperf3's text output, printed as the engine's events arrive.
//!
//! The layout comes from `wireperf-report`; this module only decides *when* each block is
//! printed (preamble once the streams are up, one block per interval, the summary at the end)
//! and applies `-T`/`--timestamps` per printing call, as iperf3 does.

use crate::iperf::output::Sink;
use crate::iperf::run_spec::OutputOpts;
use wireperf_engine::{Event, Observer, ServerOutput};
use wireperf_protocol::TestParams;
use wireperf_protocol::schema::TestReport;
use wireperf_report::text::interval::render_interval;
use wireperf_report::text::preamble::{self, VerboseExtras, render_client_preamble};
use wireperf_report::text::prefix::Printed;
use wireperf_report::text::summary::render_summary_calls;
use wireperf_report::text::{Role, TextContext};

/// Prints iperf3-layout text as events arrive.
pub struct TextObserver {
    sink: Sink,
    ctx: Option<TextContext>,
    role: Role,
    out: OutputOpts,
    extras: VerboseExtras,
    intervals_printed: usize,
    /// Everything printed for this test (server: returned for `--get-server-output`).
    collected: String,
    title: Option<String>,
}

impl TextObserver {
    /// For a client running `p`.
    pub fn client(sink: Sink, out: &OutputOpts, p: &TestParams) -> Self {
        let mut ctx = TextContext::new(Role::Client, p);
        ctx.format = out.format;
        ctx.verbose = out.verbose;
        Self {
            sink,
            ctx: Some(ctx),
            role: Role::Client,
            out: out.clone(),
            extras: VerboseExtras::default(),
            intervals_printed: 0,
            collected: String::new(),
            title: out.title.clone(),
        }
    }

    /// For one server test (the context is known once the parameters arrive).
    pub fn server(sink: Sink, out: &OutputOpts) -> Self {
        Self {
            sink,
            ctx: None,
            role: Role::Server,
            out: out.clone(),
            extras: VerboseExtras::default(),
            intervals_printed: 0,
            collected: String::new(),
            title: None,
        }
    }

    /// Prefixes every line (as `-T` does): concurrent server tests print `[test N]:  …`.
    pub fn with_prefix(mut self, prefix: String) -> Self {
        self.title = Some(prefix);
        self
    }

    fn emit(&mut self, p: &Printed) {
        let stamp = self.out.timestamps.as_deref().map(|f| wireperf_sys::time::strftime_local(f).unwrap_or_default());
        let text = p.prefixed(stamp.as_deref(), self.title.as_deref());
        self.collected.push_str(&p.to_string());
        self.sink.raw(&text);
    }

    /// Prints text made of whole lines, one printing call per line (so each gets its prefix).
    fn emit_text(&mut self, text: String) {
        let mut p = Printed::new();
        for line in text.split_inclusive('\n') {
            p.report(line);
        }
        self.emit(&p);
    }

    fn server_ctx(&self, report_params: Option<&wireperf_protocol::schema::TestStart>) -> Option<TextContext> {
        let ts = report_params?;
        let params = TestParams {
            protocol: if ts.protocol == "UDP" {
                wireperf_protocol::Protocol::Udp
            } else {
                wireperf_protocol::Protocol::Tcp
            },
            parallel: ts.num_streams,
            reverse: ts.reverse != 0,
            ..Default::default()
        };
        let mut ctx = TextContext::new(Role::Server, &params);
        ctx.format = self.out.format;
        ctx.verbose = self.out.verbose;
        Some(ctx)
    }

    fn summary(&mut self, report: &TestReport) {
        let Some(mut ctx) = self.ctx.clone() else { return };
        // The peer's sending direction has a Retr column when the peer reported retransmits.
        ctx.remote_sender_has_retransmits =
            report.end.streams.iter().filter_map(|s| s.sender.as_ref()).any(|s| !s.sender && s.retransmits.is_some());
        let p = render_summary_calls(report, &ctx);
        self.emit(&p);
        if self.role == Role::Client {
            // Two printing calls, as iperf3 makes them: with -T the blank line is prefixed too.
            let mut done = Printed::new();
            done.report("\n");
            done.report(preamble::done().trim_start_matches('\n'));
            self.emit(&done);
        }
    }
}

impl Observer for TextObserver {
    fn event(&mut self, ev: Event<'_>) {
        match ev {
            Event::ControlConnected { mss } => self.extras.control_mss = Some(mss),
            Event::Accepted { host, port } => self.emit_text(preamble::accepted(&host, port)),
            Event::TestStart(start) => {
                if self.role == Role::Client {
                    if let Some(ctx) = &self.ctx {
                        let p = render_client_preamble(start, ctx, &self.extras);
                        self.emit(&p);
                    }
                } else {
                    // The server learns bidir from the stream count: 2 × parallel connections.
                    let mut ctx = self.server_ctx(start.test_start.as_ref());
                    if let (Some(c), Some(ts)) = (ctx.as_mut(), start.test_start.as_ref()) {
                        c.bidir = start.connected.len() as u32 == ts.num_streams * 2 && ts.num_streams > 0;
                    }
                    let mut p = Printed::new();
                    if self.out.verbose {
                        if let Some(c) = &start.cookie {
                            p.report(preamble::cookie(c));
                        }
                        if let Some(mss) = start.tcp_mss_default {
                            p.report(preamble::tcp_mss(mss, true));
                        }
                        if let Some(rate) = start.target_bitrate.filter(|&r| r != 0) {
                            p.report(preamble::target_bitrate(rate));
                        }
                    }
                    for c in &start.connected {
                        p.report(preamble::connected(c));
                    }
                    if let Some(t) = start.test_start.as_ref().filter(|_| self.out.verbose) {
                        p.report(preamble::starting_test(t));
                    }
                    self.emit(&p);
                    self.ctx = ctx;
                }
            }
            Event::OmitEnded => {}
            Event::Interval(i) => {
                if let Some(ctx) = &self.ctx {
                    let text = render_interval(i, ctx, self.intervals_printed == 0);
                    self.intervals_printed += 1;
                    self.emit_text(text);
                    if self.out.forceflush {
                        self.sink.flush();
                    }
                }
            }
            Event::End(report) => self.summary(report),
            Event::Connecting { .. }
            | Event::StreamConnected(_)
            | Event::Listening { .. }
            | Event::WatchRequested
            | Event::TestFailed(_) => {}
        }
    }

    fn server_output(&mut self) -> Option<ServerOutput> {
        Some(ServerOutput::Text(self.collected.clone()))
    }
}
