//! A whole client run: connect, exchange parameters, open streams, run, exchange results.
//!
//! The loop is the shared [`driver`]; this is the client's side of it: it connects, sends the
//! parameters, opens the data connections, ends the test (its time, `-n`/`-k`, the live
//! view's `q`) and sends its results first.

use crate::config::ClientConfig;
use crate::ctrl::{Ctrl, Wake};
use crate::driver::{self, ControlLoop, Measured, Step};
use crate::error::EngineError;
use crate::event::{Event, Observer, Outcome};
use crate::net::{self, TcpOptions};
use crate::running::TestRun;
use crate::session::{Finished, Role, StreamPlan, note_buffers, udp_options};
use crate::start;
use crate::stream::{DataSock, StreamSpec, client_handshake};
use std::io::Write;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use wireperf_protocol::client::{ClientEvent, ClientSession};
use wireperf_protocol::params::limits;
use wireperf_protocol::schema::{Start, TestReport};
use wireperf_protocol::{Cookie, ExchangeResults, Protocol, TestParams};
use wireperf_sys::CpuSampler;

/// How long a test that ended on its byte budget waits for the server to acknowledge the
/// last bytes before it sends TEST_END ([`TestRun::wait_delivered`]).
const DELIVERY_LIMIT: Duration = Duration::from_secs(2);

/// UDP block size when the control connection's MSS is unknown (iperf3's DEFAULT_UDP_BLKSIZE).
const DEFAULT_UDP_LEN: u32 = wireperf_protocol::params::DEFAULT_UDP_DATAGRAM;

/// How long a UDP stream handshake may take (iperf3 waits 30 s for the reply).
const UDP_CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// Runs one test against `cfg.host`. For UDP (`-u`), `params.len == 0` means "not given":
/// the client picks iperf3's default (the control connection's MSS, else 1460).
/// Never panics on network input; the outcome carries the
/// report as far as it got and the error, if any. `interrupt` ends the test early (SIGINT).
pub fn run_client(cfg: &ClientConfig, obs: &mut dyn Observer, interrupt: &AtomicBool) -> Outcome {
    run_client_finishing(cfg, obs, interrupt, &AtomicBool::new(false))
}

/// [`run_client`] with a second flag: `finish` ends the test now as if its time were up (the
/// live view's `q`), so the streams stop, results are exchanged and the summary is complete,
/// where `interrupt` abandons the test as iperf3's SIGINT does. Inside the `-O` period the end
/// waits for the period to pass, as a `-t` end does.
pub fn run_client_finishing(
    cfg: &ClientConfig,
    obs: &mut dyn Observer,
    interrupt: &AtomicBool,
    finish: &AtomicBool,
) -> Outcome {
    let mut report = TestReport { start: start::base_start(), ..Default::default() };
    let error = run(cfg, &mut report, obs, interrupt, finish).err();
    Outcome { report, error }
}

fn run(
    cfg: &ClientConfig,
    report: &mut TestReport,
    obs: &mut dyn Observer,
    interrupt: &AtomicBool,
    finish: &AtomicBool,
) -> Result<(), EngineError> {
    // `-A N`: as iperf3, this thread (and so every stream thread it starts) on CPU N for
    // the test, before connecting; a CPU that cannot be had ends the run. Unpinned after.
    let _pin = cfg.affinity.map(wireperf_sys::Pinned::to).transpose().map_err(EngineError::Affinity)?;
    let mut test = ClientTest::connect(cfg, report, obs, interrupt, finish)?;
    driver::drive(&mut test)
}

/// The socket options of the control connection (`data == false`) or a data connection.
fn tcp_options(cfg: &ClientConfig, data: bool) -> TcpOptions {
    let p = &cfg.params;
    TcpOptions {
        bind: cfg.bind,
        bind_port: None,
        bind_dev: cfg.bind_dev.clone(),
        window: if data { p.window } else { None },
        mss: if data { p.mss } else { None },
        nodelay: if data { p.nodelay } else { true },
        congestion: if data { p.congestion.clone() } else { None },
        tos: if data { p.tos } else { None },
        user_timeout: cfg.snd_timeout,
        // As iperf3: the control connection stays plain TCP, data connections follow -m.
        mptcp: data && p.mptcp,
        flowlabel: if data { p.flowlabel.and_then(|l| u32::try_from(l).ok()).filter(|&l| l > 0) } else { None },
    }
}

