//! The server: accepts connections (TCP) or first datagrams (UDP), reads each client's test
//! header and runs what it asks for — receive, send back on the same socket (`--reverse`),
//! both (`--full-duplex`), or connect back to the client (`-d` at once, `-r` afterwards).

use super::net::{bind_udp, connect_tcp, listen_tcp};
use super::{EngineError, Shared, StreamCtx, tcp, udp};
use crate::config::{DEFAULT_TCP_LEN, Proto, ServerConfig, Stop};
use crate::event::{ConnInfo, Dir, Event, Group, Tag};
use crate::wire::*;
use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpStream};
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

/// How long a refused connect-back (`-d`/`-r`) is retried while the client's listener starts.
const CONNECT_BACK_PATIENCE: Duration = Duration::from_secs(2);

/// How long a new connection may take to send its header (iperf 2 allows 4 s).
const HEADER_WAIT: Duration = Duration::from_secs(4);

/// Joins connections of one client's `-P` run into one sum group: the header says how many
/// streams the client opened, and they come from the same address.
#[derive(Default)]
struct Groups {
    open: Mutex<HashMap<IpAddr, (Group, u32)>>,
}

impl Groups {
    fn join(&self, shared: &Shared, peer: IpAddr, threads: u32) -> Group {
        let Ok(mut open) = self.open.lock() else {
            return shared.group(1);
        };
        if let Some((g, left)) = open.get_mut(&peer)
            && *left > 0
            && g.size == threads
        {
            *left -= 1;
            return *g;
        }
        let g = shared.group(threads.max(1));
        open.insert(peer, (g, threads.saturating_sub(1)));
        g
    }
}

fn bind_addr(cfg: &ServerConfig) -> Result<SocketAddr, EngineError> {
    let ip = match &cfg.bind {
        Some(b) => b
            .parse::<IpAddr>()
            .map_err(|e| EngineError::Bind(std::io::Error::new(std::io::ErrorKind::InvalidInput, e)))?,
        None => IpAddr::V4(Ipv4Addr::UNSPECIFIED),
    };
    Ok(SocketAddr::new(ip, cfg.port))
}

/// Serves tests until `max_tests` have run (forever when unset).
pub fn run_server(cfg: &ServerConfig, tx: Sender<Event>) -> Result<(), EngineError> {
    let shared = Shared::new(tx, cfg.interval, cfg.enhanced);
    let addr = bind_addr(cfg)?;
    let mut handles = Vec::new();
    let mut served = 0u32;
    match cfg.proto {
        Proto::Tcp => {
            let l = listen_tcp(addr, cfg.window).map_err(EngineError::Bind)?;
            let groups = Arc::new(Groups::default());
            while cfg.max_tests.is_none_or(|m| served < m) {
                let (s, peer) = match l.accept() {
                    Ok(x) => x,
                    Err(_) => continue,
                };
                served += 1;
                let (cfg, shared, groups) = (cfg.clone(), shared.clone(), Arc::clone(&groups));
                handles.push(thread::spawn(move || serve_tcp(s, peer, &cfg, &shared, &groups)));
            }
        }
        Proto::Udp => {
            while cfg.max_tests.is_none_or(|m| served < m) {
                let sock = bind_udp(addr, cfg.window).map_err(EngineError::Bind)?;
                let mut first = vec![0u8; 65536];
                let (n, peer) = match sock.recv_from(&mut first) {
                    Ok(x) => x,
                    Err(_) => continue,
                };
                first.truncate(n);
                // A stray FIN from a finished test is not a new test.
                if UdpHeader::read(&first, true).is_ok_and(|h| h.id < 0) || sock.connect(peer).is_err() {
                    continue;
                }
                served += 1;
                let (cfg, shared) = (cfg.clone(), shared.clone());
                handles.push(thread::spawn(move || udp::server_session(sock, first, peer, &cfg, &shared)));
            }
        }
    }
    for h in handles {
        let _ = h.join();
    }
    Ok(())
}

/// Reads the header: returns it (if any) and how many payload-counted bytes were consumed.
fn read_header(s: &mut TcpStream) -> Option<(Option<ClientHeader>, usize)> {
    s.set_read_timeout(Some(HEADER_WAIT)).ok()?;
    let mut first = [0u8; 4];
    s.read_exact(&mut first).ok()?;
    match ClientHeader::tcp_len(u32::from_be_bytes(first)).ok()? {
        HeaderLen::NoHeader => Some((None, 4)),
        HeaderLen::Bytes(n) => {
            let mut buf = vec![0u8; n.max(4)];
            buf[..4].copy_from_slice(&first);
            s.read_exact(&mut buf[4..]).ok()?;
            Some((ClientHeader::decode(&buf).ok(), n))
        }
    }
}

