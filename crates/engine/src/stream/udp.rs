//! UDP streams: iperf3's connect handshake, the paced sender and the counting receiver.
//!
//! Wire format (reference/iperf3-protocol.md §3.3–3.4): every datagram is exactly `len` bytes
//! and starts with the sender's CLOCK_MONOTONIC time (seconds, microseconds) and a sequence
//! number from 1 (32 or 64 bits), all big-endian. What wireperf does beyond iperf3:
//! * **Pacing** by schedule: datagram slot `k` is due at `start + k·len·8/rate` (groups of
//!   `burst` slots with `-b RATE/BURST`); the thread sleeps until the slots of one batch are due
//!   (those of up to 100 µs, [`crate::timing::Pacing::batch`]: one datagram below about
//!   120 Mbit/s, a whole GSO batch from about 5 Gbit/s) with a 1 µs timer slack, so datagrams
//!   leave evenly instead of in 100 ms bursts, and the average over a test meets the target.
//! * **Batching**: the due datagrams go out in one GSO `sendmsg` (or `sendmmsg` when the route
//!   refuses GSO); the peer still sees ordinary `len`-byte datagrams.
//! * **Honest sends**: `IP_RECVERR` makes a datagram the local queue drops fail with `ENOBUFS`;
//!   such a datagram (and one refused with `EAGAIN`) is counted as a sender-side drop, uses no
//!   sequence number, and its slot in the schedule passes (no catch-up burst). A refused GSO
//!   send of several datagrams is the exception: the stack may have cut it up and sent all but
//!   the last, so its datagrams count as sent and the receiver counts the missing ones lost.
//!   Only for `ENOBUFS`: `EAGAIN` means the send buffer was full and no datagram was made.
//! * **Receiving** with UDP GRO when the kernel has it (else `recvmmsg`), counting with
//!   [`super::udp_stats::UdpRecvStats`]: exact loss, out-of-order, duplicates, iperf3's jitter
//!   over each datagram's kernel receive time (`SO_TIMESTAMPNS`); datagrams a GRO packet
//!   coalesced share one time, so only its first feeds the jitter (the rest are `untimed`).

use super::budget::Claim;
use super::buffer::payload;
use super::context::LoopCtx;
use super::loop_end::LoopEnd;
use super::udp_stats::UdpRecvStats;
use crate::error::EngineError;
use crate::timing::{PaceStep, Pacing};
use socket2::{Domain, Protocol as SockProto, SockAddr, Socket, Type};
use std::io::{self, ErrorKind};
use std::net::{IpAddr, SocketAddr, UdpSocket};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};
use wireperf_protocol::udp::{CONNECT_MSG, CONNECT_REPLY, UdpHeader, is_connect_reply};
use wireperf_sys::udp_batch::{MAX_BATCH, recv_batch};
use wireperf_sys::udp_gso::{GRO_BUF_LEN, UdpSender, recv_gro, set_gro};

/// How often a blocked stream thread looks at its stop flag.
const POLL: Duration = Duration::from_millis(50);

/// Longest sleep of a pacing sender between checks of its stop flag: the test's end waits for
/// the senders to stop, so a long sleep (26 ms between 32 KiB datagrams at 10 Mbit/s) would
/// stretch the measured time.
const PACE_SLEEP_MAX: Duration = Duration::from_millis(2);

/// Receive buffer the UDP streams of one direction ask for together when `-w` is not given,
/// and the least each asks for ([`default_recv_buffer`]).
///
/// The kernel default (208 KiB) overflows within milliseconds at gigabit rates, which is the
/// most common cause of "UDP loss that captures don't show". A receiver that is not running
/// when datagrams arrive (descheduled on a busy host) loses what does not fit: measured on the
/// 2-core VM at a load of 7, one 10 Gbit/s loopback stream lost 1.2–1.7 % into the old 4 MiB
/// request (8 MiB as the kernel counts it) and nothing into 16 MiB (32 MiB), up to 14 Gbit/s.
/// The memory is the kernel's and only taken while datagrams wait to be read.
pub(crate) const UDP_RCVBUF_BUDGET: usize = 16 * 1024 * 1024;
/// See [`UDP_RCVBUF_BUDGET`].
pub(crate) const UDP_RCVBUF_MIN: usize = 4 * 1024 * 1024;

