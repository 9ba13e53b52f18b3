//! The client: opens `-P` streams with the test header, and for `-d`/`-r` listens for the
//! server's connect-back on the `-L` port.

use super::client_header::client_header;
use super::net::{connect_tcp, listen_tcp, resolve, wildcard};
use super::{EngineError, Shared, StreamCtx, tcp, udp};
use crate::config::{ClientConfig, Mode, Proto, Stop};
use crate::event::{ConnInfo, Dir, Event, Group, Tag};
use std::net::{SocketAddr, TcpListener};
use std::sync::mpsc::Sender;
use std::thread;
use std::time::{Duration, Instant};

/// Runs a client test to the end, reporting on `tx`.
pub fn run_client(cfg: &ClientConfig, tx: Sender<Event>) -> Result<(), EngineError> {
    let addr = resolve(&cfg.host, cfg.port).map_err(EngineError::Connect)?;
    let shared = Shared::new(tx, cfg.interval, cfg.enhanced);
    if cfg.proto == Proto::Udp {
        let group = shared.group(cfg.threads);
        let handles: Vec<_> = (0..cfg.threads)
            .map(|_| {
                let (cfg, shared) = (cfg.clone(), shared.clone());
                thread::spawn(move || udp::client_stream(addr, &cfg, &shared, group))
            })
            .collect();
        return join_all(handles);
    }
    // -d/-r: listen before connecting, since a -d server connects back at once.
    let back = match cfg.mode {
        Mode::Dual | Mode::Tradeoff => {
            let port = cfg.listen_port.unwrap_or(cfg.port);
            Some(listen_tcp(wildcard(&addr, port), cfg.window).map_err(EngineError::Bind)?)
        }
        _ => None,
    };
    let send_group = shared.group(cfg.threads);
    let recv_group = shared.group(cfg.threads);
    let acceptor = back.map(|l| {
        let (cfg, shared) = (cfg.clone(), shared.clone());
        thread::spawn(move || accept_connect_backs(&l, &cfg, &shared, recv_group))
    });
    let handles: Vec<_> = (0..cfg.threads)
        .map(|_| {
            let (cfg, shared) = (cfg.clone(), shared.clone());
            thread::spawn(move || tcp_stream(addr, &cfg, &shared, send_group, recv_group))
        })
        .collect();
    let r = join_all(handles);
    if let Some(a) = acceptor {
        let _ = a.join();
    }
    r
}

fn join_all(handles: Vec<thread::JoinHandle<Result<(), EngineError>>>) -> Result<(), EngineError> {
    let mut first_err = None;
    for h in handles {
        match h.join() {
            Ok(Ok(())) => {}
            Ok(Err(e)) => first_err = first_err.or(Some(e)),
            Err(_) => first_err = first_err.or(Some(EngineError::Io(std::io::Error::other("stream thread panicked")))),
        }
    }
    first_err.map_or(Ok(()), Err)
}

fn tcp_stream(
    addr: SocketAddr,
    cfg: &ClientConfig,
    shared: &Shared,
    send_group: Group,
    recv_group: Group,
) -> Result<(), EngineError> {
    let sock = connect_tcp(addr, cfg.window).map_err(EngineError::Connect)?;
    let id = shared.id();
    let tag = match cfg.mode {
        Mode::FullDuplex => Tag::FullDuplex,
        Mode::Reverse => Tag::Reverse,
        _ => Tag::Plain,
    };
    shared.emit(Event::Connected(ConnInfo {
        id,
        local: sock.local_addr()?,
        peer: sock.peer_addr()?,
        tag,
        peer_version: None,
        udp: false,
    }));
    let header = client_header(cfg).encode(0);
    let len = cfg.effective_len();
    let limit = match cfg.stop {
        Stop::Time(d) => Some(d + Duration::from_secs(5)),
        Stop::Bytes(_) => None,
    };
    match cfg.mode {
        Mode::Reverse => {
            use std::io::Write;
            (&sock).write_all(&header)?;
            let ctx = StreamCtx { shared: shared.clone(), id, dir: Dir::Recv, tag: Tag::Reverse, group: recv_group };
            tcp::recv(&sock, len, 0, limit, &ctx);
        }
        Mode::FullDuplex => {
            // With one stream, iperf 2 sums the two directions of the socket ([SUM]); with
            // more, each direction is summed over the streams.
            let (sg, rg) = if cfg.threads == 1 {
                let g = shared.group(2);
                (g, g)
            } else {
                (send_group, recv_group)
            };
            let writer = sock.try_clone()?;
            let sctx = StreamCtx { shared: shared.clone(), id, dir: Dir::Send, tag: Tag::Plain, group: sg };
            let stop = cfg.stop;
            let h = thread::spawn(move || tcp::send(&writer, &header, len, stop, false, &sctx));
            let rctx = StreamCtx { shared: shared.clone(), id, dir: Dir::Recv, tag: Tag::Reverse, group: rg };
            tcp::recv(&sock, len, 0, limit, &rctx);
            let _ = h.join();
        }
        Mode::Normal | Mode::Dual | Mode::Tradeoff => {
            let ctx = StreamCtx { shared: shared.clone(), id, dir: Dir::Send, tag: Tag::Plain, group: send_group };
            tcp::send(&sock, &header, len, cfg.stop, true, &ctx);
        }
    }
    Ok(())
}

/// Accepts the server's `-d`/`-r` connections (one per stream) and receives on each.
/// Gives up when the test should long be over: a server that ignores `-d` (e.g. one started
/// with `--no-connect-back`) must not hang the client.
fn accept_connect_backs(l: &TcpListener, cfg: &ClientConfig, shared: &Shared, group: Group) -> Result<(), EngineError> {
    let wait = match cfg.stop {
        Stop::Time(d) => d * 2 + Duration::from_secs(5),
        Stop::Bytes(_) => Duration::from_secs(60),
    };
    let deadline = Instant::now() + wait;
    l.set_nonblocking(true)?;
    let mut handles = Vec::new();
    let mut accepted = 0;
    while accepted < cfg.threads && Instant::now() < deadline {
        match l.accept() {
            Ok((s, peer)) => {
                s.set_nonblocking(false)?;
                accepted += 1;
                let id = shared.id();
                shared.emit(Event::Connected(ConnInfo {
                    id,
                    local: s.local_addr()?,
                    peer,
                    tag: Tag::Plain,
                    peer_version: None,
                    udp: false,
                }));
                let ctx = StreamCtx { shared: shared.clone(), id, dir: Dir::Recv, tag: Tag::Plain, group };
                let len = cfg.effective_len();
                handles.push(thread::spawn(move || tcp::recv(&s, len, 0, None, &ctx)));
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => thread::sleep(Duration::from_millis(10)),
            Err(e) => return Err(e.into()),
        }
    }
    if accepted < cfg.threads {
        shared.emit(Event::Warning("ERROR: expected reverse connect did not occur".into()));
    }
    for h in handles {
        let _ = h.join();
    }
    Ok(())
}
