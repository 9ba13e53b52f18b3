//! What the client and the server of one test share, written once: the stream plan both
//! derive from [`TestParams`], and the end of the test (the `end` object, `-F` figures,
//! wireperf's extras, the intervals, and the results this side sends its peer).
//!
//! The two roles mirror each other: every rule here is stated from the client's point of view
//! and the server takes the other side of it. The loop both run is `driver`; what stays in
//! `client` and `server::one_test` is what the protocol makes different: who connects, who
//! ends the test, who sends results first.

use crate::event::{Event, Observer};
use crate::running::TestRun;
use crate::sampler::LocalStream;
use crate::stream::{DataSock, Stream, UdpOptions};
use crate::summary::{EndInputs, build_end, local_results};
use std::path::Path;
use std::time::Duration;
use wireperf_protocol::schema::{Start, TestReport};
use wireperf_protocol::{ExchangeResults, Protocol, TestParams};
use wireperf_sys::CpuUtil;

/// Which end of the test this host is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Role {
    /// Opened the control connection; sends TEST_END.
    Client,
    /// Accepted it.
    Server,
}

/// The streams of one test as both ends see them, from the parameters alone.
#[derive(Clone, Debug)]
pub(crate) struct StreamPlan {
    role: Role,
    total: usize,
    parallel: usize,
    bidirectional: bool,
    reverse: bool,
    omit: Duration,
    time: Duration,
    bytes: u64,
    blocks: u64,
    /// UDP: a sender cannot stop at the budget (see [`StreamPlan::run`]).
    udp: bool,
}

impl StreamPlan {
    /// The plan for `p` on this host.
    pub(crate) fn new(p: &TestParams, role: Role) -> Self {
        Self {
            role,
            total: p.total_streams() as usize,
            parallel: p.parallel as usize,
            bidirectional: p.bidirectional,
            reverse: p.reverse,
            omit: Duration::from_secs(u64::from(p.omit)),
            time: Duration::from_secs(u64::from(p.time)),
            bytes: p.num,
            blocks: p.blockcount,
            udp: p.protocol == Protocol::Udp,
        }
    }

    /// Data streams in the test (both directions of `--bidir`).
    pub(crate) fn total(&self) -> usize {
        self.total
    }

    /// True when this host sends on stream `i` (creation order). The client sends on every
    /// stream, on none with `-R`, and on the first `-P` of them with `--bidir`; the server
    /// receives where the client sends.
    pub(crate) fn sends(&self, i: usize) -> bool {
        let client_sends = if self.bidirectional { i < self.parallel } else { !self.reverse };
        match self.role {
            Role::Client => client_sends,
            Role::Server => !client_sends,
        }
    }

    /// `--bidir`: the first this many streams are one direction, the rest the other.
    pub(crate) fn bidir_split(&self) -> Option<usize> {
        self.bidirectional.then_some(self.parallel)
    }

    /// The `-O` period.
    pub(crate) fn omit(&self) -> Duration {
        self.omit
    }

    /// How long the test runs from its start, omit period included; `None` for a test
    /// bounded by `-n`/`-k` instead of time.
    pub(crate) fn length(&self) -> Option<Duration> {
        (!self.time.is_zero()).then(|| self.omit + self.time)
    }

    /// Wraps data socket `i` as a stream going the planned way, and announces it.
    pub(crate) fn stream(&self, i: usize, sock: DataSock, start: &mut Start, obs: &mut dyn Observer) -> Stream {
        let s = Stream::new(i, sock, self.sends(i));
        obs.event(Event::StreamConnected(&s.connected));
        start.connected.push(s.connected.clone());
        s
    }

    /// The running phase over the connected streams. The client holds both `-n`/`-k` budgets:
    /// it is the side that ends the test (TEST_END) when one is spent, sending or receiving.
    /// A server sending TCP (`-R`, `--bidir`) stops writing when its direction's budget is
    /// spent, as iperf3's sender does, so the client reads the budget and not whatever the
    /// server wrote until TEST_END arrived. A UDP server keeps sending until TEST_END (iperf3's
    /// paced sender does too): a datagram lost on the path would otherwise leave the client
    /// short of its budget, waiting forever.
    pub(crate) fn run(&self, streams: Vec<Stream>, interval: Option<Duration>) -> TestRun {
        let run = TestRun::new(streams, interval, self.bidir_split());
        let omitting = !self.omit.is_zero();
        match self.role {
            Role::Client => run.with_budgets(self.bytes, self.blocks, omitting),
            Role::Server if !self.udp => run.with_send_budget(self.bytes, self.blocks, omitting),
            Role::Server => run,
        }
    }
}