/// A client test from its control connection on.
struct ClientTest<'a> {
    cfg: &'a ClientConfig,
    cookie: Cookie,
    /// `cfg.params` with the UDP datagram size chosen.
    params: TestParams,
    plan: StreamPlan,
    spec: StreamSpec,
    addrs: Vec<SocketAddr>,
    server_addr: SocketAddr,
    report: &'a mut TestReport,
    obs: &'a mut dyn Observer,
    interrupt: &'a AtomicBool,
    finish: &'a AtomicBool,
    session: ClientSession,
    m: Measured,
    end_at: Option<Instant>,
    peer: Option<ExchangeResults>,
    finished: Option<Finished>,
    /// Set once the streams run: `finish` before that waits for them.
    running: bool,
    /// The test ended on its byte or block budget (`-n`, `-k`, `-F`), not its time.
    by_budget: bool,
    ctrl: Ctrl,
}

impl<'a> ClientTest<'a> {
    /// Connects the control connection and sends the cookie.
    fn connect(
        cfg: &'a ClientConfig,
        report: &'a mut TestReport,
        obs: &'a mut dyn Observer,
        interrupt: &'a AtomicBool,
        finish: &'a AtomicBool,
    ) -> Result<Self, EngineError> {
        let cookie = Cookie::random();
        let mut params = cfg.params.clone();
        obs.event(Event::Connecting { host: &cfg.host, port: cfg.port });
        let addrs = net::resolve(&cfg.host, cfg.port, cfg.family)?;
        let ctrl_sock = net::connect_tcp(&addrs, &tcp_options(cfg, false), cfg.connect_timeout)
            .map_err(|e| e.into_engine(EngineError::Connect))?;
        if let Some(ka) = &cfg.cntl_ka {
            wireperf_sys::sockopt::set_keepalive(&ctrl_sock, ka)
                .map_err(|err| EngineError::SocketOption { what: "unable to set keepalive", err })?;
        }
        let server_addr = ctrl_sock.peer_addr().map_err(|err| EngineError::Ctrl { op: "read from", err })?;
        let ctrl_mss = wireperf_sys::sockopt::mss(&ctrl_sock).unwrap_or(0);
        if params.protocol == Protocol::Udp && params.len == 0 {
            // `-u` without `-l`: the control connection's MSS when sane, else 1460, as iperf3.
            params.len = if ctrl_mss > 0 && ctrl_mss <= limits::MAX_UDP_BLOCK { ctrl_mss } else { DEFAULT_UDP_LEN };
            if params.offload.gso {
                // `--gsro`: the GSO datagram is the datagram just chosen (a 3.22 server
                // recomputes it from `len` the same way).
                params.offload = wireperf_protocol::params::UdpOffload::on(params.len);
            }
        }
        let p = &params;
        let plan = StreamPlan::new(p, Role::Client);
        let cpu = CpuSampler::start().ok();
        let mut ctrl = Ctrl::new(ctrl_sock).map_err(|err| EngineError::Ctrl { op: "read from", err })?;
        obs.event(Event::ControlConnected { mss: ctrl_mss });
        note_start(&mut report.start, cfg, cookie, p, ctrl_mss);
        let mut session = ClientSession::new(cookie, p);
        ctrl.send(&session.take_output())?;
        let spec =
            StreamSpec::from_params(p, cfg.rcv_timeout, cfg.affinity, cfg.send_mode, cfg.file.clone(), &cfg.tuning);
        Ok(Self {
            cfg,
            cookie,
            plan,
            spec,
            params,
            addrs,
            server_addr,
            report,
            obs,
            interrupt,
            finish,
            session,
            m: Measured { cpu, ..Default::default() },
            end_at: None,
            peer: None,
            finished: None,
            running: false,
            by_budget: false,
            ctrl,
        })
    }

    /// The test ran its time (or budget, or was finished): stop sending, send TEST_END.
    fn end_test(&mut self) -> Result<(), EngineError> {
        if let Some(r) = self.m.run.as_mut() {
            r.stop_senders();
        }
        self.m.stamp_end();
        if let Some(r) = self.m.run.as_ref().filter(|_| self.by_budget) {
            r.wait_delivered(Instant::now() + DELIVERY_LIMIT);
        }
        self.session.end_test()?;
        self.ctrl.send(&self.session.take_output())
    }