/// The receive buffer one of `streams` UDP streams asks for without `-w`: an equal share of
/// [`UDP_RCVBUF_BUDGET`], at least [`UDP_RCVBUF_MIN`]. Past `net.core.rmem_max` only when
/// privileged ([`wireperf_sys::sockopt::raise_recv_buffer`]).
pub(crate) fn default_recv_buffer(streams: u32) -> usize {
    (UDP_RCVBUF_BUDGET / streams.max(1) as usize).max(UDP_RCVBUF_MIN)
}

/// Socket options of a UDP data socket (client and server).
#[derive(Clone, Debug, Default)]
pub(crate) struct UdpOptions {
    /// `-w`.
    pub window: Option<u32>,
    /// `-S`/`--dscp`.
    pub tos: Option<i32>,
    /// `--fq-rate` in bit/s (sending sockets).
    pub fqrate: Option<u64>,
    /// `--dont-fragment`.
    pub dont_fragment: bool,
    /// `-B %dev`.
    pub bind_dev: Option<String>,
    /// The receive buffer a receiving socket asks for without `-w` ([`default_recv_buffer`]).
    pub default_rcvbuf: usize,
}

fn opt_err(what: &'static str) -> impl FnOnce(io::Error) -> EngineError {
    move |err| EngineError::SocketOption { what, err }
}

/// Applies the options; `sender` says which direction the socket will carry.
pub(crate) fn apply_options(sock: &UdpSocket, o: &UdpOptions, sender: bool) -> Result<(), EngineError> {
    use wireperf_sys::sockopt;
    match o.window {
        Some(w) => {
            sockopt::set_send_buffer(sock, w as usize).map_err(opt_err("unable to set socket window size"))?;
            sockopt::set_recv_buffer(sock, w as usize).map_err(opt_err("unable to set socket window size"))?;
        }
        None if !sender => {
            let _ = sockopt::raise_recv_buffer(sock, o.default_rcvbuf.max(UDP_RCVBUF_MIN));
        }
        None => {}
    }
    if let Some(tos) = o.tos {
        sockopt::set_tos(sock, tos as u8).map_err(opt_err("unable to set IP TOS"))?;
    }
    if let Some(rate) = o.fqrate.filter(|_| sender) {
        sockopt::set_max_pacing_rate(sock, rate / 8).map_err(opt_err("unable to set socket pacing"))?;
    }
    if o.dont_fragment {
        sockopt::set_dont_fragment(sock, true).map_err(opt_err("unable to set IP Do-Not-Fragment flag"))?;
    }
    Ok(())
}

fn new_socket(addr: SocketAddr, dev: Option<&str>) -> io::Result<Socket> {
    let sock = Socket::new(Domain::for_address(addr), Type::DGRAM, Some(SockProto::UDP))?;
    if let Some(d) = dev {
        wireperf_sys::sockopt::bind_to_device(&sock, Some(d))?;
    }
    Ok(sock)
}

/// Client side of the handshake for one stream: bind (`--cport`), connect, send "9876", wait
/// for "6789" (or the pre-3.12 reply). A receiving stream tolerates data datagrams overtaking
/// the reply, as iperf3 does. The request is repeated every second until `timeout`, because a
/// lost request would otherwise stall the test (a repeat can only reach the server's new
/// listening socket if the first one was lost).
pub(crate) fn client_handshake(
    server: SocketAddr,
    bind: Option<IpAddr>,
    bind_port: Option<u16>,
    opts: &UdpOptions,
    sender: bool,
    len: usize,
    timeout: Duration,
) -> Result<UdpSocket, EngineError> {
    let conn = EngineError::StreamConnect;
    let sock = new_socket(server, opts.bind_dev.as_deref()).map_err(conn)?;
    if bind.is_some() || bind_port.is_some() {
        let ip = bind.unwrap_or(match server {
            SocketAddr::V4(_) => IpAddr::from([0, 0, 0, 0]),
            SocketAddr::V6(_) => IpAddr::from([0u16; 8]),
        });
        sock.set_reuse_address(true).map_err(EngineError::StreamConnect)?;
        sock.bind(&SockAddr::from(SocketAddr::new(ip, bind_port.unwrap_or(0)))).map_err(EngineError::StreamConnect)?;
    }
    let sock: UdpSocket = sock.into();
    apply_options(&sock, opts, sender)?;
    sock.connect(server).map_err(EngineError::StreamConnect)?;
    sock.set_read_timeout(Some(Duration::from_secs(1))).map_err(EngineError::StreamConnect)?;
    let read_err = |err| EngineError::Stream { op: "read from", err };
    let deadline = Instant::now() + timeout;
    // Reverse: up to 4 + 2·len bytes of 4-byte reads may be data that overtook the reply.
    let mut budget = if sender { 1 } else { (4 + 2 * len) / 4 + 1 };
    let mut buf = [0u8; 4];
    sock.send(&CONNECT_MSG).map_err(EngineError::StreamConnect)?;
    loop {
        match sock.recv(&mut buf) {
            Ok(n) if n >= 4 && is_connect_reply(&buf) => break,
            Ok(_) => {
                budget -= 1;
                if budget == 0 {
                    let err = io::Error::new(ErrorKind::InvalidData, "unexpected UDP connect reply");
                    return Err(read_err(err));
                }
            }
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                if Instant::now() >= deadline {
                    return Err(read_err(e));
                }
                sock.send(&CONNECT_MSG).map_err(EngineError::StreamConnect)?;
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(read_err(e)),
        }
    }
    Ok(sock)
}

