//! Accepting connections and reading their cookies off the serve loop's thread.

use crate::event::Outcome;
use crossbeam_channel::Sender;
use std::collections::HashMap;
use std::io::{ErrorKind, Read, Write};
use std::net::IpAddr;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;
use wireperf_protocol::cookie::COOKIE_SIZE;

/// Messages to the serve loop.
pub(super) enum Inbound {
    /// A connection that sent a full cookie.
    Greeted {
        /// The connection.
        sock: TcpStream,
        /// Its peer.
        addr: SocketAddr,
        /// The 37 bytes it sent.
        cookie: [u8; COOKIE_SIZE],
        /// Accept order (greeters finish in any order; the client's order matters).
        seq: u64,
    },
    /// A connection that did not make it that far: why, and its peer when known.
    Note(String, Option<SocketAddr>),
    /// A test thread finished (boxed: an outcome is much larger than the other messages).
    TestDone(u64, Box<Outcome>),
}

/// Starts the acceptor thread. It polls so that it can notice `shutdown`; accepted sockets are
/// greeted at once when their cookie has arrived, else handed to greeter threads. At most
/// `max_half_open` connections may wait in greeters for a complete cookie at once; beyond that a new connection is closed at once, so a flood of
/// silent connections cannot exhaust threads.
pub(super) fn spawn_acceptor(
    listener: TcpListener,
    tx: Sender<Inbound>,
    shutdown: Arc<AtomicBool>,
    cookie_timeout: Duration,
    max_half_open: usize,
) -> std::io::Result<JoinHandle<()>> {
    listener.set_nonblocking(true)?;
    let half_open = Arc::new(Mutex::new(HalfOpen::default()));
    let per_ip = (max_half_open / 4).max(1);
    let mut seq = 0u64;
    std::thread::Builder::new().name("wireperf-accept".into()).spawn(move || {
        while !shutdown.load(Ordering::Relaxed) {
            match listener.accept() {
                Ok((sock, addr)) => {
                    seq += 1;
                    // A real client writes its cookie right after connecting, so it is usually
                    // here already: such a connection is greeted on this thread and never
                    // counts as half-open. Only a silent or slow one needs a greeter and a slot,
                    // which is what keeps a stock client's -P 128 clear of the guard.
                    let sock = match cookie_at_hand(sock, addr, seq) {
                        Ok(greeted) => {
                            let _ = tx.send(greeted);
                            continue;
                        }
                        Err(sock) => sock,
                    };
                    let ip = addr.ip().to_canonical();
                    if let Err(why) = HalfOpen::enter(&half_open, ip, max_half_open, per_ip) {
                        let _ = tx.send(Inbound::Note(why, Some(addr)));
                        continue;
                    }
                    let this = seq;
                    let (tx, ho) = (tx.clone(), Arc::clone(&half_open));
                    let spawned = std::thread::Builder::new().name("wireperf-greet".into()).spawn(move || {
                        let msg = greet(sock, addr, cookie_timeout, this);
                        HalfOpen::leave(&ho, ip);
                        if let Some(msg) = msg {
                            let _ = tx.send(msg);
                        }
                    });
                    if spawned.is_err() {
                        HalfOpen::leave(&half_open, ip);
                    }
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => std::thread::sleep(Duration::from_millis(20)),
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => {
                    // EMFILE and friends: report, back off, keep serving.
                    let _ = tx.send(Inbound::Note(format!("accept failed: {e}"), None));
                    std::thread::sleep(Duration::from_millis(100));
                }
            }
        }
    })
}

/// Connections between accept and a complete cookie, in total and per client address (a
/// quarter of the total each), so one address cannot take every greeter.
#[derive(Default)]
struct HalfOpen {
    total: usize,
    per_ip: HashMap<IpAddr, usize>,
}

impl HalfOpen {
    fn enter(this: &Mutex<HalfOpen>, ip: IpAddr, max: usize, per_ip: usize) -> Result<(), String> {
        let Ok(mut h) = this.lock() else { return Err("internal lock poisoned".into()) };
        if h.total >= max {
            return Err(format!("{max} connections are already waiting for a cookie"));
        }
        let n = h.per_ip.entry(ip).or_insert(0);
        if *n >= per_ip {
            return Err(format!("{per_ip} connections from this address are already waiting for a cookie"));
        }
        *n += 1;
        h.total += 1;
        Ok(())
    }

    fn leave(this: &Mutex<HalfOpen>, ip: IpAddr) {
        let Ok(mut h) = this.lock() else { return };
        h.total = h.total.saturating_sub(1);
        if let Some(n) = h.per_ip.get_mut(&ip) {
            *n -= 1;
            if *n == 0 {
                h.per_ip.remove(&ip);
            }
        }
    }
}

/// Takes the cookie off a just-accepted connection when all 37 bytes have arrived (without
/// waiting), else gives the connection back for a greeter.
fn cookie_at_hand(sock: TcpStream, addr: SocketAddr, seq: u64) -> Result<Inbound, TcpStream> {
    let mut cookie = [0u8; COOKIE_SIZE];
    let complete = sock.set_nonblocking(true).is_ok() && matches!(sock.peek(&mut cookie), Ok(COOKIE_SIZE));
    if !complete || !plausible_cookie(&cookie) {
        // Implausible bytes take the greeter's path, which answers them busy.
        return Err(sock);
    }
    let mut sock = sock;
    if sock.read_exact(&mut cookie).is_err() || sock.set_nonblocking(false).is_err() {
        return Ok(Inbound::Note("reading an arrived cookie failed".into(), Some(addr)));
    }
    Ok(Inbound::Greeted { sock, addr, cookie, seq })
}

/// Reads the cookie a new connection must send first. `None` for a connection that closed
/// without sending a byte: a TCP connect probe (`--latency` against a server without the probe
/// extension, a port check) is not an error worth a log line.
fn greet(mut sock: TcpStream, addr: SocketAddr, timeout: Duration, seq: u64) -> Option<Inbound> {
    let _ = sock.set_nonblocking(false);
    if sock.set_read_timeout(Some(timeout)).is_err() {
        return Some(Inbound::Note("cannot set a read timeout".into(), Some(addr)));
    }
    let mut cookie = [0u8; COOKIE_SIZE];
    let got = read_full(&mut sock, &mut cookie);
    if matches!(got, Ok(0)) {
        return None;
    }
    Some(match got.and_then(|n| if n == COOKIE_SIZE { Ok(()) } else { Err(ErrorKind::UnexpectedEof.into()) }) {
        Ok(()) if !plausible_cookie(&cookie) => {
            // The answer iperf3 gives any connection it will not serve.
            let _ = sock.set_write_timeout(Some(Duration::from_secs(1)));
            let _ = sock.write_all(&wireperf_protocol::server::ServerSession::busy_reply());
            Inbound::Note("sent 37 bytes that are not an iperf3 cookie; answered busy and closed".into(), Some(addr))
        }
        Ok(()) => {
            let _ = sock.set_read_timeout(None);
            Inbound::Greeted { sock, addr, cookie, seq }
        }
        Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
            Inbound::Note(format!("no complete cookie within {}s", timeout.as_secs()), Some(addr))
        }
        Err(e) if e.kind() == ErrorKind::UnexpectedEof => {
            Inbound::Note("closed before sending a complete cookie".into(), Some(addr))
        }
        Err(e) => Inbound::Note(format!("reading the cookie failed: {e}"), Some(addr)),
    })
}

