//! The server: a listener that never wedges, and one test at a time.
//!
//! An acceptor thread hands every new connection to a short-lived greeter thread that reads the
//! 37-byte cookie with a timeout, so a client that connects and says nothing holds up nobody.
//! The serve loop then routes the connection: a data connection of the running test goes to
//! that test's thread, a new cookie starts a test when the server is free, and anything else
//! gets iperf3's one-byte "busy" answer. Every failure ends one test, is reported, and the loop
//! goes on to the next client.

mod acceptor;
mod test;

use crate::config::ServerConfig;
use crate::ctrl::{Ctrl, Wake};
use crate::error::EngineError;
use crate::event::{Observer, Outcome};
use acceptor::{Inbound, spawn_acceptor};
use crossbeam_channel::{Sender, unbounded};
use std::io::Write;
use std::net::{SocketAddr, TcpListener};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use wireperf_protocol::Cookie;
use wireperf_protocol::cookie::COOKIE_SIZE;
use wireperf_protocol::server::ServerSession;

/// What the serve loop reports to its owner (the CLI prints these).
pub trait ServerHooks {
    /// The server is waiting for a client (`Server listening on …`).
    fn listening(&mut self, port: u16, test_no: u64);
    /// A test starts: give it an observer.
    fn new_test(&mut self, test_no: u64) -> Box<dyn Observer + Send>;
    /// A test ended, well or badly.
    fn test_done(&mut self, test_no: u64, outcome: &Outcome);
    /// A one-line note about a connection that did not become a test.
    fn log(&mut self, line: &str);
}

/// A bound iperf3-compatible server.
pub struct Server {
    listener: TcpListener,
    cfg: ServerConfig,
}

struct Active {
    cookie: Cookie,
    accepting: Arc<AtomicBool>,
    notify: Sender<Wake>,
    thread: JoinHandle<()>,
}

impl Server {
    /// Binds the listening socket.
    pub fn bind(cfg: ServerConfig) -> Result<Self, EngineError> {
        let listener = crate::net::listen(cfg.port, cfg.bind, cfg.bind_dev.as_deref(), cfg.family)
            .map_err(EngineError::Listen)?;
        Ok(Self { listener, cfg })
    }

    /// The bound address (useful with port 0).
    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// Serves tests until `stop` is set, or after one test with `-1`.
    pub fn run(&self, hooks: &mut dyn ServerHooks, stop: &AtomicBool) -> Result<(), EngineError> {
        let port = self.local_addr().map(|a| a.port()).unwrap_or(self.cfg.port);
        let (tx, rx) = unbounded::<Inbound>();
        let listener = self.listener.try_clone().map_err(EngineError::Listen)?;
        let shutdown = Arc::new(AtomicBool::new(false));
        let acceptor = spawn_acceptor(listener, tx.clone(), Arc::clone(&shutdown), self.cfg.ctrl_timeout)
            .map_err(EngineError::Listen)?;
        let mut test_no = 0u64;
        let mut active: Option<Active> = None;
        let mut banner_due = true;
        let mut idle_since = Instant::now();
        let result = loop {
            if active.is_none() && banner_due {
                hooks.listening(port, test_no + 1);
                banner_due = false;
                idle_since = Instant::now();
            }
            if stop.load(Ordering::Relaxed) {
                if let Some(a) = &active {
                    let _ = a.notify.send(Wake::Interrupt);
                } else {
                    break Ok(());
                }
            }
            let idle_expired = self.cfg.idle_timeout.is_some_and(|idle| idle_since.elapsed() >= idle);
            if active.is_none() && idle_expired {
                if self.cfg.one_off {
                    break Ok(());
                }
                // iperf3 restarts an idle server quietly: no new banner, same number.
                idle_since = Instant::now();
            }
            let msg = match rx.recv_timeout(Duration::from_millis(200)) {
                Ok(m) => m,
                Err(_) => continue,
            };
            match msg {
                Inbound::Greeted { mut sock, addr, cookie, seq } => {
                    let c = Cookie::from_wire(cookie);
                    match &active {
                        Some(a) if a.cookie.matches(&c) && a.accepting.load(Ordering::Acquire) => {
                            let _ = a.notify.send(Wake::DataConn(sock, seq));
                        }
                        Some(_) => {
                            let _ = sock.write_all(&ServerSession::busy_reply());
                            hooks.log(&format!("refused {addr}: the server is busy running a test"));
                        }
                        None => {
                            test_no += 1;
                            match self.start_test(test_no, sock, addr, cookie, hooks, tx.clone()) {
                                Ok(a) => active = Some(a),
                                Err(e) => hooks.log(&format!("could not start a test for {addr}: {e}")),
                            }
                        }
                    }
                }
                Inbound::Note(line) => hooks.log(&line),
                Inbound::TestDone(no, outcome) => {
                    if let Some(a) = active.take() {
                        let _ = a.thread.join();
                    }
                    hooks.test_done(no, &outcome);
                    banner_due = true;
                    if self.cfg.one_off || stop.load(Ordering::Relaxed) {
                        break Ok(());
                    }
                }
            }
        };
        shutdown.store(true, Ordering::Relaxed);
        let _ = acceptor.join();
        if let Some(a) = active.take() {
            let _ = a.notify.send(Wake::Interrupt);
            let _ = a.thread.join();
        }
        result
    }

    fn start_test(
        &self,
        test_no: u64,
        sock: std::net::TcpStream,
        addr: SocketAddr,
        cookie: [u8; COOKIE_SIZE],
        hooks: &mut dyn ServerHooks,
        done: Sender<Inbound>,
    ) -> Result<Active, EngineError> {
        let ctrl = Ctrl::new(sock).map_err(|err| EngineError::Ctrl { op: "read from", err })?;
        let notify = ctrl.notifier();
        let accepting = Arc::new(AtomicBool::new(false));
        let mut obs = hooks.new_test(test_no);
        let cfg = self.cfg.clone();
        let acc = Arc::clone(&accepting);
        let thread = std::thread::Builder::new()
            .name(format!("wireperf-test-{test_no}"))
            .spawn(move || {
                let outcome = test::serve_test(ctrl, addr, cookie, &cfg, obs.as_mut(), &acc);
                let _ = done.send(Inbound::TestDone(test_no, Box::new(outcome)));
            })
            .map_err(|err| EngineError::Ctrl { op: "start a thread for", err })?;
        Ok(Active { cookie: Cookie::from_wire(cookie), accepting, notify, thread })
    }
}