    /// TEST_RUNNING: the stream threads start, and the test's time with them.
    fn test_running(&mut self) -> Result<(), EngineError> {
        let r = self.m.run()?;
        let now = Instant::now();
        r.start(now, self.plan.omit(), &self.spec, &self.ctrl.notifier())?;
        self.running = true;
        if let Some(len) = self.plan.length() {
            self.end_at = Some(now + len);
        }
        Ok(())
    }

    /// EXCHANGE_RESULTS: the client sends its results first, before it knows the server's.
    fn send_results(&mut self) -> Result<(), EngineError> {
        // Count everything the server sent: it closed its sockets before this.
        let done = self.m.finish(&self.plan, &|_| None, self.obs)?;
        let f = self.finished.insert(done);
        self.session.send_results(&f.results(None))?;
        self.ctrl.send(&self.session.take_output())
    }

    /// DISPLAY_RESULTS: the report, with the server's part, and IPERF_DONE.
    fn display(&mut self) -> Result<(), EngineError> {
        let r = self.m.run.as_mut().ok_or(EngineError::Timeout("for streams"))?;
        let f = self.finished.as_ref().ok_or(EngineError::Timeout("for streams"))?;
        if let Some(w) = self.peer.as_ref().and_then(|pr| pr.watch.as_ref()) {
            self.obs.peer_watch(w);
        }
        if let Some(pr) = &self.peer {
            self.report.server_output_json = pr.server_output_json.clone();
            self.report.server_output_text = pr.server_output_text.clone();
        }
        self.report.title = self.params.title.clone();
        self.report.extra_data = self.params.extra_data.clone();
        f.report(self.report, r, self.peer.as_ref(), self.cfg.file.as_deref(), self.obs);
        self.session.done();
        self.ctrl.send(&self.session.take_output())
    }

    /// Opens the data connections, each announced by the cookie, in iperf3's order.
    fn create_streams(&mut self) -> Result<TestRun, EngineError> {
        let (p, plan, server) = (&self.params, &self.plan, self.server_addr);
        let n = plan.total();
        let mut streams = Vec::with_capacity(n);
        // Data connections go to the address the control connection reached.
        let target = [server];
        let targets: &[SocketAddr] = if self.addrs.contains(&server) { &target } else { &self.addrs };
        let udp_opts = udp_options(p, self.cfg.bind_dev.as_deref());
        for i in 0..n {
            let bind_port = self.cfg.cport.map(|c| c.saturating_add(i as u16));
            let sender = plan.sends(i);
            let sock = if p.protocol == Protocol::Udp {
                let timeout = self.cfg.connect_timeout.unwrap_or(UDP_CONNECT_TIMEOUT);
                let target = targets.first().copied().unwrap_or(server);
                let s = client_handshake(target, self.cfg.bind, bind_port, &udp_opts, sender, p.len as usize, timeout)?;
                DataSock::Udp(s)
            } else {
                let mut o = tcp_options(self.cfg, true);
                o.bind_port = bind_port;
                let mut sock = net::connect_tcp(targets, &o, self.cfg.connect_timeout)
                    .map_err(|e| e.into_engine(EngineError::StreamConnect))?;
                sock.write_all(self.cookie.as_bytes()).map_err(EngineError::StreamConnect)?;
                DataSock::Tcp(sock)
            };
            streams.push(plan.stream(i, sock, &mut self.report.start, self.obs));
        }
        if let Some(s) = streams.first() {
            self.report.start.sock_bufsize = Some(u64::from(p.window.unwrap_or(0)));
            note_buffers(&mut self.report.start, s);
        }
        self.report.start.test_start = Some(start::test_start(p, self.cfg.interval));
        Ok(plan.run(streams, self.cfg.interval))
    }
}

