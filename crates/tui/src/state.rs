//! What the live view shows, folded from the engine's events.
//!
//! Kept apart from drawing and from the terminal so a known event sequence can be replayed in a
//! unit test: the state is plain data, [`LiveState::apply`] is the only way events change it.

use crate::hosts::{FarHost, HostCpu, HostsNow, RetransmitSplit};
use wireperf_engine::Event;
use wireperf_protocol::outcome::{Flow, TestOutcome};
use wireperf_protocol::schema::{CpuUtilization, Interval, IntervalStream, Start, TestReport};

/// Where the test is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Before the control connection is up.
    Connecting,
    /// Control connection up, data streams being set up.
    Setup,
    /// Inside the `-O` period (intervals not counted in the result).
    Omitting,
    /// Measuring.
    Running,
    /// The last interval is in; results are being exchanged.
    Finishing,
    /// The report is complete.
    Done,
}

impl Phase {
    /// The word shown in the header.
    pub fn label(self) -> &'static str {
        match self {
            Self::Connecting => "connecting",
            Self::Setup => "starting streams",
            Self::Omitting => "omitting (-O)",
            Self::Running => "running",
            Self::Finishing => "exchanging results",
            Self::Done => "done",
        }
    }
}

/// One data stream's history.
#[derive(Clone, Debug, Default)]
pub struct StreamSeries {
    /// Stream id (iperf3's `[  5]`).
    pub id: i32,
    /// This host sends on it.
    pub sender: bool,
    /// (seconds since the first interval began, bit/s).
    pub points: Vec<(f64, f64)>,
    /// The latest interval's figures.
    pub last: IntervalStream,
    /// Retransmits summed over the intervals so far (TCP sender only).
    pub retransmits: Option<u64>,
}

/// How the test is bounded, from `start.test_start`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Bounds {
    /// `-t` seconds (0 when bounded by `-n`/`-k`).
    pub duration: u32,
    /// `-O` seconds.
    pub omit: u32,
    /// `-n` bytes (0 = not set).
    pub bytes: u64,
    /// `-k` blocks (0 = not set).
    pub blocks: u64,
}

/// UDP datagrams this host received so far, as its intervals counted them.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct UdpSoFar {
    /// Lost (gaps in the sequence numbers).
    pub lost: i64,
    /// Expected (received plus lost).
    pub packets: i64,
    /// The latest interval's jitter, ms.
    pub jitter_ms: f64,
}

/// Everything the view draws.
#[derive(Clone, Debug, Default)]
pub struct LiveState {
    /// The server as typed and its port.
    pub target: Option<(String, u16)>,
    /// `TCP` or `UDP` once the test starts.
    pub protocol: Option<String>,
    /// How the test ends.
    pub bounds: Bounds,
    /// Where the test is.
    pub phase: Option<Phase>,
    /// Per data stream, in the engine's order.
    pub streams: Vec<StreamSeries>,
    /// Sum of the first direction: (seconds, bit/s).
    pub sum: Vec<(f64, f64)>,
    /// `--bidir`: sum of the other direction.
    pub sum_reverse: Vec<(f64, f64)>,
    /// Seconds covered by the intervals so far (omitted ones included).
    pub elapsed: f64,
    /// Bytes moved in the first direction so far (for `-n` progress).
    pub bytes: u64,
    /// This process's CPU use per interval: (seconds, percent of one core).
    pub local_cpu: Vec<(f64, f64)>,
    /// Both hosts' CPU over the whole test, known once the report is complete.
    pub final_cpu: Option<CpuUtilization>,
    /// This host's CPU over the last interval, from the [`HostProbe`](crate::HostProbe).
    pub local_host: Option<HostCpu>,
    /// The far host's CPU, known at the end when the server is a wireperf.
    pub far: FarHost,
    /// The retransmits so far split into real and spurious (DSACK counters).
    pub split: Option<RetransmitSplit>,
    /// The client sends (not `-R`; `--bidir` counts as sending: its live retransmits are ours).
    pub client_sends: bool,
    /// `-R`/`--bidir` UDP: what this host received so far.
    pub udp_received: Option<UdpSoFar>,
    /// The finished test's directions (receiver's loss and jitter for UDP), from the report.
    pub flows: Vec<Flow>,
    /// When set, the chart shows only this many points of each series (the `p` key).
    pub frozen_at: Option<usize>,
}

impl LiveState {
    /// A state for a client about to connect.
    pub fn new() -> Self {
        Self { phase: Some(Phase::Connecting), client_sends: true, ..Self::default() }
    }

    /// Folds one engine event into the state.
    pub fn apply(&mut self, ev: &Event<'_>) {
        match ev {
            Event::Connecting { host, port } => {
                self.target = Some(((*host).to_string(), *port));
                self.phase = Some(Phase::Connecting);
            }
            Event::ControlConnected { .. } | Event::StreamConnected(_) => self.phase = Some(Phase::Setup),
            Event::TestStart(start) => self.start(start),
            Event::OmitEnded => self.phase = Some(Phase::Running),
            Event::Interval(i) => self.interval(i),
            Event::End(report) => self.end(report),
            Event::Listening { .. } | Event::Accepted { .. } | Event::WatchRequested | Event::TestFailed(_) => {}
        }
    }

