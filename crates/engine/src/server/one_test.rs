//! One test on the server side, on its own thread.
//!
//! The loop is the shared [`driver`](crate::driver); this is the server's side of it: it
//! answers the client's cookie, checks the parameters against its limits, accepts the data
//! connections the client opens (UDP: answers their handshakes), runs until the client's
//! TEST_END, and answers the client's results with its own.

use crate::config::ServerConfig;
use crate::ctrl::{Ctrl, Wake};
use crate::driver::{self, ControlLoop, Measured, Step};
use crate::error::EngineError;
use crate::event::{Event, Observer, Outcome, ServerOutput};
use crate::net::{self, TcpOptions};
use crate::running::TestRun;
use crate::session::{Finished, Role, StreamPlan, note_buffers, udp_options};
use crate::start;
use crate::stream::{self, DataSock, Stream, StreamSpec};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use wireperf_protocol::cookie::COOKIE_SIZE;
use wireperf_protocol::schema::{HostPort, TestReport};
use wireperf_protocol::server::{ServerError, ServerEvent, ServerSession};
use wireperf_protocol::{ExchangeResults, IperfErrno, Protocol, TestParams};
use wireperf_sys::CpuSampler;

/// Runs one test on an accepted control connection whose cookie was already read.
pub(super) fn serve_test(
    ctrl: Ctrl,
    addr: SocketAddr,
    cookie: [u8; COOKIE_SIZE],
    cfg: &ServerConfig,
    obs: &mut dyn Observer,
    accepting: &AtomicBool,
) -> Outcome {
    let mut t = ServerTest::new(ctrl, addr, cfg, obs, accepting);
    let error = t.run(cookie).err().map(|f| t.answer(f));
    accepting.store(false, Ordering::Release);
    Outcome { report: std::mem::take(&mut t.report), error }
}

/// How long a refused test keeps its data connections open for the client to read why.
const REFUSAL_LINGER: Duration = Duration::from_secs(2);

/// Waits (bounded) for the client to close the control connection after a mid-test refusal.
///
/// The stream threads keep reading meanwhile. Closing the data sockets at once would reset
/// them under a client that is still writing, and a stock iperf3 client then reports
/// "unable to write to stream socket: Broken pipe" instead of the reason it was just sent.
fn linger_for_client(ctrl: &Ctrl) {
    let until = Instant::now() + REFUSAL_LINGER;
    while let Some(wake) = ctrl.wait(Some(until)) {
        if matches!(wake, Wake::CtrlEof | Wake::CtrlError(_) | Wake::Interrupt) {
            return;
        }
    }
}

/// Why a test ended early, and whether the client may still be told why through the session
/// (not when the control connection failed, the client terminated, or the server did).
struct Failure {
    error: EngineError,
    answer: bool,
}

impl Failure {
    /// A failure the client is not told about.
    fn quiet(error: EngineError) -> Self {
        Self { error, answer: false }
    }
}

impl From<EngineError> for Failure {
    fn from(error: EngineError) -> Self {
        Self { error, answer: true }
    }
}

impl From<ServerError> for Failure {
    fn from(e: ServerError) -> Self {
        EngineError::from(e).into()
    }
}

struct ServerTest<'a> {
    cfg: &'a ServerConfig,
    accepting: &'a AtomicBool,
    addr: SocketAddr,
    /// The test's own clock, which the session's timeouts count from.
    t0: Instant,
    report: TestReport,
    obs: &'a mut dyn Observer,
    params: Option<TestParams>,
    plan: Option<StreamPlan>,
    m: Measured,
    pending: Vec<(u64, TcpStream)>,
    rate_samples: std::collections::VecDeque<(Instant, u64)>,
    /// The client's `server_affinity` pin, undone when the test ends (this is dropped).
    pinned: Option<wireperf_sys::Pinned>,
    session: ServerSession,
    /// Dropped after the streams.
    ctrl: Ctrl,
}