/// `start.sndbuf_actual`/`rcvbuf_actual`: what the kernel gave the first data socket.
pub(crate) fn note_buffers(start: &mut Start, first: &Stream) {
    start.sndbuf_actual = wireperf_sys::sockopt::send_buffer(first.socket_ref()).ok().map(|b| b as u64);
    start.rcvbuf_actual = wireperf_sys::sockopt::recv_buffer(first.socket_ref()).ok().map(|b| b as u64);
}

/// The socket options of this side's UDP data sockets.
pub(crate) fn udp_options(p: &TestParams, bind_dev: Option<&str>) -> UdpOptions {
    UdpOptions {
        window: p.window,
        tos: p.tos,
        fqrate: p.fqrate,
        dont_fragment: p.dont_fragment,
        bind_dev: bind_dev.map(str::to_string),
        default_rcvbuf: crate::stream::default_udp_recv_buffer(p.parallel),
    }
}

/// This side's half of a finished test, read once after its streams stopped, so the results
/// it sends and the report it prints come from the same figures.
pub(crate) struct Finished {
    locals: Vec<LocalStream>,
    cpu: CpuUtil,
    congestion: Option<String>,
    bidir_split: Option<usize>,
}

impl Finished {
    /// Takes the final totals of `run` (after `TestRun::finish`) and this side's CPU use.
    pub(crate) fn new(run: &TestRun, cpu: CpuUtil, plan: &StreamPlan) -> Self {
        Self { locals: run.locals(), cpu, congestion: run.congestion(), bidir_split: plan.bidir_split() }
    }

    fn inputs<'a>(&'a self, peer: Option<&'a ExchangeResults>) -> EndInputs<'a> {
        EndInputs {
            streams: &self.locals,
            peer,
            cpu: self.cpu,
            congestion: self.congestion.clone(),
            bidir_split: self.bidir_split,
        }
    }

    /// The results message for the peer (`peer`: its results when they came first).
    pub(crate) fn results(&self, peer: Option<&ExchangeResults>) -> ExchangeResults {
        local_results(&self.inputs(peer))
    }

    /// Fills the end of `report` (iperf3's `end`, the `-F` file's `diskfile` figures, wireperf's
    /// per-stream extras, every interval) and hands it to the observer.
    pub(crate) fn report(
        &self,
        report: &mut TestReport,
        run: &mut TestRun,
        peer: Option<&ExchangeResults>,
        file: Option<&Path>,
        obs: &mut dyn Observer,
    ) {
        report.end = build_end(&self.inputs(peer));
        if let Some(f) = file {
            crate::diskfile::add_diskfile(&mut report.end, f);
        }
        crate::extras::attach(&mut report.end, &run.streams);
        report.intervals = std::mem::take(&mut run.intervals);
        obs.event(Event::End(report));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(parallel: u32, reverse: bool, bidirectional: bool) -> TestParams {
        TestParams { parallel, reverse, bidirectional, ..Default::default() }
    }

    fn senders(p: &TestParams, role: Role) -> Vec<bool> {
        let plan = StreamPlan::new(p, role);
        (0..plan.total()).map(|i| plan.sends(i)).collect()
    }

    #[test]
    fn each_stream_has_exactly_one_sender() {
        for p in [params(2, false, false), params(2, true, false), params(3, false, true), params(1, false, true)] {
            let c = senders(&p, Role::Client);
            let s = senders(&p, Role::Server);
            assert_eq!(c.len(), p.total_streams() as usize);
            assert!(c.iter().zip(&s).all(|(a, b)| a != b), "{p:?}: {c:?} vs {s:?}");
        }
    }

    #[test]
    fn client_sends_normally_receives_with_reverse_and_sends_first_half_of_bidir() {
        assert_eq!(senders(&params(2, false, false), Role::Client), [true, true]);
        assert_eq!(senders(&params(2, true, false), Role::Client), [false, false]);
        assert_eq!(senders(&params(2, false, true), Role::Client), [true, true, false, false]);
        assert_eq!(StreamPlan::new(&params(2, false, true), Role::Server).bidir_split(), Some(2));
        assert_eq!(StreamPlan::new(&params(2, true, false), Role::Server).bidir_split(), None);
    }

    #[test]
    fn length_includes_omit_and_is_absent_for_byte_bounded_tests() {
        let p = TestParams { time: 10, omit: 2, ..Default::default() };
        assert_eq!(StreamPlan::new(&p, Role::Client).length(), Some(Duration::from_secs(12)));
        let p = TestParams { time: 0, num: 1000, ..Default::default() };
        assert_eq!(StreamPlan::new(&p, Role::Server).length(), None);
    }
}