fn serve_tcp(mut s: TcpStream, peer: SocketAddr, cfg: &ServerConfig, shared: &Shared, groups: &Groups) {
    let Some((hdr, consumed)) = read_header(&mut s) else {
        return;
    };
    if let Some(h) = &hdr
        && ((h.flags & HEADER_EXTEND != 0 && h.flags & HEADER_VERSION2 == 0) || h.flags & HEADER_V2PEERDETECT != 0)
    {
        let ack = ClientAck { flags: 0, version_u: ClientHeader::VERSION_U, version_l: ClientHeader::VERSION_L };
        let _ = s.write_all(&ack.encode());
    }
    let upper = hdr.as_ref().map_or(0, ClientHeader::upper);
    let tag = if upper & UPPER_FULLDUPLEX != 0 {
        Tag::FullDuplex
    } else if upper & UPPER_REVERSE != 0 {
        Tag::Reverse
    } else {
        Tag::Plain
    };
    let id = shared.id();
    let Ok(local) = s.local_addr() else { return };
    shared.emit(Event::Connected(ConnInfo {
        id,
        local,
        peer,
        tag,
        peer_version: hdr.as_ref().and_then(ClientHeader::peer_version),
        udp: false,
    }));
    let hdr_len = hdr.as_ref().map_or(0, |h| usize::try_from(h.buf_len).unwrap_or(0));
    let len = cfg.len.unwrap_or(if hdr_len > 0 { hdr_len } else { DEFAULT_TCP_LEN });
    let stop = match hdr.as_ref().map(|h| h.amount) {
        Some(Amount::Centis(c)) => Stop::Time(Duration::from_millis(u64::from(c) * 10)),
        Some(Amount::Bytes(b)) => Stop::Bytes(u64::from(b)),
        None => Stop::Time(Duration::from_secs(10)),
    };
    let threads = hdr.as_ref().map_or(1, |h| h.num_threads.max(1) as u32);
    match tag {
        Tag::Reverse => {
            let ctx = StreamCtx {
                shared: shared.clone(),
                id,
                dir: Dir::Send,
                tag: Tag::Reverse,
                group: groups.join(shared, peer.ip(), threads),
            };
            tcp::send(&s, &[], len, stop, true, &ctx);
        }
        Tag::FullDuplex => {
            let g = shared.group(2);
            let Ok(writer) = s.try_clone() else { return };
            let sctx = StreamCtx { shared: shared.clone(), id, dir: Dir::Send, tag: Tag::Reverse, group: g };
            let h = thread::spawn(move || tcp::send(&writer, &[], len, stop, false, &sctx));
            let rctx = StreamCtx { shared: shared.clone(), id, dir: Dir::Recv, tag: Tag::Plain, group: g };
            tcp::recv(&s, len, consumed, None, &rctx);
            let _ = h.join();
        }
        Tag::Plain => {
            let back = hdr
                .as_ref()
                .filter(|h| h.is_v1_bidir())
                .map(|h| (SocketAddr::new(peer.ip(), h.port), h.flags & RUN_NOW != 0));
            let group = groups.join(shared, peer.ip(), threads);
            let connect_back = |target: SocketAddr| {
                let (shared, cfg) = (shared.clone(), cfg.clone());
                thread::spawn(move || connect_back(target, len, stop, &cfg, &shared))
            };
            let early = back.filter(|(_, now)| *now).map(|(t, _)| connect_back(t));
            let ctx = StreamCtx { shared: shared.clone(), id, dir: Dir::Recv, tag: Tag::Plain, group };
            tcp::recv(&s, len, consumed, None, &ctx);
            drop(s);
            let late = back.filter(|(_, now)| !*now).map(|(t, _)| connect_back(t));
            for h in [early, late].into_iter().flatten() {
                let _ = h.join();
            }
        }
    }
}

/// The server's side of `-d`/`-r`: connect to the client's listener and send, with no header
/// (the client's listener expects none: this is the 1.7-compatible leg).
fn connect_back(target: SocketAddr, len: usize, stop: Stop, cfg: &ServerConfig, shared: &Shared) {
    // The client's listener may not be up yet when `-d`'s header arrives (it starts it beside
    // its own sending thread): a refusal is retried for a bounded moment before it counts.
    let until = std::time::Instant::now() + CONNECT_BACK_PATIENCE;
    let s = loop {
        match connect_tcp(target, cfg.window) {
            Ok(s) => break s,
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused && std::time::Instant::now() < until => {
                thread::sleep(Duration::from_millis(20));
            }
            Err(e) => {
                shared.emit(Event::Warning(format!("connect back to {target} failed: {e}")));
                return;
            }
        }
    };
    let id = shared.id();
    let (Ok(local), Ok(peer)) = (s.local_addr(), s.peer_addr()) else {
        return;
    };
    shared.emit(Event::Connected(ConnInfo { id, local, peer, tag: Tag::Reverse, peer_version: None, udp: false }));
    let ctx = StreamCtx { shared: shared.clone(), id, dir: Dir::Send, tag: Tag::Reverse, group: shared.group(1) };
    tcp::send(&s, &[], len, stop, true, &ctx);
}
