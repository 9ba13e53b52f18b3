//! The TCP stream loops: write until the time or byte budget is spent, read until the peer
//! closes. Both wake at least every 250 ms (socket timeouts) so `-i` lines keep coming on an
//! idle link.

use super::{StreamCtx, Ticker, pattern};
use crate::config::Stop;
use crate::event::TcpSnap;
use crate::stats::Counter;
use std::io::{self, ErrorKind, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::time::{Duration, Instant};

const WAKE: Duration = Duration::from_millis(250);

/// Retransmit bookkeeping for `-e`: TCP_INFO gives a running total, lines show deltas.
struct TcpInfoTrack {
    last_retrans: u64,
}

impl TcpInfoTrack {
    fn snap(&mut self, sock: &TcpStream, total: bool) -> Option<TcpSnap> {
        let info = wireperf_sys::tcp_info(sock).ok()?;
        let all = u64::from(info.total_retrans);
        let retrans = if total { all } else { all.saturating_sub(self.last_retrans) };
        if !total {
            self.last_retrans = all;
        }
        Some(TcpSnap {
            retrans,
            cwnd: info.cwnd_bytes(),
            rtt_us: u64::from(info.rtt_us),
            rttvar_us: u64::from(info.rttvar_us),
        })
    }
}

fn is_timeout(e: &io::Error) -> bool {
    matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted)
}

/// Writes `header` then payload until `stop`; shuts down the write side; when `drain`, reads
/// until the peer closes (iperf 2 ends a client's timing at the server's close, and drains the
/// server's header ack this way). Reports intervals and the total.
pub(crate) fn send(sock: &TcpStream, header: &[u8], len: usize, stop: Stop, drain: bool, ctx: &StreamCtx) {
    let buf = pattern(len.max(1));
    let mut tick = Ticker::new(ctx.shared.interval);
    let mut count = Counter::new(len);
    let mut info = TcpInfoTrack { last_retrans: 0 };
    let _ = sock.set_write_timeout(Some(WAKE));
    let deadline = match stop {
        Stop::Time(d) => Some(tick.t0 + d),
        Stop::Bytes(_) => None,
    };
    let mut remaining = match stop {
        Stop::Bytes(b) => b,
        Stop::Time(_) => u64::MAX,
    };
    if !header.is_empty() {
        // The header goes out as its own write, as iperf 2 does; servers read it separately.
        match write_all_timed(sock, header) {
            Ok(()) => {
                count.add(header.len());
                remaining = remaining.saturating_sub(header.len() as u64);
            }
            Err(_) => remaining = 0,
        }
    }
    while remaining > 0 && deadline.is_none_or(|d| Instant::now() < d) {
        let n = (buf.len() as u64).min(remaining) as usize;
        match (&*sock).write(&buf[..n]) {
            Ok(0) => break,
            Ok(w) => {
                count.add(w);
                remaining -= w as u64;
            }
            Err(e) if is_timeout(&e) => {}
            Err(_) => {
                count.fail();
                break;
            }
        }
        if let Some(span) = tick.poll() {
            let tcp = if ctx.shared.enhanced { info.snap(sock, false) } else { None };
            ctx.sample(span, count.take_interval(), tcp, None, false);
        }
    }
    let _ = sock.shutdown(Shutdown::Write);
    if drain {
        drain_until_close(sock, Duration::from_secs(2));
    }
    let end = tick.elapsed();
    let tail = count.take_interval();
    if ctx.shared.interval.is_some() && tail.bytes > 0 && end - tick.last() > 0.05 {
        let tcp = if ctx.shared.enhanced { info.snap(sock, false) } else { None };
        ctx.sample((tick.last(), end), tail, tcp, None, false);
    }
    let tcp = if ctx.shared.enhanced { info.snap(sock, true) } else { None };
    ctx.sample((0.0, end), count.total(), tcp, None, true);
}

fn write_all_timed(mut sock: &TcpStream, mut b: &[u8]) -> io::Result<()> {
    let limit = Instant::now() + Duration::from_secs(10);
    while !b.is_empty() {
        match sock.write(b) {
            Ok(0) => return Err(ErrorKind::WriteZero.into()),
            Ok(n) => b = &b[n..],
            Err(e) if is_timeout(&e) && Instant::now() < limit => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Reads and discards until the peer closes or `wait` of silence passes.
pub(crate) fn drain_until_close(mut sock: &TcpStream, wait: Duration) {
    let _ = sock.set_read_timeout(Some(wait));
    let mut b = [0u8; 4096];
    loop {
        match sock.read(&mut b) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
}

/// Reads until the peer closes (or `limit` passes: a peer that never closes must not hang the
/// run), counting `already` bytes read before the loop (the header). Reports like `send`.
pub(crate) fn recv(mut sock: &TcpStream, len: usize, already: usize, limit: Option<Duration>, ctx: &StreamCtx) {
    let mut buf = vec![0u8; len.max(1)];
    let mut tick = Ticker::new(ctx.shared.interval);
    let mut count = Counter::new(len);
    if already > 0 {
        count.add(already);
    }
    let _ = sock.set_read_timeout(Some(WAKE));
    let deadline = limit.map(|l| tick.t0 + l);
    loop {
        match sock.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => count.add(n),
            Err(e) if is_timeout(&e) => {}
            Err(_) => break,
        }
        if let Some(span) = tick.poll() {
            ctx.sample(span, count.take_interval(), None, None, false);
        }
        if deadline.is_some_and(|d| Instant::now() >= d) {
            break;
        }
    }
    let end = tick.elapsed();
    let tail = count.take_interval();
    if ctx.shared.interval.is_some() && tail.bytes > 0 && end - tick.last() > 0.05 {
        ctx.sample((tick.last(), end), tail, None, None, false);
    }
    ctx.sample((0.0, end), count.total(), None, None, true);
}
