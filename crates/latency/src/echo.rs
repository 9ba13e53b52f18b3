//! The server's latency echo: a UDP socket and one TCP request/response connection that
//! answer a test's probes, for that test's client only, until the test ends.
//!
//! Bounded on every side, because it listens on ports a stranger can reach: only datagrams
//! and a connection from the client's address count; a probe must be exactly
//! [`REQUEST_LEN`] bytes with the test's token (anything else is dropped unanswered, and on
//! TCP, where a bad frame loses the framing, it closes the connection); at most
//! [`MAX_RATE`] answers a second for both flows together; one TCP connection; and the
//! service lives at most [`MAX_LIFETIME`] even if nobody stops it. [`EchoServer::stop`]
//! (at the test's end, or on drop) closes both sockets.

use crate::echo_wire::{Budget, EchoOffer, MAX_RATE, REQUEST_LEN, Request, Token};
use std::io::{ErrorKind, Read, Write};
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How often the echo threads look at the stop flag.
const POLL: Duration = Duration::from_millis(50);

/// The longest an echo lives (a test longer than this loses its probes, not its server).
pub const MAX_LIFETIME: Duration = Duration::from_secs(3 * 3600);

/// A running echo for one test.
#[derive(Debug)]
pub struct EchoServer {
    offer: EchoOffer,
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
}

struct Shared {
    client: IpAddr,
    token: Token,
    origin: Instant,
    budget: Mutex<Budget>,
    stop: Arc<AtomicBool>,
}

impl Shared {
    fn running(&self) -> bool {
        !self.stop.load(Ordering::Relaxed) && self.origin.elapsed() < MAX_LIFETIME
    }

    /// The reply to `b` from `from`, when it is this test's probe and the budget allows.
    fn answer(&self, b: &[u8], from: IpAddr) -> Option<[u8; crate::echo_wire::REPLY_LEN]> {
        if from.to_canonical() != self.client {
            return None;
        }
        let req = Request::parse(b, self.token)?;
        let now = self.origin.elapsed();
        let allowed = self.budget.lock().map(|mut bu| bu.allow(now)).unwrap_or(false);
        allowed.then(|| req.reply(self.token, u64::try_from(now.as_nanos()).unwrap_or(u64::MAX)))
    }
}

impl EchoServer {
    /// Starts the echo on `local`'s address (ephemeral ports) for probes from `client`.
    /// Either flow may fail to start (the offer then lacks its port); both failing is an error.
    pub fn start(client: IpAddr, local: IpAddr, token: Token) -> std::io::Result<EchoServer> {
        let stop = Arc::new(AtomicBool::new(false));
        let shared = Arc::new(Shared {
            client: client.to_canonical(),
            token,
            origin: Instant::now(),
            budget: Mutex::new(Budget::new(MAX_RATE)),
            stop: Arc::clone(&stop),
        });
        let mut threads = Vec::new();
        let udp = UdpSocket::bind(SocketAddr::new(local, 0)).and_then(|s| {
            s.set_read_timeout(Some(POLL))?;
            let port = s.local_addr()?.port();
            let sh = Arc::clone(&shared);
            threads.push(std::thread::Builder::new().name("latency-echo-udp".into()).spawn(move || udp_loop(&s, &sh))?);
            Ok(port)
        });
        let tcp = TcpListener::bind(SocketAddr::new(local, 0)).and_then(|l| {
            // A blocking accept that wakes every poll interval (Linux honours SO_RCVTIMEO on
            // accept): the client's first probe does not wait for a sleep to end.
            socket2::SockRef::from(&l).set_read_timeout(Some(POLL))?;
            let port = l.local_addr()?.port();
            let sh = Arc::clone(&shared);
            threads.push(std::thread::Builder::new().name("latency-echo-tcp".into()).spawn(move || tcp_loop(&l, &sh))?);
            Ok(port)
        });
        if let (Err(e), Err(_)) = (&udp, &tcp) {
            return Err(std::io::Error::new(e.kind(), e.to_string()));
        }
        let offer = EchoOffer::new(udp.ok(), tcp.ok(), token);
        Ok(EchoServer { offer, stop, threads })
    }

    /// Starts the echo with a fresh random token (see [`EchoServer::start`]).
    pub fn start_random(client: IpAddr, local: IpAddr) -> std::io::Result<EchoServer> {
        let mut t = [0u8; 8];
        getrandom::fill(&mut t).map_err(|e| std::io::Error::other(e.to_string()))?;
        EchoServer::start(client, local, Token(t))
    }

    /// What to tell the client.
    pub fn offer(&self) -> &EchoOffer {
        &self.offer
    }

    /// Closes both flows and waits for their threads (at most a poll interval).
    pub fn stop(mut self) {
        self.halt();
    }

