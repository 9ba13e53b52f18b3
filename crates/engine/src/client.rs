//! A whole client run: connect, exchange parameters, open streams, run, exchange results.

use crate::config::ClientConfig;
use crate::ctrl::{Ctrl, Wake};
use crate::error::EngineError;
use crate::event::{Event, Observer, Outcome};
use crate::net::{self, TcpOptions};
use crate::running::TestRun;
use crate::session::{Finished, Role, StreamPlan, note_buffers, udp_options};
use crate::start;
use crate::stream::{DataSock, StreamSpec, client_handshake};
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use wireperf_protocol::client::{ClientEvent, ClientSession};
use wireperf_protocol::params::limits;
use wireperf_protocol::schema::TestReport;
use wireperf_protocol::{Cookie, ExchangeResults, Protocol, TestParams};
use wireperf_sys::CpuSampler;

/// How long a test that ended on its byte budget waits for the server to acknowledge the
/// last bytes before it sends TEST_END ([`TestRun::wait_delivered`]).
const DELIVERY_LIMIT: Duration = Duration::from_secs(2);

/// UDP block size when the control connection's MSS is unknown (iperf3's DEFAULT_UDP_BLKSIZE).
const DEFAULT_UDP_LEN: u32 = wireperf_protocol::params::DEFAULT_UDP_DATAGRAM;

/// How long a UDP stream handshake may take (iperf3 waits 30 s for the reply).
const UDP_CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// How long the client waits for receiving streams to deliver what the server sent.
const DRAIN_LIMIT: Duration = Duration::from_secs(5);

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
    let error = Client::new(cfg).run(&mut report, obs, interrupt, finish).err();
    Outcome { report, error }
}

struct Client<'a> {
    cfg: &'a ClientConfig,
    cookie: Cookie,
}

impl<'a> Client<'a> {
    fn new(cfg: &'a ClientConfig) -> Self {
        Self { cfg, cookie: Cookie::random() }
    }

    fn tcp_options(&self, data: bool) -> TcpOptions {
        let p = &self.cfg.params;
        TcpOptions {
            bind: self.cfg.bind,
            bind_port: None,
            bind_dev: self.cfg.bind_dev.clone(),
            window: if data { p.window } else { None },
            mss: if data { p.mss } else { None },
            nodelay: if data { p.nodelay } else { true },
            congestion: if data { p.congestion.clone() } else { None },
            tos: if data { p.tos } else { None },
            user_timeout: self.cfg.snd_timeout,
            // As iperf3: the control connection stays plain TCP, data connections follow -m.
            mptcp: data && p.mptcp,
            flowlabel: if data { p.flowlabel.and_then(|l| u32::try_from(l).ok()).filter(|&l| l > 0) } else { None },
        }
    }