impl<'a> ServerTest<'a> {
    fn new(
        ctrl: Ctrl,
        addr: SocketAddr,
        cfg: &'a ServerConfig,
        obs: &'a mut dyn Observer,
        accepting: &'a AtomicBool,
    ) -> Self {
        let t0 = Instant::now();
        let limits = super::policy::session_limits(cfg);
        Self {
            cfg,
            accepting,
            addr,
            t0,
            report: TestReport { start: start::base_start(), ..Default::default() },
            obs,
            params: None,
            plan: None,
            m: Measured::default(),
            pending: Vec::new(),
            rate_samples: Default::default(),
            pinned: None,
            session: ServerSession::new(t0.elapsed(), limits),
            ctrl,
        }
    }

    fn run(&mut self, cookie: [u8; COOKIE_SIZE]) -> Result<(), Failure> {
        let (addr, cfg) = (self.addr, self.cfg);
        let host = net::show_ip(addr.ip());
        self.obs.event(Event::Accepted { host: host.clone(), port: addr.port() });
        self.report.start.accepted_connection = Some(HostPort { host, port: addr.port() });
        self.report.start.timestamp = Some(start::now_timestamp());
        if let Some(ka) = &cfg.cntl_ka {
            let _ = wireperf_sys::sockopt::set_keepalive(self.ctrl.socket(), ka);
        }
        // Without NODELAY, Nagle holds TEST_START/TEST_RUNNING behind the unacknowledged
        // CREATE_STREAMS byte until the client's delayed ACK (~40 ms on Linux), so the client
        // would start that much later than this side's clock.
        let _ = wireperf_sys::sockopt::set_nodelay(self.ctrl.socket(), true);
        self.session.handle_input(self.t0.elapsed(), &cookie)?;
        driver::drive(self)
    }

    /// Tells the client why the test failed, as 3.21 servers do, unless it is gone or it ended
    /// the test.
    fn answer(&mut self, f: Failure) -> EngineError {
        let e = f.error;
        let tell = !matches!(e, EngineError::ClientTerminated)
            && !matches!(e, EngineError::ServerProtocol(ServerError::ControlClosed));
        if f.answer {
            if tell {
                self.session.refuse(e.errno(), e.os_errno());
            }
            if self.ctrl.send(&self.session.take_output()).is_ok() && tell && self.m.run.is_some() {
                linger_for_client(&self.ctrl);
            }
        }
        e
    }

    /// The client's parameters: checked, this test's threads pinned when asked, and the data
    /// connections awaited (TCP) or their handshakes answered and the test begun (UDP).
    fn on_params(&mut self, p: TestParams) -> Result<(), Failure> {
        self.validate(&p)?;
        // As 3.22 right after the parameters: this test's threads (the control reader, this
        // one and so the stream threads it starts) on the client's CPU until the test ends.
        if let Some(cpu) = p.server_affinity {
            let ctrl = &self.ctrl;
            let pin = wireperf_sys::Pinned::to(cpu as usize).and_then(|pin| {
                ctrl.pin_reader(cpu as usize)?;
                Ok(pin)
            });
            self.pinned = Some(pin.map_err(EngineError::Affinity)?);
        }
        let start = &mut self.report.start;
        start.target_bitrate = Some(p.bandwidth.unwrap_or(0));
        start.fq_rate = Some(p.fqrate.unwrap_or(0));
        start.sock_bufsize = Some(u64::from(p.window.unwrap_or(0)));
        start.test_start = Some(start::test_start(&p, self.cfg.interval));
        let local = self.ctrl.socket().local_addr().ok().filter(|_| p.wireperf_latency);
        if let Some(offer) = local.and_then(|local| self.obs.latency_offer(self.addr, local)) {
            self.session.offer_latency(&offer)?;
        }
        let udp = p.protocol == Protocol::Udp;
        self.plan = Some(StreamPlan::new(&p, Role::Server));
        self.params = Some(p);
        if !udp {
            self.report.start.tcp_mss_default = Some(0);
            self.accepting.store(true, Ordering::Release);
            self.session.accept_params(self.t0.elapsed())?;
            return Ok(());
        }
        // UDP: the first listening socket must exist before CREATE_STREAMS goes out, or the
        // client's first handshake datagram finds no one.
        let local = self.ctrl.socket().local_addr().map_err(EngineError::Listen)?;
        let first = stream::server_listen(local, self.cfg.bind_dev.as_deref())?;
        self.session.accept_params(self.t0.elapsed())?;
        let out = self.session.take_output();
        self.ctrl.send(&out)?;
        let socks = self.udp_handshakes(first)?;
        Ok(self.begin(socks)?)
    }