/// The client's part of the report's `start`, known once the control connection is up.
fn note_start(start: &mut Start, cfg: &ClientConfig, cookie: Cookie, p: &TestParams, ctrl_mss: u32) {
    start.timestamp = Some(start::now_timestamp());
    start.connecting_to = Some(wireperf_protocol::schema::HostPort { host: cfg.host.clone(), port: cfg.port });
    start.cookie = Some(cookie.as_display());
    if p.protocol == Protocol::Udp {
        // iperf3 prints no MSS for UDP tests.
    } else if p.mss.is_some() {
        start.tcp_mss = p.mss;
    } else {
        start.tcp_mss_default = Some(ctrl_mss);
    }
    start.target_bitrate = Some(p.bandwidth.unwrap_or(0));
    start.fq_rate = Some(p.fqrate.unwrap_or(0));
}

impl ControlLoop for ClientTest<'_> {
    type Event = ClientEvent;
    type Error = EngineError;

    fn ctrl(&mut self) -> &mut Ctrl {
        &mut self.ctrl
    }

    fn take_output(&mut self) -> Vec<u8> {
        // Whatever the session queued (e.g. the parameters after PARAM_EXCHANGE).
        self.session.take_output()
    }

    fn deadline(&self) -> Option<Instant> {
        let run = self.m.run.as_ref().filter(|_| self.m.t_end.is_none());
        let next = match (run, self.end_at) {
            (Some(r), Some(e)) => Some(r.next_deadline().map_or(e, |d| d.min(e))),
            (Some(r), None) => r.next_deadline(),
            _ => None,
        };
        Some(next.map_or(Instant::now() + Duration::from_millis(200), |d| {
            d.min(Instant::now() + Duration::from_millis(200))
        }))
    }

    fn woken(&mut self, wake: Option<Wake>) -> Result<(), EngineError> {
        if self.interrupt.load(Ordering::Relaxed) {
            self.session.terminate();
            let _ = self.ctrl.send(&self.session.take_output());
            return Err(EngineError::ClientTerminated);
        }
        match wake {
            Some(Wake::CtrlData(bytes)) => self.session.handle_input(&bytes)?,
            Some(Wake::CtrlEof) => self.session.handle_eof()?,
            Some(Wake::CtrlError(err)) => return Err(EngineError::Ctrl { op: "read from", err }),
            Some(Wake::StreamFailed(e)) => {
                self.session.done();
                let _ = self.ctrl.send(&self.session.take_output());
                return Err(e);
            }
            Some(Wake::BudgetReached) => {
                if self.m.t_end.is_none() {
                    self.end_at = Some(Instant::now());
                    self.by_budget = true;
                }
            }
            Some(Wake::DataConn(..)) | Some(Wake::Interrupt) | None => {}
        }
        Ok(())
    }

    /// End of test first (so the last interval is the final sample), then ticks and the end
    /// of omit.
    fn clock(&mut self) -> Result<(), EngineError> {
        let now = Instant::now();
        if self.running && self.finish.load(Ordering::Relaxed) && self.end_at.is_none_or(|e| e > now) {
            self.end_at = Some(now);
        }
        let Some(r) = self.m.run.as_mut() else { return Ok(()) };
        let ended = self.m.t_end.is_none() && self.end_at.is_some_and(|e| now >= e) && !r.omitting();
        if ended {
            self.end_test()?;
        } else if self.m.t_end.is_none() {
            r.on_clock(now, self.obs);
        }
        Ok(())
    }

    fn next_event(&mut self) -> Option<ClientEvent> {
        self.session.poll_event()
    }

    fn on_event(&mut self, event: ClientEvent) -> Result<Step, EngineError> {
        match event {
            ClientEvent::LatencyOffer(offer) => self.obs.peer_latency_offer(&offer),
            ClientEvent::CreateStreams => self.m.run = Some(self.create_streams()?),
            ClientEvent::TestStart => self.obs.event(Event::TestStart(&self.report.start)),
            ClientEvent::TestRunning => self.test_running()?,
            ClientEvent::ExchangeResults => self.send_results()?,
            ClientEvent::ServerResults(res) => self.peer = Some(*res),
            ClientEvent::DisplayResults => {
                self.display()?;
                return Ok(Step::Done);
            }
            ClientEvent::AccessDenied => return Err(EngineError::AccessDenied),
            ClientEvent::ServerError { i_errno, errno } => {
                return Err(EngineError::ServerReported { i_errno, errno });
            }
            ClientEvent::ServerTerminate => return Err(EngineError::ServerTerminated),
        }
        Ok(Step::Continue)
    }
}
