//! The server: a listener that never wedges, running up to `--max-tests` tests at once.
//!
//! An acceptor thread hands every new connection to a short-lived greeter thread that reads the
//! 37-byte cookie with a timeout (at most `max_half_open` at once), so a client that connects
//! and says nothing holds up nobody. The serve loop then routes the connection: a cookie of a
//! running test in stream setup is a data connection of that test; a new cookie starts a test
//! when a slot is free (globally and for that client address), waits in the queue when
//! `--queue` allows it, and gets iperf3's one-byte "busy" answer otherwise. Every test runs on
//! its own thread; every failure ends one test, is recorded, and the loop goes on.
//!
//! A queued client is held with nothing sent: stock iperf3 clients wait for PARAM_EXCHANGE
//! without a timeout of their own, so they simply start late.

mod acceptor;
mod one_test;
mod policy;
mod record;
mod registry;

pub use crate::auth::{AuthContext, AuthHook, Authorizer};
pub use record::{Limit, RecordKind, ServerRecord, bytes_moved};

use crate::config::ServerConfig;
use crate::ctrl::{Ctrl, Wake};
use crate::error::EngineError;
use crate::event::{Observer, Outcome};
use acceptor::{Inbound, spawn_acceptor};
use crossbeam_channel::{Sender, unbounded};
use registry::Registry;
use std::io::{ErrorKind, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime};
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
    /// A structured record for the operator's log (accepted, queued, finished, failed,
    /// refused, dropped). The default ignores it.
    fn record(&mut self, _rec: &ServerRecord) {}
    /// A connection that opened with the fix channel's cookie
    /// ([`wireperf_protocol::fix_wire::FIX_COOKIE`], `suite --fix`): the owner takes it (a
    /// `--allow-fix` server serves it on a thread of its own) by returning `None`, or hands it
    /// back, and the loop answers that this server changes nothing. `auth` is the server's
    /// authentication for this connection, when it authenticates clients. The default
    /// hands every one back: fixing a host is never on unless its owner asks for it.
    fn fix_channel(&mut self, sock: TcpStream, _addr: SocketAddr, _auth: Option<AuthHook>) -> Option<TcpStream> {
        Some(sock)
    }
}

/// A bound iperf3-compatible server.
pub struct Server {
    listener: TcpListener,
    cfg: ServerConfig,
}

/// A running test.
struct Active {
    test_no: u64,
    addr: SocketAddr,
    accepting: Arc<AtomicBool>,
    notify: Sender<Wake>,
    thread: JoinHandle<()>,
    started: Instant,
}

/// A client waiting for a slot: its control connection, cookie already read.
struct Waiting {
    sock: TcpStream,
    addr: SocketAddr,
    cookie: [u8; COOKIE_SIZE],
    arrived: SystemTime,
    since: Instant,
}

/// Why the loop stops taking new tests.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Draining {
    No,
    /// `-1` after its test, or an interrupt: finish what runs, refuse the rest.
    Yes,
}

impl Server {
    /// Binds the listening socket.
    pub fn bind(cfg: ServerConfig) -> Result<Self, EngineError> {
        let listener =
            crate::net::listen(cfg.port, cfg.bind, cfg.bind_dev.as_deref(), cfg.family).map_err(EngineError::Listen)?;
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
        let acceptor = spawn_acceptor(
            listener,
            tx.clone(),
            Arc::clone(&shutdown),
            // Real clients send the cookie right after connecting (3.15+ clients themselves give
            // a peer 10 s): a silent connection need not hold a greeter for the full timeout.
            self.cfg.ctrl_timeout.min(Duration::from_secs(10)),
            self.cfg.max_half_open.max(1),
        )
        .map_err(EngineError::Listen)?;
        let reg = Registry::new(self.cfg.max_tests, self.cfg.max_tests_per_client, self.cfg.queue_max);
        let mut s = Serving { server: self, hooks, reg, tx, test_no: 0, banner_due: true, draining: Draining::No };
        let mut idle_since = Instant::now();
        loop {
            let idle = s.reg.running_count() == 0 && s.reg.waiting_count() == 0;
            if idle && s.draining == Draining::Yes {
                break;
            }
            if idle && s.banner_due {
                s.hooks.listening(port, s.test_no + 1);
                s.banner_due = false;
                idle_since = Instant::now();
            }
            if stop.load(Ordering::Relaxed) && s.draining == Draining::No {
                s.drain();
                continue;
            }
            let idle_expired = self.cfg.idle_timeout.is_some_and(|idle| idle_since.elapsed() >= idle);
            if idle && idle_expired {
                if self.cfg.one_off {
                    break;
                }
                // iperf3 restarts an idle server quietly: no new banner, same number.
                idle_since = Instant::now();
            }
            s.tend_queue();
            let msg = match rx.recv_timeout(Duration::from_millis(100)) {
                Ok(m) => m,
                Err(_) => continue,
            };
            match msg {
                Inbound::Greeted { sock, addr, cookie, seq } => s.greeted(sock, addr, cookie, seq),
                Inbound::Note(line, addr) => {
                    let rec = ServerRecord::new(RecordKind::Dropped, addr).because(line);
                    s.hooks.record(&rec);
                }
                Inbound::TestDone(no, outcome) => {
                    s.test_done(no, &outcome);
                    if self.cfg.one_off || stop.load(Ordering::Relaxed) {
                        s.draining = Draining::Yes;
                    }
                }
            }
        }
        shutdown.store(true, Ordering::Relaxed);
        let _ = acceptor.join();
        for a in s.reg.drain_running() {
            let _ = a.notify.send(Wake::Interrupt);
            let _ = a.thread.join();
        }
        Ok(())
    }
}