/// Reads until `buf` is full or the peer closes: how many bytes arrived (an error only when
/// the read itself failed, e.g. timed out).
fn read_full(sock: &mut TcpStream, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match sock.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// Every iperf3 client makes its cookie from 36 printable characters and a NUL (stock ones from
/// `a-z2-7`). Anything else is not a client: closing it at once keeps random bytes from
/// taking a test slot until they fail to parse as parameters.
fn plausible_cookie(c: &[u8; COOKIE_SIZE]) -> bool {
    c[COOKIE_SIZE - 1] == 0 && c[..COOKIE_SIZE - 1].iter().all(u8::is_ascii_graphic)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cookie_plausibility() {
        let mut c = [b'a'; COOKIE_SIZE];
        c[36] = 0;
        assert!(plausible_cookie(&c));
        c[5] = b' ';
        assert!(!plausible_cookie(&c));
        c[5] = b'z';
        c[36] = b'z';
        assert!(!plausible_cookie(&c), "no NUL");
    }

    /// A connection whose cookie has arrived is greeted without a greeter thread (so it never
    /// counts as half-open); a silent one is handed back untouched.
    #[test]
    fn an_arrived_cookie_is_taken_at_once_and_a_silent_connection_is_not() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let mut cookie = [b'k'; COOKIE_SIZE];
        cookie[36] = 0;
        let mut talker = TcpStream::connect(addr).unwrap();
        talker.write_all(&cookie).unwrap();
        let (sock, peer) = listener.accept().unwrap();
        // The bytes crossed loopback before accept returned, but give a loaded machine time.
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        let mut buf = [0u8; COOKIE_SIZE];
        while sock.peek(&mut buf).unwrap_or(0) < COOKIE_SIZE && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        match cookie_at_hand(sock, peer, 7) {
            Ok(Inbound::Greeted { cookie: got, seq, sock, .. }) => {
                assert_eq!((got, seq), (cookie, 7));
                let mut probe = [0u8; 1];
                sock.set_read_timeout(Some(Duration::from_millis(20))).unwrap();
                assert!((&sock).read(&mut probe).is_err(), "blocking again, and the cookie consumed");
            }
            _ => panic!("an arrived cookie was not taken"),
        }
        let _silent = TcpStream::connect(addr).unwrap();
        let (sock, peer) = listener.accept().unwrap();
        assert!(cookie_at_hand(sock, peer, 8).is_err(), "a silent connection needs a greeter");
    }
}