/// Binds a UDP socket on the server's address and port for the next handshake.
pub(crate) fn server_listen(local: SocketAddr, dev: Option<&str>) -> Result<UdpSocket, EngineError> {
    let sock = new_socket(local, dev).map_err(EngineError::Listen)?;
    sock.set_reuse_address(true).map_err(EngineError::Listen)?;
    if local.is_ipv6() {
        let _ = sock.set_only_v6(false);
    }
    sock.bind(&SockAddr::from(local)).map_err(EngineError::Listen)?;
    Ok(sock.into())
}

/// Server side of the handshakes: on `first` (bound before CREATE_STREAMS went out), `n` times:
/// wait for any datagram, connect to its sender, bind a new listening socket for the next
/// stream, answer "6789". `poll` runs every 100 ms of waiting and may abort (control connection
/// closed, interrupt). Returns the connected sockets in handshake order.
pub(crate) fn server_handshakes(
    first: UdpSocket,
    n: usize,
    opts: &UdpOptions,
    deadline: Instant,
    poll: &mut dyn FnMut() -> Result<(), EngineError>,
) -> Result<Vec<UdpSocket>, EngineError> {
    let local = first.local_addr().map_err(EngineError::Listen)?;
    let mut listen = first;
    let mut out = Vec::with_capacity(n);
    let mut buf = [0u8; 64];
    for i in 0..n {
        listen.set_read_timeout(Some(Duration::from_millis(100))).map_err(EngineError::Listen)?;
        let peer = loop {
            match listen.recv_from(&mut buf) {
                Ok((_, peer)) => break peer,
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted) => {
                    poll()?;
                    if Instant::now() >= deadline {
                        return Err(EngineError::Timeout("for the UDP stream handshakes"));
                    }
                }
                Err(err) => return Err(EngineError::Stream { op: "read from", err }),
            }
        };
        listen.connect(peer).map_err(EngineError::StreamConnect)?;
        let next = if i + 1 < n { Some(server_listen(local, opts.bind_dev.as_deref())?) } else { None };
        listen.send(&CONNECT_REPLY).map_err(|err| EngineError::Stream { op: "write to", err })?;
        out.push(listen);
        match next {
            Some(s) => listen = s,
            None => break,
        }
    }
    Ok(out)
}

fn is_refusal(e: &io::Error) -> bool {
    matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) || e.raw_os_error() == Some(libc::ENOBUFS)
}