/// The serve loop's state: the tests running and waiting, and the channel tests report on.
struct Serving<'a> {
    server: &'a Server,
    hooks: &'a mut dyn ServerHooks,
    reg: Registry<Active, Waiting>,
    /// Where a test thread reports that it is done.
    tx: Sender<Inbound>,
    /// The last test number given.
    test_no: u64,
    /// The next idle moment prints the `Server listening` banner.
    banner_due: bool,
    draining: Draining,
}

impl Serving<'_> {
    /// Stops taking tests: interrupts the running ones and turns the waiting ones away.
    fn drain(&mut self) {
        self.draining = Draining::Yes;
        for a in self.reg.running() {
            let _ = a.notify.send(Wake::Interrupt);
        }
        for w in self.reg.evict_waiting(|_| false) {
            refuse(self.hooks, w.sock, w.addr, "the server is shutting down", Some(w.since.elapsed()), None);
        }
    }

    /// A connection that sent its cookie: a data connection of a test in stream setup, or a
    /// new test, started, queued or refused.
    fn greeted(&mut self, sock: TcpStream, addr: SocketAddr, cookie: [u8; COOKIE_SIZE], seq: u64) {
        if cookie == wireperf_protocol::fix_wire::FIX_COOKIE {
            self.fix_channel(sock, addr);
            return;
        }
        if let Some(a) = self.reg.by_cookie(&cookie) {
            if a.accepting.load(Ordering::Acquire) {
                let _ = a.notify.send(Wake::DataConn(sock, seq));
            } else {
                let why = format!("a connection with the cookie of test {} outside stream setup", a.test_no);
                refuse(self.hooks, sock, addr, &why, None, None);
            }
            return;
        }
        let arrived = SystemTime::now();
        if self.draining == Draining::Yes {
            refuse(self.hooks, sock, addr, "the server is finishing its last test", None, None);
            return;
        }
        match self.reg.admit(addr.ip()) {
            Ok(()) => self.launch(sock, addr, cookie, arrived),
            Err(full) if self.server.cfg.queue.is_some() => {
                let w = Waiting { sock, addr, cookie, arrived, since: Instant::now() };
                let _ = w.sock.set_nonblocking(true);
                match self.reg.enqueue(addr.ip(), w) {
                    Ok(()) => {
                        let rec = ServerRecord::new(RecordKind::Queued, Some(addr)).because(full.describe());
                        self.hooks.record(&rec);
                    }
                    Err(w) => {
                        let why = format!("{}, and the queue is full", full.describe());
                        refuse(self.hooks, w.sock, w.addr, &why, None, Some(Limit::QueueMax));
                    }
                }
            }
            Err(full) => refuse(self.hooks, sock, addr, &full.describe(), None, Some(full.limit())),
        }
    }

    /// A fix channel: the owner's, or a refusal that names the flag.
    fn fix_channel(&mut self, sock: TcpStream, addr: SocketAddr) {
        let auth = self
            .server
            .cfg
            .auth
            .as_ref()
            .map(|h| h.for_test(AuthContext { client: Some(addr), arrived: SystemTime::now() }));
        let Some(mut sock) = self.hooks.fix_channel(sock, addr, auth) else { return };
        use wireperf_protocol::fix_wire::{FixAnswer, encode_answer};
        let reason = "this server does not change its host (it was not started with --allow-fix)".to_string();
        let _ = sock.set_write_timeout(Some(Duration::from_secs(1)));
        let _ = sock.write_all(&encode_answer(&FixAnswer::Refused { reason }));
        let rec = ServerRecord::new(RecordKind::Refused, Some(addr)).because("a fix request, and --allow-fix is off");
        self.hooks.record(&rec);
    }

    /// A test thread ended: join it, record how it went, and show the banner when idle.
    fn test_done(&mut self, no: u64, outcome: &Outcome) {
        if let Some(a) = self.reg.remove_test(no) {
            let _ = a.thread.join();
            self.hooks.record(&ServerRecord::done(no, a.addr, a.started.elapsed(), outcome));
        }
        self.hooks.test_done(no, outcome);
        self.banner_due = true;
    }

    /// Drops queued clients that left or waited too long (busy answer), and starts those for
    /// whom a slot is free.
    fn tend_queue(&mut self) {
        if self.reg.waiting_count() == 0 {
            return;
        }
        let limit = self.server.cfg.queue.unwrap_or_default();
        let mut left = Vec::new();
        let expired = self.reg.evict_waiting(|w| {
            if gone(&w.sock) {
                left.push((w.addr, w.since.elapsed()));
                return false;
            }
            w.since.elapsed() < limit
        });
        for w in expired {
            if left.iter().any(|(a, _)| *a == w.addr) {
                continue;
            }
            let why = format!("no slot became free within --queue {}s", limit.as_secs());
            refuse(self.hooks, w.sock, w.addr, &why, Some(w.since.elapsed()), Some(Limit::Queue));
        }
        for (addr, waited) in left {
            let mut rec = ServerRecord::new(RecordKind::Dropped, Some(addr)).because("the client left the queue");
            rec.duration = Some(waited);
            self.hooks.record(&rec);
        }
        while let Some(w) = self.reg.next_admissible() {
            let _ = w.sock.set_nonblocking(false);
            self.launch(w.sock, w.addr, w.cookie, w.arrived);
        }
    }

    fn launch(&mut self, sock: TcpStream, addr: SocketAddr, cookie: [u8; COOKIE_SIZE], arrived: SystemTime) {
        self.test_no += 1;
        let no = self.test_no;
        match self.start_test(no, sock, addr, cookie, arrived) {
            Ok(a) => {
                let mut rec = ServerRecord::new(RecordKind::Accepted, Some(addr));
                rec.test = Some(no);
                self.hooks.record(&rec);
                self.reg.insert(cookie, no, addr.ip(), a);
            }
            Err(e) => {
                let mut rec = ServerRecord::new(RecordKind::Failed, Some(addr)).because(e.to_string());
                rec.test = Some(no);
                self.hooks.record(&rec);
            }
        }
    }

    fn start_test(
        &mut self,
        test_no: u64,
        sock: TcpStream,
        addr: SocketAddr,
        cookie: [u8; COOKIE_SIZE],
        arrived: SystemTime,
    ) -> Result<Active, EngineError> {
        // A client that stops reading cannot park the test thread in a write forever.
        let _ = sock.set_write_timeout(Some(self.server.cfg.ctrl_timeout));
        let ctrl = Ctrl::new(sock).map_err(|err| EngineError::Ctrl { op: "read from", err })?;
        let notify = ctrl.notifier();
        let accepting = Arc::new(AtomicBool::new(false));
        let mut obs = self.hooks.new_test(test_no);
        let mut cfg = self.server.cfg.clone();
        cfg.auth = cfg.auth.map(|h| h.for_test(AuthContext { client: Some(addr), arrived }));
        let acc = Arc::clone(&accepting);
        let done = self.tx.clone();
        let thread = std::thread::Builder::new()
            .name(format!("wireperf-test-{test_no}"))
            .spawn(move || {
                let outcome = one_test::serve_test(ctrl, addr, cookie, &cfg, obs.as_mut(), &acc);
                let _ = done.send(Inbound::TestDone(test_no, Box::new(outcome)));
            })
            .map_err(|err| EngineError::Ctrl { op: "start a thread for", err })?;
        Ok(Active { test_no, addr, accepting, notify, thread, started: Instant::now() })
    }
}

/// Sends the busy byte, closes, and records why.
fn refuse(
    hooks: &mut dyn ServerHooks,
    mut sock: TcpStream,
    addr: SocketAddr,
    why: &str,
    waited: Option<Duration>,
    limit: Option<Limit>,
) {
    let _ = sock.set_nonblocking(false);
    let _ = sock.set_write_timeout(Some(Duration::from_secs(1)));
    let _ = sock.write_all(&ServerSession::busy_reply());
    let mut rec = ServerRecord::new(RecordKind::Refused, Some(addr)).because(why);
    rec.duration = waited;
    rec.limit = limit;
    rec.i_errno = Some(wireperf_protocol::IperfErrno::ACCESSDENIED.0);
    hooks.record(&rec);
}

/// True when a queued (non-blocking) control connection was closed by its client.
fn gone(sock: &TcpStream) -> bool {
    let mut b = [0u8; 1];
    match sock.peek(&mut b) {
        Ok(0) => true,
        Ok(_) => false,
        Err(e) => e.kind() != ErrorKind::WouldBlock && e.kind() != ErrorKind::Interrupted,
    }
}
