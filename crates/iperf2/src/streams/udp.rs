//! UDP: the paced client with its FIN handshake, and the server session that accounts loss
//! and jitter and answers the FIN with its report.

use super::net::wildcard;
use super::{EngineError, Shared, StreamCtx, Ticker, pattern};
use crate::config::{ClientConfig, DEFAULT_UDP_LEN, ServerConfig, Stop};
use crate::event::{ConnInfo, Dir, Event, Group, Tag};
use crate::stats::{Counter, UdpRecv};
use crate::wire::*;
use std::io::ErrorKind;
use std::net::{SocketAddr, UdpSocket};
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use wireperf_engine::timing::Pacing;

/// Wall-clock now, seconds: datagram timestamps are wall clock so the server can compute
/// one-way transit (meaningful when clocks are synced; jitter needs only differences).
fn wall() -> (u32, u32, f64) {
    let d = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    (d.as_secs() as u32, d.subsec_micros(), d.as_secs_f64())
}

/// How often the client repeats its FIN while waiting for the report, and how many times
/// (iperf 2: every 10 ms for 2 s).
const FIN_RETRY: Duration = Duration::from_millis(10);
const FIN_TRIES: u32 = 200;

/// One UDP client stream: header in the first datagram, paced datagrams, FIN, report.
pub(crate) fn client_stream(
    addr: SocketAddr,
    cfg: &ClientConfig,
    shared: &Shared,
    group: Group,
) -> Result<(), EngineError> {
    let sock = UdpSocket::bind(wildcard(&addr, 0))?;
    sock.connect(addr).map_err(EngineError::Connect)?;
    let id = shared.id();
    shared.emit(Event::Connected(ConnInfo {
        id,
        local: sock.local_addr()?,
        peer: addr,
        tag: Tag::Plain,
        peer_version: None,
        udp: true,
    }));
    let len = cfg.len.unwrap_or(DEFAULT_UDP_LEN).max(UDP_EXT_HEADER_LEN);
    let mut buf = pattern(len);
    let hdr = super::client_header::client_header(cfg).encode(UDP_HDR_LEN);
    buf[UDP_HDR_LEN..UDP_HDR_LEN + hdr.len()].copy_from_slice(&hdr);
    let ctx = StreamCtx { shared: shared.clone(), id, dir: Dir::Send, tag: Tag::Plain, group };
    let mut tick = Ticker::new(shared.interval);
    let mut count = Counter::new(len);
    // iperf 2 always paces (its default is 1 Mbit/s): a rate of 0 is taken as 1 bit/s.
    let pacing = Pacing::new(len, cfg.rate.max(1), 1);
    let (deadline, mut budget) = match cfg.stop {
        Stop::Time(d) => (Some(tick.t0 + d), u64::MAX),
        Stop::Bytes(b) => (None, b),
    };
    let mut seq: i64 = 1;
    loop {
        let now = Instant::now();
        if deadline.is_some_and(|d| now >= d) || budget == 0 {
            break;
        }
        // Pace by count, not by gap: a late wake-up is made good by the next sends, so the
        // average rate holds even though sleeps overshoot.
        if let Some(pace) = &pacing {
            let due = tick.t0 + Duration::from_secs_f64(pace.slot_time((seq - 1) as u64));
            if due > now {
                thread::sleep(due - now);
            }
        }
        let (sec, usec, _) = wall();
        UdpHeader { id: seq, sec, usec }.write(&mut buf)?;
        match sock.send(&buf) {
            Ok(n) => {
                count.add(n);
                budget = budget.saturating_sub(n as u64);
                seq += 1;
            }
            // No buffer space, or an ICMP refusal from a late server: count and go on.
            Err(_) => count.fail(),
        }
        if let Some(span) = tick.poll() {
            ctx.sample(span, count.take_interval(), None, None, false);
        }
    }
    let end = tick.elapsed();
    ctx.sample((0.0, end), count.total(), None, None, true);
    shared.emit(Event::UdpSent { id, datagrams: seq as u64 });
    await_report(&sock, &mut buf, seq, id, shared);
    Ok(())
}

/// Sends the FIN (sequence negated) and repeats it, one further from zero each time, until
/// the server's report arrives.
fn await_report(sock: &UdpSocket, buf: &mut [u8], mut seq: i64, id: u32, shared: &Shared) {
    let _ = sock.set_read_timeout(Some(FIN_RETRY));
    let mut rx = vec![0u8; 65536];
    for _ in 0..FIN_TRIES {
        let (sec, usec, _) = wall();
        if (UdpHeader { id: -seq, sec, usec }).write(buf).is_ok() {
            let _ = sock.send(buf);
        }
        match sock.recv(&mut rx) {
            // A stale 2.0.13 header ack is not the report.
            Ok(n) if n == ACK_LEN && ClientAck::decode(&rx[..n]).is_ok_and(|a| a.is_some()) => {}
            Ok(n) => {
                if let Ok(report) = ServerReport::decode(&rx[..n]) {
                    shared.emit(Event::ServerReport { id, report });
                }
                return;
            }
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => seq += 1,
            Err(_) => seq += 1,
        }
    }
    shared.emit(Event::Warning(format!("[{id:3}] WARNING: did not receive ack of last datagram after 10 tries.")));
}