    /// TEST_END: stop sending and start the results exchange.
    fn test_end(&mut self) -> Result<(), Failure> {
        self.m.stamp_end();
        if let Some(r) = self.m.run.as_mut() {
            r.stop_senders();
            for s in r.streams.iter().filter(|s| s.sender) {
                s.finish_sending();
            }
        }
        Ok(self.session.begin_exchange(self.t0.elapsed())?)
    }

    /// The client's results: wait until each receiving stream has what the client says it
    /// sent (exactness), then answer with this side's results; it has the client's already.
    fn answer_results(&mut self, peer: &ExchangeResults) -> Result<(), Failure> {
        let (Some(p), Some(plan)) = (self.params.as_ref(), self.plan.as_ref()) else {
            return Err(EngineError::Timeout("for streams").into());
        };
        let sent = |s: &Stream| {
            let p = peer.streams.iter().find(|p| p.id == s.wire_id)?;
            if s.is_udp() { u64::try_from(p.packets).ok() } else { Some(p.bytes) }
        };
        let done = self.m.finish(plan, &sent, self.obs)?;
        let r = self.m.run()?;
        done.report(&mut self.report, r, Some(peer), self.cfg.file.as_deref(), self.obs);
        let mut mine = done.results(Some(peer));
        if p.get_server_output {
            match self.obs.server_output() {
                Some(ServerOutput::Text(t)) => mine.server_output_text = Some(t),
                Some(ServerOutput::Json(j)) => mine.server_output_json = Some(j),
                None => {}
            }
        }
        if p.wireperf_watch {
            mine.watch = self.obs.watch_results();
        }
        Ok(self.session.send_results(self.t0.elapsed(), &mine)?)
    }

    /// Refuses what this server cannot or will not run, with the code a stock client knows.
    fn validate(&self, p: &TestParams) -> Result<(), EngineError> {
        super::policy::check_params(self.cfg, p)?;
        if let Some(limit) = self.cfg.bitrate_limit {
            let per = p.bandwidth.unwrap_or(0).max(p.fqrate.unwrap_or(0));
            let total = per.saturating_mul(u64::from(p.total_streams()));
            if total > limit {
                return Err(EngineError::ServerReported { i_errno: IperfErrno::TOTALRATE, errno: None });
            }
        }
        Ok(())
    }

    /// Ends a test whose total rate, averaged over the last `--server-bitrate-limit` window
    /// (default 5 s, as iperf3), exceeds the limit. Tests shorter than the window are only
    /// held to the limit they asked for (checked in [`Self::validate`]).
    fn check_rate(&mut self) -> Result<(), EngineError> {
        let (Some(limit), Some(r)) = (self.cfg.bitrate_limit, self.m.run.as_ref()) else {
            return Ok(());
        };
        let now = Instant::now();
        let window = self.cfg.bitrate_limit_window;
        self.rate_samples.push_back((now, r.total_bytes()));
        while self.rate_samples.len() > 2 && self.rate_samples[1].0 + window <= now {
            self.rate_samples.pop_front();
        }
        if let (Some(&(t0, b0)), Some(&(t1, b1))) = (self.rate_samples.front(), self.rate_samples.back()) {
            let secs = t1.duration_since(t0).as_secs_f64();
            if secs >= window.as_secs_f64() * 0.95 && b1.saturating_sub(b0) as f64 * 8.0 / secs > limit as f64 {
                return Err(EngineError::ServerReported { i_errno: IperfErrno::TOTALRATE, errno: None });
            }
        }
        Ok(())
    }