    fn start(&mut self, start: &Start) {
        if let Some(ts) = &start.test_start {
            self.protocol = Some(ts.protocol.clone());
            self.bounds = Bounds { duration: ts.duration, omit: ts.omit, bytes: ts.bytes, blocks: ts.blocks };
            self.client_sends = ts.reverse == 0 || ts.bidir.unwrap_or(0) != 0;
        }
        self.phase = Some(if self.bounds.omit > 0 { Phase::Omitting } else { Phase::Running });
    }

    fn interval(&mut self, i: &Interval) {
        let secs = i.sum.seconds.max(i.streams.first().map_or(0.0, |s| s.seconds));
        let x = self.elapsed + secs;
        for s in &i.streams {
            let series = match self.streams.iter().position(|t| t.id == s.socket && t.sender == s.sender) {
                Some(at) => &mut self.streams[at],
                None => {
                    self.streams.push(StreamSeries { id: s.socket, sender: s.sender, ..StreamSeries::default() });
                    let last = self.streams.len() - 1;
                    &mut self.streams[last]
                }
            };
            series.points.push((x, s.bits_per_second));
            if let Some(r) = s.retransmits {
                *series.retransmits.get_or_insert(0) += r;
            }
            series.last = s.clone();
        }
        for sum in std::iter::once(&i.sum).chain(&i.sum_bidir_reverse) {
            if let (false, false, Some(jitter)) = (sum.sender, sum.omitted, sum.jitter_ms) {
                let u = self.udp_received.get_or_insert_with(UdpSoFar::default);
                u.lost += sum.lost_packets.unwrap_or(0);
                u.packets += sum.packets.unwrap_or(0);
                u.jitter_ms = jitter;
            }
        }
        self.sum.push((x, i.sum.bits_per_second));
        if let Some(rev) = &i.sum_bidir_reverse {
            self.sum_reverse.push((x, rev.bits_per_second));
        }
        if !i.sum.omitted {
            self.bytes += i.sum.bytes;
        }
        self.elapsed = x;
        let total = f64::from(self.bounds.omit + self.bounds.duration);
        if self.phase != Some(Phase::Omitting) && self.bounds.duration > 0 && x + 1e-3 >= total {
            self.phase = Some(Phase::Finishing);
        }
        if self.phase == Some(Phase::Omitting) && !i.sum.omitted {
            self.phase = Some(Phase::Running);
        }
    }

    fn end(&mut self, report: &TestReport) {
        self.final_cpu = report.end.cpu_utilization_percent.clone();
        self.flows = TestOutcome::from_report(report).flows;
        if self.far == FarHost::Waiting {
            self.far = FarHost::NotSeen;
        }
        self.phase = Some(Phase::Done);
    }

    /// The sender's retransmits the split is taken of: the live sum while the test runs, the
    /// report's once it is complete (a `-R` client sees the server's only then).
    pub fn split_basis(&self) -> Option<u64> {
        match self.flows.first() {
            Some(f) => f.retransmits,
            None if self.client_sends => self.retransmits(),
            None => None,
        }
    }

    /// Folds a reading of the hosts in (a host that was not read keeps its last figure).
    pub fn record_hosts(&mut self, now: HostsNow) {
        if now.local.is_some() {
            self.local_host = now.local;
        }
        if now.split.is_some() {
            self.split = now.split;
        }
    }

    /// Records this process's CPU use over the interval that just ended.
    pub fn record_local_cpu(&mut self, percent: f64) {
        self.local_cpu.push((self.elapsed, percent));
    }

    /// Toggles the chart's pause; the figures and the test go on.
    pub fn toggle_pause(&mut self) {
        self.frozen_at = match self.frozen_at {
            Some(_) => None,
            None => Some(self.sum.len()),
        };
    }

    /// Seconds left in a time-bounded test, counting `since_last` seconds past the last interval.
    pub fn time_left(&self, since_last: f64) -> Option<f64> {
        if self.bounds.duration == 0 {
            return None;
        }
        let total = f64::from(self.bounds.omit + self.bounds.duration);
        Some((total - self.elapsed - since_last).max(0.0))
    }

