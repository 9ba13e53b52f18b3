//! One test on the server side, on its own thread.

use crate::config::ServerConfig;
use crate::ctrl::{Ctrl, Wake};
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
use wireperf_protocol::server::{ServerEvent, ServerSession};
use wireperf_protocol::{IperfErrno, Protocol, TestParams};
use wireperf_sys::{CpuSampler, CpuUtil};

/// How long the server waits for in-flight data after the client's results said how much was
/// sent. Generous, because it only matters when the network really is slow.
const DRAIN_LIMIT: Duration = Duration::from_secs(5);

/// Runs one test on an accepted control connection whose cookie was already read.
pub(super) fn serve_test(
    mut ctrl: Ctrl,
    addr: SocketAddr,
    cookie: [u8; COOKIE_SIZE],
    cfg: &ServerConfig,
    obs: &mut dyn Observer,
    accepting: &AtomicBool,
) -> Outcome {
    let mut report = TestReport { start: start::base_start(), ..Default::default() };
    let mut t = ServerTest {
        cfg,
        accepting,
        params: None,
        plan: None,
        run: None,
        pending: Vec::new(),
        t_end: None,
        cpu: None,
        cpu_end: None,
        started: None,
        rate_samples: Default::default(),
        pinned: None,
    };
    let error = match t.run(&mut ctrl, addr, cookie, &mut report, obs) {
        Ok(()) => None,
        Err((e, session)) => {
            // Tell the client why, as 3.21 servers do, unless it is gone or it ended the test.
            let tell = !matches!(e, EngineError::ClientTerminated)
                && !matches!(e, EngineError::ServerProtocol(wireperf_protocol::server::ServerError::ControlClosed));
            if let Some(mut s) = session {
                if tell {
                    s.refuse(e.errno(), e.os_errno());
                }
                if ctrl.send(&s.take_output()).is_ok() && tell && t.run.is_some() {
                    linger_for_client(&ctrl);
                }
            }
            Some(e)
        }
    };
    accepting.store(false, Ordering::Release);
    Outcome { report, error }
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

type Failure = (EngineError, Option<ServerSession>);

struct ServerTest<'a> {
    cfg: &'a ServerConfig,
    accepting: &'a AtomicBool,
    params: Option<TestParams>,
    plan: Option<StreamPlan>,
    run: Option<TestRun>,
    pending: Vec<(u64, TcpStream)>,
    t_end: Option<Instant>,
    cpu: Option<CpuSampler>,
    cpu_end: Option<CpuUtil>,
    started: Option<Instant>,
    rate_samples: std::collections::VecDeque<(Instant, u64)>,
    /// The client's `server_affinity` pin, undone when the test ends (this is dropped).
    pinned: Option<wireperf_sys::Pinned>,
}

