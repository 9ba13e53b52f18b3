//! Accepting connections and reading their cookies off the serve loop's thread.

use crate::event::Outcome;
use crossbeam_channel::Sender;
use std::io::{ErrorKind, Read};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;
use wireperf_protocol::cookie::COOKIE_SIZE;

/// Connections allowed to be between accept and a complete cookie at once. Beyond this a new
/// connection is closed at once: a flood of silent connections cannot exhaust threads.
const MAX_HALF_OPEN: usize = 64;

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
    /// A connection that did not make it that far.
    Note(String),
    /// A test thread finished (boxed: an outcome is much larger than the other messages).
    TestDone(u64, Box<Outcome>),
}

/// Starts the acceptor thread. It polls so that it can notice `shutdown`; accepted sockets are
/// handed to greeter threads.
pub(super) fn spawn_acceptor(
    listener: TcpListener,
    tx: Sender<Inbound>,
    shutdown: Arc<AtomicBool>,
    cookie_timeout: Duration,
) -> std::io::Result<JoinHandle<()>> {
    listener.set_nonblocking(true)?;
    let half_open = Arc::new(AtomicUsize::new(0));
    let mut seq = 0u64;
    std::thread::Builder::new().name("wireperf-accept".into()).spawn(move || {
        while !shutdown.load(Ordering::Relaxed) {
            match listener.accept() {
                Ok((sock, addr)) => {
                    if half_open.load(Ordering::Relaxed) >= MAX_HALF_OPEN {
                        let _ = tx.send(Inbound::Note(format!(
                            "dropped connection from {addr}: too many connections waiting for a cookie"
                        )));
                        continue;
                    }
                    half_open.fetch_add(1, Ordering::Relaxed);
                    seq += 1;
                    let this = seq;
                    let (tx, ho) = (tx.clone(), Arc::clone(&half_open));
                    let spawned = std::thread::Builder::new().name("wireperf-greet".into()).spawn(move || {
                        let msg = greet(sock, addr, cookie_timeout, this);
                        ho.fetch_sub(1, Ordering::Relaxed);
                        let _ = tx.send(msg);
                    });
                    if spawned.is_err() {
                        half_open.fetch_sub(1, Ordering::Relaxed);
                    }
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => std::thread::sleep(Duration::from_millis(20)),
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => {
                    // EMFILE and friends: report, back off, keep serving.
                    let _ = tx.send(Inbound::Note(format!("accept failed: {e}")));
                    std::thread::sleep(Duration::from_millis(100));
                }
            }
        }
    })
}

/// Reads the cookie a new connection must send first.
fn greet(mut sock: TcpStream, addr: SocketAddr, timeout: Duration, seq: u64) -> Inbound {
    let _ = sock.set_nonblocking(false);
    if sock.set_read_timeout(Some(timeout)).is_err() {
        return Inbound::Note(format!("connection from {addr}: cannot set a read timeout"));
    }
    let mut cookie = [0u8; COOKIE_SIZE];
    match sock.read_exact(&mut cookie) {
        Ok(()) => {
            let _ = sock.set_read_timeout(None);
            Inbound::Greeted { sock, addr, cookie, seq }
        }
        Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
            Inbound::Note(format!("connection from {addr} sent no complete cookie within {timeout:?}; closed"))
        }
        Err(e) if e.kind() == ErrorKind::UnexpectedEof => {
            Inbound::Note(format!("connection from {addr} closed before sending a complete cookie"))
        }
        Err(e) => Inbound::Note(format!("connection from {addr}: {e}")),
    }
}