    fn run(
        &self,
        report: &mut TestReport,
        obs: &mut dyn Observer,
        interrupt: &AtomicBool,
        finish: &AtomicBool,
    ) -> Result<(), EngineError> {
        let cfg = self.cfg;
        let mut params = cfg.params.clone();
        // `-A N`: as iperf3, this thread (and so every stream thread it starts) on CPU N for
        // the test, before connecting; a CPU that cannot be had ends the run. Unpinned after.
        let _pin = cfg.affinity.map(wireperf_sys::Pinned::to).transpose().map_err(EngineError::Affinity)?;
        obs.event(Event::Connecting { host: &cfg.host, port: cfg.port });
        let addrs = net::resolve(&cfg.host, cfg.port, cfg.family)?;
        let ctrl_sock = net::connect_tcp(&addrs, &self.tcp_options(false), cfg.connect_timeout)
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

        let start = &mut report.start;
        start.timestamp = Some(start::now_timestamp());
        start.connecting_to = Some(wireperf_protocol::schema::HostPort { host: cfg.host.clone(), port: cfg.port });
        start.cookie = Some(self.cookie.as_display());
        if p.protocol == Protocol::Udp {
            // iperf3 prints no MSS for UDP tests.
        } else if p.mss.is_some() {
            start.tcp_mss = p.mss;
        } else {
            start.tcp_mss_default = Some(ctrl_mss);
        }
        start.target_bitrate = Some(p.bandwidth.unwrap_or(0));
        start.fq_rate = Some(p.fqrate.unwrap_or(0));

        let mut session = ClientSession::new(self.cookie, p);
        ctrl.send(&session.take_output())?;

        let mut run: Option<TestRun> = None;
        let mut end_at: Option<Instant> = None;
        let mut t_end: Option<Instant> = None;
        let mut peer: Option<ExchangeResults> = None;
        let mut cpu_end = None;
        let mut finished: Option<Finished> = None;
        // Set once the streams run: `finish` before that waits for them.
        let mut running = false;
        // The test ended on its byte or block budget (`-n`, `-k`, `-F`), not its time.
        let mut by_budget = false;
        let spec =
            StreamSpec::from_params(p, cfg.rcv_timeout, cfg.affinity, cfg.send_mode, cfg.file.clone(), &cfg.tuning);
        loop {
            // Whatever the session queued (e.g. the parameters after PARAM_EXCHANGE).
            let out = session.take_output();
            ctrl.send(&out)?;
            let deadline = match (&run, end_at) {
                (Some(r), Some(e)) if t_end.is_none() => Some(r.next_deadline().map_or(e, |d| d.min(e))),
                (Some(r), None) if t_end.is_none() => r.next_deadline(),
                _ => None,
            };
            let deadline = Some(deadline.map_or(Instant::now() + Duration::from_millis(200), |d| {
                d.min(Instant::now() + Duration::from_millis(200))
            }));
            let wake = ctrl.wait(deadline);
            if interrupt.load(Ordering::Relaxed) {
                session.terminate();
                let _ = ctrl.send(&session.take_output());
                return Err(EngineError::ClientTerminated);
            }
            match wake {
                Some(Wake::CtrlData(bytes)) => session.handle_input(&bytes)?,
                Some(Wake::CtrlEof) => session.handle_eof()?,
                Some(Wake::CtrlError(err)) => return Err(EngineError::Ctrl { op: "read from", err }),
                Some(Wake::StreamFailed(e)) => {
                    session.done();
                    let _ = ctrl.send(&session.take_output());
                    return Err(e);
                }
                Some(Wake::BudgetReached) => {
                    if t_end.is_none() {
                        end_at = Some(Instant::now());
                        by_budget = true;
                    }
                }
                Some(Wake::DataConn(..)) | Some(Wake::Interrupt) | None => {}
            }
            // The clock: end of test first (so the last interval is the final sample), then
            // ticks and the end of omit.
            let now = Instant::now();
            if running && finish.load(Ordering::Relaxed) && end_at.is_none_or(|e| e > now) {
                end_at = Some(now);
            }
            if let Some(r) = run.as_mut() {
                let ended = t_end.is_none() && end_at.is_some_and(|e| now >= e) && !r.omitting();
                if ended {
                    r.stop_senders();
                    t_end = Some(Instant::now());
                    cpu_end = cpu.and_then(|c| c.sample().ok());
                    if by_budget {
                        r.wait_delivered(Instant::now() + DELIVERY_LIMIT);
                    }
                    session.end_test()?;
                    ctrl.send(&session.take_output())?;
                } else if t_end.is_none() {
                    r.on_clock(now, obs);
                }
            }
            while let Some(ev) = session.poll_event() {
                match ev {
                    ClientEvent::LatencyOffer(offer) => obs.peer_latency_offer(&offer),
                    ClientEvent::CreateStreams => {
                        let r = self.create_streams(p, &plan, &addrs, server_addr, report, obs)?;
                        run = Some(r);
                    }
                    ClientEvent::TestStart => {
                        obs.event(Event::TestStart(&report.start));
                    }
                    ClientEvent::TestRunning => {
                        let r = run.as_mut().ok_or(EngineError::Timeout("for streams"))?;
                        let now = Instant::now();
                        r.start(now, plan.omit(), &spec, &ctrl.notifier())?;
                        running = true;
                        if let Some(len) = plan.length() {
                            end_at = Some(now + len);
                        }
                    }
                    ClientEvent::ExchangeResults => {
                        let r = run.as_mut().ok_or(EngineError::Timeout("for streams"))?;
                        let te = t_end.unwrap_or_else(Instant::now);
                        // Count everything the server sent: it closed its sockets before this.
                        r.drain_receivers(Instant::now() + DRAIN_LIMIT, &|_| None);
                        r.finish(te, obs);
                        // The client sends its results first, before it knows the server's.
                        let f = finished.insert(Finished::new(r, cpu_end.unwrap_or_default(), &plan));
                        session.send_results(&f.results(None))?;
                        ctrl.send(&session.take_output())?;
                    }
                    ClientEvent::ServerResults(res) => peer = Some(*res),
                    ClientEvent::DisplayResults => {
                        let r = run.as_mut().ok_or(EngineError::Timeout("for streams"))?;
                        let f = finished.as_ref().ok_or(EngineError::Timeout("for streams"))?;
                        if let Some(w) = peer.as_ref().and_then(|pr| pr.watch.as_ref()) {
                            obs.peer_watch(w);
                        }
                        if let Some(pr) = &peer {
                            report.server_output_json = pr.server_output_json.clone();
                            report.server_output_text = pr.server_output_text.clone();
                        }
                        report.title = p.title.clone();
                        report.extra_data = p.extra_data.clone();
                        f.report(report, r, peer.as_ref(), cfg.file.as_deref(), obs);
                        session.done();
                        ctrl.send(&session.take_output())?;
                        return Ok(());
                    }
                    ClientEvent::AccessDenied => return Err(EngineError::AccessDenied),
                    ClientEvent::ServerError { i_errno, errno } => {
                        return Err(EngineError::ServerReported { i_errno, errno });
                    }
                    ClientEvent::ServerTerminate => return Err(EngineError::ServerTerminated),
                }
            }
        }
    }

    /// Opens the data connections, each announced by the cookie, in iperf3's order.
    fn create_streams(
        &self,
        p: &TestParams,
        plan: &StreamPlan,
        addrs: &[std::net::SocketAddr],
        server: std::net::SocketAddr,
        report: &mut TestReport,
        obs: &mut dyn Observer,
    ) -> Result<TestRun, EngineError> {
        let n = plan.total();
        let mut streams = Vec::with_capacity(n);
        // Data connections go to the address the control connection reached.
        let target = [server];
        let targets: &[std::net::SocketAddr] = if addrs.contains(&server) { &target } else { addrs };
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
                let mut o = self.tcp_options(true);
                o.bind_port = bind_port;
                let mut sock = net::connect_tcp(targets, &o, self.cfg.connect_timeout)
                    .map_err(|e| e.into_engine(EngineError::StreamConnect))?;
                sock.write_all(self.cookie.as_bytes()).map_err(EngineError::StreamConnect)?;
                DataSock::Tcp(sock)
            };
            streams.push(plan.stream(i, sock, &mut report.start, obs));
        }
        if let Some(s) = streams.first() {
            report.start.sock_bufsize = Some(u64::from(p.window.unwrap_or(0)));
            note_buffers(&mut report.start, s);
        }
        report.start.test_start = Some(start::test_start(p, self.cfg.interval));
        Ok(plan.run(streams, self.cfg.interval))
    }
}