impl ServerTest<'_> {
    // The failure hands the session back so the caller can tell the client why; it happens once
    // per test, so its size does not matter.
    #[allow(clippy::result_large_err)]
    fn run(
        &mut self,
        ctrl: &mut Ctrl,
        addr: SocketAddr,
        cookie: [u8; COOKIE_SIZE],
        report: &mut TestReport,
        obs: &mut dyn Observer,
    ) -> Result<(), Failure> {
        let t0 = Instant::now();
        let limits = super::policy::session_limits(self.cfg);
        let mut session = ServerSession::new(t0.elapsed(), limits);
        macro_rules! tri {
            ($e:expr) => {
                match $e {
                    Ok(v) => v,
                    Err(e) => return Err((EngineError::from(e), Some(session))),
                }
            };
        }
        let host = net::show_ip(addr.ip());
        obs.event(Event::Accepted { host: host.clone(), port: addr.port() });
        report.start.accepted_connection = Some(HostPort { host, port: addr.port() });
        report.start.timestamp = Some(start::now_timestamp());
        if let Some(ka) = &self.cfg.cntl_ka {
            let _ = wireperf_sys::sockopt::set_keepalive(ctrl.socket(), ka);
        }
        // Without NODELAY, Nagle holds TEST_START/TEST_RUNNING behind the unacknowledged
        // CREATE_STREAMS byte until the client's delayed ACK (~40 ms on Linux), so the client
        // would start that much later than this side's clock.
        let _ = wireperf_sys::sockopt::set_nodelay(ctrl.socket(), true);
        tri!(session.handle_input(t0.elapsed(), &cookie));
        loop {
            let out = session.take_output();
            tri!(ctrl.send(&out));
            let mut deadline = session.poll_timeout().map(|d| t0 + d);
            if let Some(r) = self.run.as_ref().filter(|_| self.t_end.is_none()) {
                deadline = match (deadline, r.next_deadline()) {
                    (Some(a), Some(b)) => Some(a.min(b)),
                    (a, b) => a.or(b),
                };
            }
            let wake = ctrl.wait(deadline);
            match wake {
                Some(Wake::CtrlData(bytes)) => tri!(session.handle_input(t0.elapsed(), &bytes)),
                Some(Wake::CtrlEof) => tri!(session.handle_eof()),
                Some(Wake::CtrlError(err)) => {
                    return Err((EngineError::Ctrl { op: "read from", err }, None));
                }
                Some(Wake::DataConn(sock, seq)) => tri!(self.attach(sock, seq, &mut session, t0, report, obs, ctrl)),
                Some(Wake::StreamFailed(e)) => return Err((e, Some(session))),
                Some(Wake::Interrupt) => {
                    session.terminate();
                    let _ = ctrl.send(&session.take_output());
                    self.finish_partial(report, obs);
                    return Err((EngineError::ServerTerminated, None));
                }
                Some(Wake::BudgetReached) | None => {}
            }
            tri!(session.handle_timeout(t0.elapsed()));
            if self.t_end.is_none() {
                if let Some(r) = self.run.as_mut() {
                    r.on_clock(Instant::now(), obs);
                }
                tri!(self.check_rate());
            }
            while let Some(ev) = session.poll_event() {
                match ev {
                    ServerEvent::Cookie(c) => report.start.cookie = Some(c.as_display()),
                    ServerEvent::Params(p) => {
                        if let Err(e) = self.validate(&p) {
                            return Err((e, Some(session)));
                        }
                        // As 3.22 right after the parameters: this test's threads (the control
                        // reader, this one and so the stream threads it starts) on the client's
                        // CPU until the test ends.
                        if let Some(cpu) = p.server_affinity {
                            let pin = wireperf_sys::Pinned::to(cpu as usize).and_then(|pin| {
                                ctrl.pin_reader(cpu as usize)?;
                                Ok(pin)
                            });
                            match pin {
                                Ok(pin) => self.pinned = Some(pin),
                                Err(err) => return Err((EngineError::Affinity(err), Some(session))),
                            }
                        }
                        report.start.target_bitrate = Some(p.bandwidth.unwrap_or(0));
                        report.start.fq_rate = Some(p.fqrate.unwrap_or(0));
                        report.start.sock_bufsize = Some(u64::from(p.window.unwrap_or(0)));
                        report.start.test_start = Some(start::test_start(&p, self.cfg.interval));
                        let local = ctrl.socket().local_addr().ok().filter(|_| p.wireperf_latency);
                        if let Some(offer) = local.and_then(|local| obs.latency_offer(addr, local)) {
                            tri!(session.offer_latency(&offer));
                        }
                        let udp = p.protocol == Protocol::Udp;
                        self.plan = Some(StreamPlan::new(&p, Role::Server));
                        self.params = Some(*p);
                        if !udp {
                            report.start.tcp_mss_default = Some(0);
                            self.accepting.store(true, Ordering::Release);
                            tri!(session.accept_params(t0.elapsed()));
                            continue;
                        }
                        // UDP: the first listening socket must exist before CREATE_STREAMS
                        // goes out, or the client's first handshake datagram finds no one.
                        let local = match ctrl.socket().local_addr() {
                            Ok(a) => a,
                            Err(err) => return Err((EngineError::Listen(err), Some(session))),
                        };
                        let first = tri!(stream::server_listen(local, self.cfg.bind_dev.as_deref()));
                        tri!(session.accept_params(t0.elapsed()));
                        let out = session.take_output();
                        tri!(ctrl.send(&out));
                        let socks = tri!(self.udp_handshakes(first, ctrl));
                        tri!(self.begin(socks, &mut session, t0, report, obs, ctrl));
                    }
                    ServerEvent::TestEnd => {
                        self.t_end = Some(Instant::now());
                        self.cpu_end = self.cpu.and_then(|c| c.sample().ok());
                        if let Some(r) = self.run.as_mut() {
                            r.stop_senders();
                            for s in r.streams.iter().filter(|s| s.sender) {
                                s.finish_sending();
                            }
                        }
                        tri!(session.begin_exchange(t0.elapsed()));
                    }
                    ServerEvent::ClientResults(peer) => {
                        let t_end = self.t_end.unwrap_or_else(Instant::now);
                        let Some(r) = self.run.as_mut() else {
                            return Err((EngineError::Timeout("for streams"), Some(session)));
                        };
                        // Exactness: wait until each receiving stream has what the client
                        // says it sent, then stop counting.
                        let sent = |s: &Stream| {
                            let p = peer.streams.iter().find(|p| p.id == s.wire_id)?;
                            if s.is_udp() { u64::try_from(p.packets).ok() } else { Some(p.bytes) }
                        };
                        r.drain_receivers(Instant::now() + DRAIN_LIMIT, &sent);
                        r.finish(t_end, obs);
                        let (Some(p), Some(plan)) = (self.params.as_ref(), self.plan.as_ref()) else {
                            return Err((EngineError::Timeout("for streams"), Some(session)));
                        };
                        // The server answers: it has the client's results already.
                        let done = Finished::new(r, self.cpu_end.unwrap_or_default(), plan);
                        done.report(report, r, Some(&peer), self.cfg.file.as_deref(), obs);
                        let mut mine = done.results(Some(&peer));
                        if p.get_server_output {
                            match obs.server_output() {
                                Some(ServerOutput::Text(t)) => mine.server_output_text = Some(t),
                                Some(ServerOutput::Json(j)) => mine.server_output_json = Some(j),
                                None => {}
                            }
                        }
                        if p.wireperf_watch {
                            mine.watch = obs.watch_results();
                        }
                        tri!(session.send_results(t0.elapsed(), &mine));
                    }
                    ServerEvent::IperfDone => {
                        let out = session.take_output();
                        tri!(ctrl.send(&out));
                        return Ok(());
                    }
                    ServerEvent::ClientTerminate => {
                        self.finish_partial(report, obs);
                        return Err((EngineError::ClientTerminated, None));
                    }
                }
            }
        }
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
        let (Some(limit), Some(r)) = (self.cfg.bitrate_limit, self.run.as_ref()) else {
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
    #[allow(clippy::too_many_arguments)]
    fn attach(
        &mut self,
        sock: TcpStream,
        seq: u64,
        session: &mut ServerSession,
        t0: Instant,
        report: &mut TestReport,
        obs: &mut dyn Observer,
        ctrl: &mut Ctrl,
    ) -> Result<(), EngineError> {
        let Some(p) = self.params.clone() else { return Ok(()) };
        if !session.is_creating_streams() {
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
        self.begin(socks, session, t0, report, obs, ctrl)
    }

    /// The UDP stream handshakes, in the client's order, on the listener bound before
    /// CREATE_STREAMS. The control connection is watched meanwhile: a client that gives up
    /// or an interrupt ends the wait.
    fn udp_handshakes(&mut self, first: std::net::UdpSocket, ctrl: &mut Ctrl) -> Result<Vec<DataSock>, EngineError> {
        let Some(p) = self.params.clone() else { return Ok(Vec::new()) };
        let opts = udp_options(&p, self.cfg.bind_dev.as_deref());
        let deadline = Instant::now() + self.cfg.ctrl_timeout;
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
    #[allow(clippy::too_many_arguments)]
    fn begin(
        &mut self,
        socks: Vec<DataSock>,
        session: &mut ServerSession,
        t0: Instant,
        report: &mut TestReport,
        obs: &mut dyn Observer,
        ctrl: &mut Ctrl,
    ) -> Result<(), EngineError> {
        let (Some(p), Some(plan)) = (self.params.clone(), self.plan.clone()) else { return Ok(()) };
        let mut streams = Vec::with_capacity(socks.len());
        let udp_opts = udp_options(&p, self.cfg.bind_dev.as_deref());
        for (i, sock) in socks.into_iter().enumerate() {
            if let DataSock::Udp(u) = &sock {
                stream::apply_udp_options(u, &udp_opts, plan.sends(i))?;
            }
            let s = plan.stream(i, sock, &mut report.start, obs);
            if i == 0 {
                note_buffers(&mut report.start, &s);
            }
            streams.push(s);
        }
        let mut run = plan.run(streams, self.cfg.interval);
        self.cpu = CpuSampler::start().ok();
        let now = Instant::now();
        session.start_test(t0.elapsed(), plan.length())?;
        ctrl.send(&session.take_output())?;
        if p.wireperf_watch {
            obs.event(Event::WatchRequested);
        }
        obs.event(Event::TestStart(&report.start));
        // iperf3's server honours the client's `-Z` for `-R` with sendfile.
        let zc = crate::SendMode::Sendfile;
        // The client's `-A N,M` overrides the server's own `-A`, as in 3.22.
        let cpu = p.server_affinity.map(|c| c as usize).or(self.cfg.affinity);
        let tuning = &self.cfg.tuning;
        let spec = StreamSpec::from_params(&p, self.cfg.rcv_timeout, cpu, zc, self.cfg.file.clone(), tuning);
        run.start(now, plan.omit(), &spec, &ctrl.notifier())?;
        self.started = Some(now);
        self.run = Some(run);
        Ok(())
    }

    /// The client or an interrupt ended the test early: report what was measured.
    fn finish_partial(&mut self, report: &mut TestReport, obs: &mut dyn Observer) {
        let (Some(r), Some(plan)) = (self.run.as_mut(), self.plan.as_ref()) else { return };
        let now = Instant::now();
        r.stop_senders();
        for s in r.streams.iter_mut() {
            s.stop(true);
        }
        r.finish(now, obs);
        let cpu = self.cpu.and_then(|c| c.sample().ok()).unwrap_or_default();
        // No `-F` figures for a test cut short, as before the end assembly was shared.
        Finished::new(r, cpu, plan).report(report, r, None, None, obs);
    }
}