    /// Takes a data connection while streams are being created; when all have arrived, starts
    /// the test.
    fn attach(&mut self, sock: TcpStream, seq: u64) -> Result<(), EngineError> {
        let Some(p) = self.params.as_ref() else { return Ok(()) };
        if !self.session.is_creating_streams() {
            return Ok(());
        }
        let o = TcpOptions {
            window: p.window,
            nodelay: p.nodelay,
            congestion: p.congestion.clone(),
            tos: p.tos,
            user_timeout: self.cfg.snd_timeout,
            ..Default::default()
        };
        net::apply_common(&sock, &o)?;
        self.pending.push((seq, sock));
        if self.pending.len() < p.total_streams() as usize {
            return Ok(());
        }
        self.accepting.store(false, Ordering::Release);
        // Direction is decided by the order the client opened the connections, which the
        // accept sequence preserves (cookie reads may finish in any order).
        self.pending.sort_by_key(|(seq, _)| *seq);
        let socks = std::mem::take(&mut self.pending).into_iter().map(|(_, s)| DataSock::Tcp(s)).collect();
        self.begin(socks)
    }

    /// The UDP stream handshakes, in the client's order, on the listener bound before
    /// CREATE_STREAMS. The control connection is watched meanwhile: a client that gives up
    /// or an interrupt ends the wait.
    fn udp_handshakes(&mut self, first: std::net::UdpSocket) -> Result<Vec<DataSock>, EngineError> {
        let Some(p) = self.params.clone() else { return Ok(Vec::new()) };
        let opts = udp_options(&p, self.cfg.bind_dev.as_deref());
        let deadline = Instant::now() + self.cfg.ctrl_timeout;
        let ctrl = &self.ctrl;
        let mut poll = || match ctrl.wait(Some(Instant::now())) {
            None | Some(Wake::BudgetReached) | Some(Wake::DataConn(..)) => Ok(()),
            // Nothing may come on ctrl before TEST_START but CLIENT_TERMINATE.
            Some(Wake::CtrlData(_)) | Some(Wake::CtrlEof) => Err(EngineError::ClientTerminated),
            Some(Wake::CtrlError(err)) => Err(EngineError::Ctrl { op: "read from", err }),
            Some(Wake::StreamFailed(e)) => Err(e),
            Some(Wake::Interrupt) => Err(EngineError::ServerTerminated),
        };
        let socks = stream::server_handshakes(first, p.total_streams() as usize, &opts, deadline, &mut poll)?;
        Ok(socks.into_iter().map(DataSock::Udp).collect())
    }

    /// All data streams are up (in the client's order): send TEST_START/TEST_RUNNING and start
    /// the stream threads.
    fn begin(&mut self, socks: Vec<DataSock>) -> Result<(), EngineError> {
        let (Some(p), Some(plan)) = (self.params.as_ref(), self.plan.as_ref()) else { return Ok(()) };
        let mut streams = Vec::with_capacity(socks.len());
        let udp_opts = udp_options(p, self.cfg.bind_dev.as_deref());
        for (i, sock) in socks.into_iter().enumerate() {
            if let DataSock::Udp(u) = &sock {
                stream::apply_udp_options(u, &udp_opts, plan.sends(i))?;
            }
            let s = plan.stream(i, sock, &mut self.report.start, self.obs);
            if i == 0 {
                note_buffers(&mut self.report.start, &s);
            }
            streams.push(s);
        }
        let mut run = plan.run(streams, self.cfg.interval);
        self.m.cpu = CpuSampler::start().ok();
        let now = Instant::now();
        self.session.start_test(self.t0.elapsed(), plan.length())?;
        self.ctrl.send(&self.session.take_output())?;
        if p.wireperf_watch {
            self.obs.event(Event::WatchRequested);
        }
        self.obs.event(Event::TestStart(&self.report.start));
        // iperf3's server honours the client's `-Z` for `-R` with sendfile.
        let zc = crate::SendMode::Sendfile;
        // The client's `-A N,M` overrides the server's own `-A`, as in 3.22.
        let cpu = p.server_affinity.map(|c| c as usize).or(self.cfg.affinity);
        let spec = StreamSpec::from_params(p, self.cfg.rcv_timeout, cpu, zc, self.cfg.file.clone(), &self.cfg.tuning);
        run.start(now, plan.omit(), &spec, &self.ctrl.notifier())?;
        self.m.run = Some(run);
        Ok(())
    }