/// Sends paced datagrams until stopped, the budget is spent, or the socket fails.
pub(crate) fn send_loop(sock: &UdpSocket, ctx: &LoopCtx<'_>) -> Result<LoopEnd, EngineError> {
    let LoopCtx { spec, counters, stop, budget, .. } = *ctx;
    let werr = |err| EngineError::Stream { op: "write to", err };
    sock.set_write_timeout(Some(POLL)).map_err(werr)?;
    let _ = wireperf_sys::sockopt::set_recverr(sock, true);
    let _ = wireperf_sys::clock::set_timer_slack(1_000);
    let wide = spec.udp.counters_64bit;
    let len = spec.len.clamp(UdpHeader::len(wide), 65_507);
    let mut sender = if spec.udp.offload { UdpSender::new(sock) } else { UdpSender::without_gso() };
    let batch = sender.max_datagrams(len).clamp(1, MAX_BATCH);
    let one = payload(len, spec.repeating_payload);
    let mut buf = Vec::with_capacity(len * batch);
    for _ in 0..batch {
        buf.extend_from_slice(&one);
    }
    let pacing = Pacing::new(len, spec.rate, spec.udp.burst);
    // A paced sender lets a batch's worth of slots come due before it sends (see `Pacing::batch`).
    let gather = pacing.map_or(1, |p| p.batch(batch as u64));
    let u = &counters.udp;
    let start = Instant::now();
    let (mut sent, mut slots, mut drops) = (0u64, 0u64, 0u64);
    loop {
        if stop.load(Ordering::Relaxed) {
            return Ok(LoopEnd::Stopped);
        }
        let mut k = batch as u64;
        if let Some(pace) = &pacing {
            match pace.step(start.elapsed().as_secs_f64(), slots, gather) {
                PaceStep::WaitUntil(at) => {
                    let next = start + Duration::from_secs_f64(at);
                    let now = Instant::now();
                    if next > now {
                        std::thread::sleep((next - now).min(PACE_SLEEP_MAX));
                    }
                    continue;
                }
                PaceStep::Send(due) => k = k.min(due),
            }
        }
        let mut k = k as usize;
        if let Some(b) = budget {
            k = match b.claim(k, len as u64) {
                Claim::Granted(n) => n,
                Claim::Spent => return Ok(LoopEnd::Spent),
                Claim::Done => return Ok(LoopEnd::Budget),
            };
        }
        // The datagrams of one call carry its send time: the clock read once, just before the
        // batch goes to the kernel, which takes them all at that moment. (Read per datagram, as
        // iperf3's senders do, the clock was 17 % of a 10 Gbit/s sender's CPU time, and the
        // times of one batch differed by under a microsecond, the header's resolution.)
        let now = wireperf_sys::clock::monotonic();
        let (sec, usec) = (now.as_secs() as u32, now.subsec_micros());
        for (i, d) in buf.chunks_mut(len).take(k).enumerate() {
            UdpHeader { sec, usec, seq: sent + 1 + i as u64 }.write(d, wide);
        }
        let gso_batch = k > 1 && sender.gso_enabled();
        let res = sender.send(sock, &buf[..k * len], len);
        // The claimed datagrams had their one try (sent, or a sender drop, as iperf3 counts).
        if let Some(b) = budget {
            b.written(k);
        }
        match res {
            Ok(n) => {
                let n = n.min(k) as u64;
                sent += n;
                slots += n;
                u.packets.store(sent, Ordering::Relaxed);
                counters.bytes.store(sent * len as u64, Ordering::Relaxed);
            }
            // A GSO packet the stack cut into datagrams after the call began: `ENOBUFS` is the
            // last datagram's fate, the others may be on the wire with their numbers. They
            // count as sent, so the numbers stay unique and the receiver counts exactly those
            // that never came (a device drop on the path), instead of the next batch reusing
            // numbers that already arrived. `EAGAIN` (a full send buffer) comes before any
            // datagram exists: that batch was not sent, as below.
            Err(e) if e.raw_os_error() == Some(libc::ENOBUFS) && gso_batch && sender.gso_enabled() => {
                sent += k as u64;
                slots += k as u64;
                u.packets.store(sent, Ordering::Relaxed);
                counters.bytes.store(sent * len as u64, Ordering::Relaxed);
            }
            Err(e) if is_refusal(&e) => {
                // Not sent: no sequence number used; the slots pass.
                drops += k as u64;
                slots += k as u64;
                u.send_drops.store(drops, Ordering::Relaxed);
                if spec.rate == 0 {
                    std::thread::sleep(Duration::from_micros(100));
                }
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(err) => {
                if stop.load(Ordering::Relaxed) {
                    return Ok(LoopEnd::Stopped);
                }
                return Err(werr(err));
            }
        }
    }
}

/// Receives datagrams until stopped or failure, counting every one with a header (including
/// those that arrive while the test drains, so totals are exact).
pub(crate) fn recv_loop(sock: &UdpSocket, ctx: &LoopCtx<'_>) -> Result<LoopEnd, EngineError> {
    let LoopCtx { spec, counters, stop, budget, on_budget } = *ctx;
    let rerr = |err| EngineError::Stream { op: "read from", err };
    sock.set_read_timeout(Some(POLL)).map_err(rerr)?;
    let wide = spec.udp.counters_64bit;
    let gro = spec.udp.offload && set_gro(sock, true).is_ok();
    counters.udp.gro.store(gro, Ordering::Relaxed);
    // The kernel's receive time of every datagram (of every GRO packet), for jitter.
    let _ = wireperf_sys::sockopt::set_timestampns(sock, true);
    let slot = spec.len.clamp(16, 65_536);
    let mut buf = vec![0u8; if gro { GRO_BUF_LEN.max(slot) } else { slot * MAX_BATCH }];
    let mut lens = [0usize; MAX_BATCH];
    let mut stamps = [None; MAX_BATCH];
    let mut stats = UdpRecvStats::new();
    let u = &counters.udp;
    let mut bytes = 0u64;
    let mut last_data = Instant::now();
    loop {
        // One receive call: a GRO packet, or a recvmmsg batch.
        let got = if gro {
            recv_gro(sock, &mut buf).map(|p| (0, Some(p)))
        } else {
            recv_batch(sock, &mut buf, slot, &mut lens, &mut stamps).map(|c| (c, None))
        };
        match got {
            Ok((count, packet)) => {
                let read_at = wireperf_sys::clock::monotonic();
                let offset = wireperf_sys::clock::realtime_offset();
                // A datagram's arrival: its kernel receive time; without one, the read time
                // stands in for the first datagram of the call only (the others would share
                // it, so they get none and stay out of the jitter).
                let arrival = |stamp: Option<Duration>, first: bool| {
                    stamp.map(|t| t.saturating_sub(offset)).or(first.then_some(read_at)).map(|t| t.as_secs_f64())
                };
                if u.reset_jitter.swap(false, Ordering::Relaxed) {
                    stats.reset_jitter();
                }
                let mut crossed = false;
                let mut visit = |d: &[u8], arrival: Option<f64>| {
                    if d.is_empty() {
                        return;
                    }
                    bytes += d.len() as u64;
                    if let Some(h) = UdpHeader::read(d, wide) {
                        stats.record(h.seq, h.time_secs(), arrival);
                    }
                    if budget.is_some_and(|b| b.record(d.len() as u64)) {
                        crossed = true;
                    }
                };
                match packet {
                    // A coalesced packet has one receive time: its first datagram's.
                    Some(p) => buf[..p.bytes]
                        .chunks(p.segment.max(1))
                        .enumerate()
                        .for_each(|(i, d)| visit(d, if i == 0 { arrival(p.stamp, true) } else { None })),
                    None => {
                        for (i, &l) in lens[..count].iter().enumerate() {
                            visit(&buf[i * slot..i * slot + l], arrival(stamps[i], i == 0));
                        }
                    }
                }
                u.store_recv(&stats.totals());
                counters.bytes.store(bytes, Ordering::Relaxed);
                let now_us = wireperf_sys::clock::monotonic().as_micros() as u64;
                u.last_rx_us.store(now_us, Ordering::Relaxed);
                last_data = Instant::now();
                if crossed {
                    on_budget();
                }
                if stop.load(Ordering::Relaxed) {
                    return Ok(LoopEnd::Stopped);
                }
            }
            Err(e) => {
                // A connected UDP socket also reports the peer's ICMP "port unreachable" as
                // ECONNREFUSED on a read: transient here, the peer may not be up yet.
                let transient = matches!(
                    e.kind(),
                    ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted | ErrorKind::ConnectionRefused
                );
                let silent = last_data.elapsed();
                if let Some(end) = super::after_read_error(e, transient, stop, counters, silent, spec.rcv_timeout, rerr)
                {
                    return end;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::default_recv_buffer;

    #[test]
    fn receive_buffers_share_16_mib_and_keep_4_each() {
        const MIB: usize = 1 << 20;
        assert_eq!(default_recv_buffer(1), 16 * MIB);
        assert_eq!(default_recv_buffer(2), 8 * MIB);
        assert_eq!(default_recv_buffer(4), 4 * MIB);
        assert_eq!(default_recv_buffer(128), 4 * MIB, "never below the old 4 MiB");
        assert_eq!(default_recv_buffer(0), 16 * MIB);
    }
}