    fn halt(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

impl Drop for EchoServer {
    fn drop(&mut self) {
        self.halt();
    }
}

fn udp_loop(s: &UdpSocket, sh: &Shared) {
    let mut buf = [0u8; 2048];
    while sh.running() {
        match s.recv_from(&mut buf) {
            Ok((n, from)) => {
                if let Some(reply) = buf.get(..n).and_then(|b| sh.answer(b, from.ip())) {
                    let _ = s.send_to(&reply, from);
                }
            }
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted) => {}
            // ICMP errors from an earlier reply and the like: keep serving.
            Err(_) => std::thread::sleep(POLL),
        }
    }
}

fn tcp_loop(l: &TcpListener, sh: &Shared) {
    // One connection from the client; others (strangers, or a second one) are closed at once.
    let conn = loop {
        if !sh.running() {
            return;
        }
        match l.accept() {
            Ok((c, from)) if from.ip().to_canonical() == sh.client => break c,
            Ok(_) => {}
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted) => {}
            Err(_) => std::thread::sleep(POLL),
        }
    };
    let _ = serve_tcp(conn, sh);
}

fn serve_tcp(mut c: TcpStream, sh: &Shared) -> std::io::Result<()> {
    c.set_nonblocking(false)?;
    c.set_nodelay(true)?;
    c.set_read_timeout(Some(POLL))?;
    c.set_write_timeout(Some(Duration::from_secs(1)))?;
    let mut buf = [0u8; REQUEST_LEN];
    let mut have = 0;
    while sh.running() {
        match c.read(&mut buf[have..]) {
            Ok(0) => return Ok(()),
            Ok(n) => have += n,
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted) => {
                continue;
            }
            Err(e) => return Err(e),
        }
        if have < REQUEST_LEN {
            continue;
        }
        have = 0;
        let from = c.peer_addr()?.ip();
        if Request::parse(&buf, sh.token).is_none() {
            // Not a probe: the framing is lost, so the connection goes.
            return Ok(());
        }
        // Over budget: no answer (the client counts the probe lost), the connection stays.
        if let Some(reply) = sh.answer(&buf, from) {
            c.write_all(&reply)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::echo_wire::{REPLY_LEN, Reply};

    const T: Token = Token([9; 8]);
    const LO: IpAddr = IpAddr::V4(std::net::Ipv4Addr::LOCALHOST);

    #[test]
    fn udp_echo_answers_its_probes_and_ignores_garbage() {
        let e = EchoServer::start(LO, LO, T).unwrap();
        let to = SocketAddr::new(LO, e.offer().udp_port.unwrap());
        let s = UdpSocket::bind((LO, 0)).unwrap();
        s.set_read_timeout(Some(Duration::from_millis(300))).unwrap();
        for junk in [&b"hello"[..], &[0u8; 1400][..], &Request { seq: 1, sent_ns: 1 }.encode(Token([0; 8]))[..]] {
            s.send_to(junk, to).unwrap();
        }
        let req = Request { seq: 5, sent_ns: 77 };
        s.send_to(&req.encode(T), to).unwrap();
        let mut b = [0u8; 64];
        let (n, _) = s.recv_from(&mut b).unwrap();
        assert_eq!(n, REPLY_LEN);
        assert_eq!(Reply::parse(&b[..n], T).unwrap().request, req, "the first answer is the probe's, not garbage's");
        assert!(s.recv_from(&mut b).is_err(), "nothing else came back");
        e.stop();
        s.send_to(&req.encode(T), to).unwrap();
        assert!(s.recv_from(&mut b).is_err(), "closed at stop");
    }

    #[test]
    fn tcp_echo_serves_one_connection_and_closes_on_garbage() {
        let e = EchoServer::start(LO, LO, T).unwrap();
        let to = SocketAddr::new(LO, e.offer().tcp_port.unwrap());
        let mut c = TcpStream::connect(to).unwrap();
        c.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
        for seq in 0..3 {
            c.write_all(&Request { seq, sent_ns: 9 }.encode(T)).unwrap();
            let mut b = [0u8; REPLY_LEN];
            c.read_exact(&mut b).unwrap();
            assert_eq!(Reply::parse(&b, T).unwrap().request.seq, seq);
        }
        c.write_all(&[b'x'; REQUEST_LEN]).unwrap();
        let mut b = [0u8; 1];
        assert_eq!(c.read(&mut b).unwrap_or(0), 0, "closed after a frame that is not a probe");
        drop(e);
    }

    #[test]
    fn strangers_get_nothing() {
        // The echo is for 10.0.0.1 only: a probe from loopback is not answered.
        let e = EchoServer::start(IpAddr::from([10, 0, 0, 1]), LO, T).unwrap();
        let s = UdpSocket::bind((LO, 0)).unwrap();
        s.set_read_timeout(Some(Duration::from_millis(200))).unwrap();
        s.send_to(&Request { seq: 0, sent_ns: 0 }.encode(T), (LO, e.offer().udp_port.unwrap())).unwrap();
        assert!(s.recv_from(&mut [0u8; 64]).is_err());
    }
}