    /// The client or an interrupt ended the test early: report what was measured.
    fn finish_partial(&mut self) {
        let (Some(r), Some(plan)) = (self.m.run.as_mut(), self.plan.as_ref()) else { return };
        let now = Instant::now();
        r.stop_senders();
        for s in r.streams.iter_mut() {
            s.stop(true);
        }
        r.finish(now, self.obs);
        let cpu = self.m.cpu.and_then(|c| c.sample().ok()).unwrap_or_default();
        // No `-F` figures for a test cut short, as before the end assembly was shared.
        Finished::new(r, cpu, plan).report(&mut self.report, r, None, None, self.obs);
    }
}

impl ControlLoop for ServerTest<'_> {
    type Event = ServerEvent;
    type Error = Failure;

    fn ctrl(&mut self) -> &mut Ctrl {
        &mut self.ctrl
    }

    fn take_output(&mut self) -> Vec<u8> {
        self.session.take_output()
    }

    fn deadline(&self) -> Option<Instant> {
        let session = self.session.poll_timeout().map(|d| self.t0 + d);
        let run = self.m.run.as_ref().filter(|_| self.m.t_end.is_none()).and_then(TestRun::next_deadline);
        match (session, run) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn woken(&mut self, wake: Option<Wake>) -> Result<(), Failure> {
        match wake {
            Some(Wake::CtrlData(bytes)) => self.session.handle_input(self.t0.elapsed(), &bytes)?,
            Some(Wake::CtrlEof) => self.session.handle_eof()?,
            Some(Wake::CtrlError(err)) => return Err(Failure::quiet(EngineError::Ctrl { op: "read from", err })),
            Some(Wake::DataConn(sock, seq)) => self.attach(sock, seq)?,
            Some(Wake::StreamFailed(e)) => return Err(e.into()),
            Some(Wake::Interrupt) => {
                self.session.terminate();
                let _ = self.ctrl.send(&self.session.take_output());
                self.finish_partial();
                return Err(Failure::quiet(EngineError::ServerTerminated));
            }
            Some(Wake::BudgetReached) | None => {}
        }
        Ok(())
    }

    fn clock(&mut self) -> Result<(), Failure> {
        self.session.handle_timeout(self.t0.elapsed())?;
        if self.m.t_end.is_none() {
            if let Some(r) = self.m.run.as_mut() {
                r.on_clock(Instant::now(), self.obs);
            }
            self.check_rate()?;
        }
        Ok(())
    }

    fn next_event(&mut self) -> Option<ServerEvent> {
        self.session.poll_event()
    }

    fn on_event(&mut self, event: ServerEvent) -> Result<Step, Failure> {
        match event {
            ServerEvent::Cookie(c) => self.report.start.cookie = Some(c.as_display()),
            ServerEvent::Params(p) => self.on_params(*p)?,
            ServerEvent::TestEnd => self.test_end()?,
            ServerEvent::ClientResults(peer) => self.answer_results(&peer)?,
            ServerEvent::IperfDone => {
                let out = self.session.take_output();
                self.ctrl.send(&out)?;
                return Ok(Step::Done);
            }
            ServerEvent::ClientTerminate => {
                self.finish_partial();
                return Err(Failure::quiet(EngineError::ClientTerminated));
            }
        }
        Ok(Step::Continue)
    }
}