/// A server session on a socket connected to one client, starting with its first datagram.
pub(crate) fn server_session(sock: UdpSocket, first: Vec<u8>, peer: SocketAddr, cfg: &ServerConfig, shared: &Shared) {
    let flags = if first.len() >= UDP_HDR_LEN + 4 {
        u32::from_be_bytes([first[16], first[17], first[18], first[19]])
    } else {
        0
    };
    let seq64 = flags & HEADER_SEQNO64B != 0;
    let hdr = first.get(UDP_HDR_LEN..).and_then(|b| ClientHeader::decode(b).ok());
    let id = shared.id();
    let Ok(local) = sock.local_addr() else { return };
    shared.emit(Event::Connected(ConnInfo {
        id,
        local,
        peer,
        tag: Tag::Plain,
        peer_version: hdr.as_ref().and_then(ClientHeader::peer_version),
        udp: true,
    }));
    let ctx = StreamCtx { shared: shared.clone(), id, dir: Dir::Recv, tag: Tag::Plain, group: shared.group(1) };
    let mut tick = Ticker::new(shared.interval);
    let mut count = Counter::new(cfg.len.unwrap_or(DEFAULT_UDP_LEN));
    let mut st = UdpRecv::default();
    let mut buf = vec![0u8; 65536];
    buf[..first.len()].copy_from_slice(&first);
    let mut n = first.len();
    // Idle limit: a client that vanishes without a FIN ends the session.
    let idle = Duration::from_secs(10);
    let _ = sock.set_read_timeout(Some(Duration::from_millis(100)));
    let mut last_rx = Instant::now();
    let mut last_time = 0.0;
    loop {
        if n > 0 {
            last_rx = Instant::now();
            let (_, _, now) = wall();
            if let Ok(h) = UdpHeader::read(&buf[..n], seq64) {
                count.add(n);
                last_time = tick.elapsed();
                st.on_datagram(h.id.saturating_abs(), h.sent_secs(), now);
                if h.id < 0 {
                    break;
                }
            }
        }
        if let Some(span) = tick.poll() {
            ctx.sample(span, count.take_interval(), None, Some(st.take_interval()), false);
        }
        n = match sock.recv(&mut buf) {
            Ok(n) => n,
            Err(_) if last_rx.elapsed() < idle => 0,
            Err(_) => break,
        };
    }
    let tail = count.take_interval();
    if shared.interval.is_some() && tail.bytes > 0 && last_time - tick.last() > 0.05 {
        ctx.sample((tick.last(), last_time), tail, None, Some(st.take_interval()), false);
    }
    ctx.sample((0.0, last_time), count.total(), None, Some(st.total()), true);
    send_report(&sock, &build_report(&count, &st, last_time, cfg.enhanced));
}

fn build_report(count: &Counter, st: &UdpRecv, secs: f64, enhanced: bool) -> ServerReport {
    let t = &st.transit;
    ServerReport {
        flags: HEADER_VERSION1 | HEADER_SEQNO64B | if enhanced { SERVER_HEADER_EXTEND } else { 0 },
        total_bytes: count.bytes,
        stop: SecUsec::from_f64(secs),
        errors: st.lost(),
        out_of_order: st.out_of_order,
        datagrams: st.max_id,
        jitter: SecUsec::from_f64(st.jitter.value()),
        transit: [
            SecUsec::from_f64(t.min),
            SecUsec::from_f64(t.max),
            SecUsec::from_f64(t.sum),
            SecUsec::from_f64(t.mean),
            // iperf 2 scales m2 (seconds squared) by 1e12 to keep it in range.
            SecUsec::from_f64(t.m2 * 1e12),
            SecUsec::default(),
        ],
        cnt_transit: t.cnt.min(i32::MAX as u64) as i32,
        cnt_ipg: if secs > 0.0 { (st.received as f64 / secs) as i32 } else { 0 },
        ipg_sum: 1,
    }
}

/// Sends the report, then listens for silence: more FINs mean it was lost, so resend.
fn send_report(sock: &UdpSocket, r: &ServerReport) {
    let bytes = r.encode();
    let _ = sock.set_read_timeout(Some(Duration::from_millis(250)));
    let mut sink = vec![0u8; 65536];
    for _ in 0..10 {
        let _ = sock.send(&bytes);
        match sock.recv(&mut sink) {
            Ok(_) => continue,
            Err(_) => return,
        }
    }
}