    /// The points of `series` the chart shows (all of them unless paused).
    pub fn visible<'a>(&self, series: &'a [(f64, f64)]) -> &'a [(f64, f64)] {
        match self.frozen_at {
            Some(n) => &series[..n.min(series.len())],
            None => series,
        }
    }

    /// Retransmits of all streams so far, when any stream reports them.
    pub fn retransmits(&self) -> Option<u64> {
        self.streams.iter().filter_map(|s| s.retransmits).reduce(|a, b| a + b)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use wireperf_protocol::schema::{IntervalSum, TestStart};

    pub(crate) fn tcp_start(streams: u32, duration: u32) -> Start {
        Start {
            test_start: Some(TestStart {
                protocol: "TCP".into(),
                num_streams: streams,
                duration,
                ..TestStart::default()
            }),
            ..Start::default()
        }
    }

    /// A one-second TCP interval with `rates` per stream (ids 5, 7, …).
    pub(crate) fn tcp_interval(at: f64, rates: &[f64]) -> Interval {
        let streams: Vec<IntervalStream> = rates
            .iter()
            .enumerate()
            .map(|(n, &bps)| IntervalStream {
                socket: 5 + 2 * n as i32,
                start: at,
                end: at + 1.0,
                seconds: 1.0,
                bytes: (bps / 8.0) as u64,
                bits_per_second: bps,
                retransmits: Some(n as u64 + 1),
                snd_cwnd: Some(1_310_720),
                rtt: Some(2500),
                sender: true,
                ..IntervalStream::default()
            })
            .collect();
        let total: f64 = rates.iter().sum();
        Interval {
            sum: IntervalSum {
                start: at,
                end: at + 1.0,
                seconds: 1.0,
                bytes: (total / 8.0) as u64,
                bits_per_second: total,
                retransmits: Some(streams.iter().filter_map(|s| s.retransmits).sum()),
                sender: true,
                ..IntervalSum::default()
            },
            streams,
            sum_bidir_reverse: None,
        }
    }

    #[test]
    fn intervals_build_per_stream_and_sum_series() {
        let mut st = LiveState::new();
        st.apply(&Event::Connecting { host: "10.0.0.1", port: 5201 });
        let start = tcp_start(2, 3);
        st.apply(&Event::TestStart(&start));
        assert_eq!(st.phase, Some(Phase::Running));
        for (n, rates) in [[1e9, 2e9], [1.5e9, 2.5e9]].iter().enumerate() {
            st.apply(&Event::Interval(&tcp_interval(n as f64, rates)));
        }
        assert_eq!(st.streams.len(), 2);
        assert_eq!(st.streams[1].points, vec![(1.0, 2e9), (2.0, 2.5e9)]);
        assert_eq!(st.sum, vec![(1.0, 3e9), (2.0, 4e9)]);
        assert_eq!(st.retransmits(), Some(2 + 4));
        assert_eq!(st.time_left(0.5), Some(0.5));
        st.apply(&Event::Interval(&tcp_interval(2.0, &[1e9, 1e9])));
        assert_eq!(st.phase, Some(Phase::Finishing));
    }

    #[test]
    fn pause_freezes_the_chart_but_not_the_figures() {
        let mut st = LiveState::new();
        st.apply(&Event::TestStart(&tcp_start(1, 10)));
        st.apply(&Event::Interval(&tcp_interval(0.0, &[1e9])));
        st.toggle_pause();
        st.apply(&Event::Interval(&tcp_interval(1.0, &[3e9])));
        assert_eq!(st.visible(&st.sum), &[(1.0, 1e9)]);
        assert_eq!(st.streams[0].last.bits_per_second, 3e9);
        st.toggle_pause();
        assert_eq!(st.visible(&st.sum).len(), 2);
    }

    #[test]
    fn reverse_test_splits_the_servers_retransmits_from_the_report() {
        let mut st = LiveState::new();
        let mut start = tcp_start(1, 2);
        if let Some(ts) = start.test_start.as_mut() {
            ts.reverse = 1;
        }
        st.apply(&Event::TestStart(&start));
        assert!(!st.client_sends);
        assert_eq!(st.split_basis(), None, "a -R client sees no retransmits live");
        let mut report = TestReport { start, ..TestReport::default() };
        let summary = |sender| wireperf_protocol::schema::Summary {
            sender,
            bytes: 1000,
            seconds: 2.0,
            retransmits: sender.then_some(9),
            ..Default::default()
        };
        report.end.sum_sent = Some(summary(true));
        report.end.sum_received = Some(summary(false));
        st.apply(&Event::End(&report));
        assert_eq!(st.split_basis(), Some(9));
        assert_eq!(st.far, FarHost::NotSeen, "no watch reply came before the end");
        st.record_hosts(HostsNow { local: None, split: Some(RetransmitSplit { real: 7, spurious: 2 }) });
        assert_eq!(st.split, Some(RetransmitSplit { real: 7, spurious: 2 }));
    }

    #[test]
    fn omit_period_is_a_phase_of_its_own() {
        let mut st = LiveState::new();
        let mut start = tcp_start(1, 2);
        if let Some(ts) = start.test_start.as_mut() {
            ts.omit = 1;
        }
        st.apply(&Event::TestStart(&start));
        assert_eq!(st.phase, Some(Phase::Omitting));
        let mut omitted = tcp_interval(0.0, &[1e9]);
        omitted.sum.omitted = true;
        st.apply(&Event::Interval(&omitted));
        assert_eq!(st.bytes, 0, "omitted bytes are not counted");
        st.apply(&Event::OmitEnded);
        assert_eq!(st.phase, Some(Phase::Running));
        assert_eq!(st.time_left(0.0), Some(2.0));
    }
}
