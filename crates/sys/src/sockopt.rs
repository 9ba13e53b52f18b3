//! Socket options behind iperf3's flags, on any socket that implements [`AsFd`].
//!
//! | iperf3 flag | here |
//! |---|---|
//! | `-C algo` | [`set_congestion`] / [`congestion`] (`TCP_CONGESTION`) |
//! | `-M mss` | [`set_mss`] / [`mss`] (`TCP_MAXSEG`) |
//! | `-w n` | [`set_send_buffer`], [`set_recv_buffer`] and getters (`SO_SNDBUF`/`SO_RCVBUF`) |
//! | UDP receive buffer without `-w` | [`raise_recv_buffer`] (`SO_RCVBUF`, past `rmem_max` with `SO_RCVBUFFORCE` when privileged) |
//! | `-S tos` | [`set_tos`] / [`tos`] (`IP_TOS` or `IPV6_TCLASS` by family) |
//! | `--bind-dev` (`%dev` in `-B`) | [`bind_to_device`] / [`bound_device`] (`SO_BINDTODEVICE`) |
//! | `--snd-timeout ms` | [`set_user_timeout`] / [`user_timeout`] (`TCP_USER_TIMEOUT`) |
//! | `--cntl-ka[=idle/intv/cnt]` | [`set_keepalive`] / [`keepalive`] |
//! | `-N` | [`set_nodelay`] / [`nodelay`] (`TCP_NODELAY`) |
//! | `--fq-rate` | [`set_max_pacing_rate`] / [`max_pacing_rate`] (`SO_MAX_PACING_RATE`) |
//! | `--dont-fragment` | [`set_dont_fragment`] / [`dont_fragment`] |
//! | UDP receive drops | [`set_rxq_ovfl`] / [`rxq_ovfl`], read with [`crate::drop_counter`]; the same counter at any time with [`socket_drops`] |
//! | fast TCP receivers (no flag) | [`set_recv_lowat`] / [`recv_lowat`] (`SO_RCVLOWAT`) |
//! | UDP drain (no flag) | [`receive_queue_bytes`] (`SO_MEMINFO`) |
//! | exact UDP sends | [`set_recverr`] (`IP_RECVERR`: a datagram dropped by the local qdisc fails with `ENOBUFS` instead of vanishing) |
//!
//! socket2 (through [`SockRef`]) covers what it can; libc covers the rest (pacing, PMTU
//! discovery, `SO_RXQ_OVFL`). TCP-only options on a UDP socket fail with the kernel's errno
//! (`EOPNOTSUPP`/`ENOPROTOOPT`); nothing here panics.

use std::io;
use std::os::fd::AsFd;
use std::time::Duration;

use socket2::{Domain, SockRef, TcpKeepalive};

use crate::raw;

fn is_ipv6(fd: &impl AsFd) -> io::Result<bool> {
    Ok(SockRef::from(fd).domain()? == Domain::IPV6)
}

fn invalid(msg: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, msg)
}

/// Sets the TCP congestion control algorithm (`-C`), e.g. `"cubic"`, `"bbr"`, `"reno"`.
///
/// Errors: `ENOENT` if the kernel has no such algorithm (and cannot autoload its module),
/// `EPERM` if it is not in `net.ipv4.tcp_allowed_congestion_control` for an unprivileged user,
/// `InvalidInput` for a name with a NUL byte or longer than the kernel's 15-byte limit.
pub fn set_congestion(fd: impl AsFd, name: &str) -> io::Result<()> {
    if name.is_empty() || name.len() > 15 || name.contains('\0') {
        return Err(invalid(format!("invalid congestion control name {name:?}")));
    }
    SockRef::from(&fd).set_tcp_congestion(name.as_bytes())
}

/// The congestion control algorithm in use: the `congestion_used` key of iperf3's results.
pub fn congestion(fd: impl AsFd) -> io::Result<String> {
    let raw = SockRef::from(&fd).tcp_congestion()?;
    // The kernel fills a fixed 16-byte buffer; the name ends at the first NUL.
    let end = raw.iter().position(|&b| b == 0).unwrap_or(raw.len());
    Ok(String::from_utf8_lossy(&raw[..end]).into_owned())
}

/// Sets the maximum segment size (`-M`). Must be called before `connect`/`listen` to affect
/// the MSS advertised in the SYN; the kernel rejects values below 88 (`EINVAL`).
pub fn set_mss(fd: impl AsFd, mss: u32) -> io::Result<()> {
    SockRef::from(&fd).set_tcp_mss(mss)
}

/// `TCP_MAXSEG`: before connecting, the configured value (536 by default); once connected, the
/// effective sending MSS.
pub fn mss(fd: impl AsFd) -> io::Result<u32> {
    SockRef::from(&fd).tcp_mss()
}

/// Requests a send buffer of `bytes` (`-w`). Linux doubles the value for bookkeeping overhead
/// and caps the request at `net.core.wmem_max`; read back what it chose with [`send_buffer`].
pub fn set_send_buffer(fd: impl AsFd, bytes: usize) -> io::Result<()> {
    SockRef::from(&fd).set_send_buffer_size(bytes)
}

/// Send buffer size as the kernel reports it (double the granted request), which is what
/// iperf3 prints and sends as `sndbuf_actual`.
pub fn send_buffer(fd: impl AsFd) -> io::Result<usize> {
    SockRef::from(&fd).send_buffer_size()
}

/// Requests a receive buffer of `bytes` (`-w`); doubled and capped at `net.core.rmem_max`.
pub fn set_recv_buffer(fd: impl AsFd, bytes: usize) -> io::Result<()> {
    SockRef::from(&fd).set_recv_buffer_size(bytes)
}

/// Asks for a receive buffer of `bytes` where no `-w` was given: `SO_RCVBUF`, which the kernel
/// caps at `net.core.rmem_max`; when that left the buffer below the request (doubled: the
/// kernel doubles every request for its bookkeeping) and the process is
/// privileged (`CAP_NET_ADMIN`), `SO_RCVBUFFORCE`, which is not capped (as WireGuard and
/// QUIC stacks do for their UDP sockets). Returns the buffer the kernel reports (doubled, as
/// always on Linux); an unprivileged process keeps the capped one without an error.
pub fn raise_recv_buffer(fd: impl AsFd, bytes: usize) -> io::Result<usize> {
    set_recv_buffer(&fd, bytes)?;
    let got = recv_buffer(&fd)?;
    if got >= bytes.saturating_mul(2) {
        return Ok(got);
    }
    let v = libc::c_int::try_from(bytes).unwrap_or(libc::c_int::MAX);
    match raw::setsockopt(fd.as_fd(), libc::SOL_SOCKET, libc::SO_RCVBUFFORCE, &v) {
        Ok(()) => recv_buffer(&fd),
        Err(e) if e.raw_os_error() == Some(libc::EPERM) => Ok(got),
        Err(e) => Err(e),
    }
}

/// Receive buffer size as the kernel reports it (`rcvbuf_actual` in iperf3's output).
pub fn recv_buffer(fd: impl AsFd) -> io::Result<usize> {
    SockRef::from(&fd).recv_buffer_size()
}

/// Sets the type-of-service byte (`-S`), choosing the option by address family like iperf3:
/// `IP_TOS` on IPv4 sockets; `IPV6_TCLASS` on IPv6 sockets, plus `IP_TOS` there as well so that
/// traffic to a v4-mapped address (`::ffff:a.b.c.d`, which leaves as IPv4) is marked too.
pub fn set_tos(fd: impl AsFd, tos: u8) -> io::Result<()> {
    let sock = SockRef::from(&fd);
    if is_ipv6(&fd)? {
        sock.set_tclass_v6(u32::from(tos))?;
    }
    sock.set_tos_v4(u32::from(tos))
}

/// The type-of-service byte: `IPV6_TCLASS` on IPv6 sockets, `IP_TOS` on IPv4.
pub fn tos(fd: impl AsFd) -> io::Result<u8> {
    let sock = SockRef::from(&fd);
    let v = if is_ipv6(&fd)? { sock.tclass_v6()? } else { sock.tos_v4()? };
    // Both options hold a single byte; mask rather than fail on an impossible wider value.
    Ok((v & 0xff) as u8)
}

/// Binds the socket to a network interface (`SO_BINDTODEVICE`), or removes the binding with
/// `None`. Needs `CAP_NET_RAW` on kernels before 5.7.
///
/// Errors: `ENODEV` for an unknown interface, `InvalidInput` for a name longer than 15 bytes
/// (the kernel would silently truncate it and bind to a different interface) or with a NUL.
pub fn bind_to_device(fd: impl AsFd, iface: Option<&str>) -> io::Result<()> {
    if let Some(name) = iface
        && (name.is_empty() || name.len() >= libc::IFNAMSIZ || name.contains('\0'))
    {
        return Err(invalid(format!("invalid interface name {name:?}")));
    }
    SockRef::from(&fd).bind_device(iface.map(str::as_bytes))
}

/// The interface the socket is bound to, if any.
pub fn bound_device(fd: impl AsFd) -> io::Result<Option<String>> {
    let dev = SockRef::from(&fd).device()?;
    Ok(dev.map(|d| String::from_utf8_lossy(&d).into_owned()))
}

/// Sets `TCP_USER_TIMEOUT` in milliseconds (`--snd-timeout`): how long transmitted data may
/// stay unacknowledged before the kernel aborts the connection with `ETIMEDOUT`. 0 restores
/// the system default.
pub fn set_user_timeout(fd: impl AsFd, ms: u32) -> io::Result<()> {
    let timeout = (ms != 0).then(|| Duration::from_millis(u64::from(ms)));
    SockRef::from(&fd).set_tcp_user_timeout(timeout)
}

/// `TCP_USER_TIMEOUT` in milliseconds (0 = system default).
pub fn user_timeout(fd: impl AsFd) -> io::Result<u32> {
    let t = SockRef::from(&fd).tcp_user_timeout()?;
    Ok(t.map_or(0, |d| u32::try_from(d.as_millis()).unwrap_or(u32::MAX)))
}

/// TCP keepalive settings, as in iperf3's `--cntl-ka[=KEEPIDLE/KEEPINTV/KEEPCNT]`.
/// `None` leaves that parameter at the system default (`net.ipv4.tcp_keepalive_*`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Keepalive {
    /// Idle seconds before the first probe (`TCP_KEEPIDLE`).
    pub idle_secs: Option<u32>,
    /// Seconds between probes (`TCP_KEEPINTVL`).
    pub interval_secs: Option<u32>,
    /// Unanswered probes before the connection is dropped (`TCP_KEEPCNT`).
    pub count: Option<u32>,
}

/// Enables `SO_KEEPALIVE` and applies the given parameters.
///
/// Errors: `EINVAL` for zero or out-of-range values (the kernel allows idle and interval
/// 1..=32767 s, count 1..=127).
pub fn set_keepalive(fd: impl AsFd, ka: &Keepalive) -> io::Result<()> {
    let mut params = TcpKeepalive::new();
    if let Some(s) = ka.idle_secs {
        params = params.with_time(Duration::from_secs(u64::from(s)));
    }
    if let Some(s) = ka.interval_secs {
        params = params.with_interval(Duration::from_secs(u64::from(s)));
    }
    if let Some(n) = ka.count {
        params = params.with_retries(n);
    }
    SockRef::from(&fd).set_tcp_keepalive(&params)
}

/// The effective keepalive settings: `None` if `SO_KEEPALIVE` is off, otherwise all three
/// parameters as the kernel will use them (system defaults filled in).
pub fn keepalive(fd: impl AsFd) -> io::Result<Option<Keepalive>> {
    let sock = SockRef::from(&fd);
    if !sock.keepalive()? {
        return Ok(None);
    }
    let secs = |d: Duration| u32::try_from(d.as_secs()).unwrap_or(u32::MAX);
    Ok(Some(Keepalive {
        idle_secs: Some(secs(sock.tcp_keepalive_time()?)),
        interval_secs: Some(secs(sock.tcp_keepalive_interval()?)),
        count: Some(sock.tcp_keepalive_retries()?),
    }))
}

/// Sets `TCP_NODELAY` (`-N`): send small segments at once instead of coalescing (Nagle).
pub fn set_nodelay(fd: impl AsFd, on: bool) -> io::Result<()> {
    SockRef::from(&fd).set_tcp_nodelay(on)
}

/// Whether `TCP_NODELAY` is set.
pub fn nodelay(fd: impl AsFd) -> io::Result<bool> {
    SockRef::from(&fd).tcp_nodelay()
}

/// Caps the socket's pacing rate at `bytes_per_sec` (`SO_MAX_PACING_RATE`, iperf3's
/// `--fq-rate`, which takes bits/s: divide by 8). `u64::MAX` removes the cap.
///
/// TCP paces internally (Linux ≥ 4.13); UDP is paced only under the `fq` qdisc, which the
/// doctor should check. The 64-bit form needs a 64-bit kernel (Linux ≥ 4.20); on others the
/// low 32 bits are used.
pub fn set_max_pacing_rate(fd: impl AsFd, bytes_per_sec: u64) -> io::Result<()> {
    raw::setsockopt(fd.as_fd(), libc::SOL_SOCKET, libc::SO_MAX_PACING_RATE, &bytes_per_sec)
}

/// The pacing cap in bytes/s (`u64::MAX` when uncapped).
pub fn max_pacing_rate(fd: impl AsFd) -> io::Result<u64> {
    let (v, len) = raw::getsockopt::<u64>(fd.as_fd(), libc::SOL_SOCKET, libc::SO_MAX_PACING_RATE)?;
    // A kernel that answers with 32 bits uses ~0U for "no cap".
    if len == 4 && v == u64::from(u32::MAX) {
        return Ok(u64::MAX);
    }
    Ok(v)
}

/// Sets the receive low-water mark (`SO_RCVLOWAT`): a blocked read is woken, and returns, only
/// once `bytes` are queued (or the peer closed, the read timed out, or the kernel's
/// memory-pressure and small-window escapes fire). Linux ≥ 4.19 grows the receive buffer to fit.
pub fn set_recv_lowat(fd: impl AsFd, bytes: usize) -> io::Result<()> {
    let v = libc::c_int::try_from(bytes).map_err(|_| invalid(format!("low-water mark {bytes} is too large")))?;
    raw::setsockopt(fd.as_fd(), libc::SOL_SOCKET, libc::SO_RCVLOWAT, &v)
}

/// Sets `TCP_NOTSENT_LOWAT`: the socket is writable only while less than `bytes` of written
/// data wait unsent.
pub fn set_notsent_lowat(fd: impl AsFd, bytes: usize) -> io::Result<()> {
    let v = libc::c_int::try_from(bytes).map_err(|_| invalid(format!("low-water mark {bytes} is too large")))?;
    raw::setsockopt(fd.as_fd(), libc::IPPROTO_TCP, libc::TCP_NOTSENT_LOWAT, &v)
}

/// The receive low-water mark in bytes (1 unless set).
pub fn recv_lowat(fd: impl AsFd) -> io::Result<usize> {
    let (v, _) = raw::getsockopt::<libc::c_int>(fd.as_fd(), libc::SOL_SOCKET, libc::SO_RCVLOWAT)?;
    Ok(usize::try_from(v).unwrap_or(0))
}

/// Sets or clears "don't fragment" (`--dont-fragment`).
///
/// IPv4: `IP_MTU_DISCOVER` = `IP_PMTUDISC_DO` (DF bit set, oversize sends fail with
/// `EMSGSIZE`) or back to the Linux default `IP_PMTUDISC_WANT`. IPv6 (routers never fragment
/// there): `IPV6_DONTFRAG`, so an oversize UDP send fails instead of being fragmented locally.
pub fn set_dont_fragment(fd: impl AsFd, on: bool) -> io::Result<()> {
    let fd = fd.as_fd();
    if is_ipv6(&fd)? {
        let v: libc::c_int = on.into();
        raw::setsockopt(fd, libc::IPPROTO_IPV6, libc::IPV6_DONTFRAG, &v)
    } else {
        let v = if on { libc::IP_PMTUDISC_DO } else { libc::IP_PMTUDISC_WANT };
        raw::setsockopt(fd, libc::IPPROTO_IP, libc::IP_MTU_DISCOVER, &v)
    }
}

/// Whether "don't fragment" is in effect as [`set_dont_fragment`] sets it.
pub fn dont_fragment(fd: impl AsFd) -> io::Result<bool> {
    let fd = fd.as_fd();
    if is_ipv6(&fd)? {
        let (v, _) = raw::getsockopt::<libc::c_int>(fd, libc::IPPROTO_IPV6, libc::IPV6_DONTFRAG)?;
        Ok(v != 0)
    } else {
        let (v, _) = raw::getsockopt::<libc::c_int>(fd, libc::IPPROTO_IP, libc::IP_MTU_DISCOVER)?;
        Ok(v == libc::IP_PMTUDISC_DO)
    }
}

/// Enables `SO_RXQ_OVFL`: each received datagram then carries the socket's cumulative count of
/// datagrams dropped because the receive queue was full. Read it with
/// [`crate::drop_counter::recv_with_drop_counter`].
pub fn set_rxq_ovfl(fd: impl AsFd, on: bool) -> io::Result<()> {
    let v: libc::c_int = on.into();
    raw::setsockopt(fd.as_fd(), libc::SOL_SOCKET, libc::SO_RXQ_OVFL, &v)
}

/// Enables `SO_TIMESTAMPNS`: each received datagram then carries the kernel's receive time
/// (`CLOCK_REALTIME`, nanoseconds), which [`crate::udp_batch::recv_batch`] and
/// [`crate::udp_gso::recv_gro`] return per message. A coalesced GRO packet has one time for all
/// its datagrams.
pub fn set_timestampns(fd: impl AsFd, on: bool) -> io::Result<()> {
    let v: libc::c_int = on.into();
    raw::setsockopt(fd.as_fd(), libc::SOL_SOCKET, libc::SO_TIMESTAMPNS, &v)
}

/// Whether `SO_RXQ_OVFL` is enabled.
pub fn rxq_ovfl(fd: impl AsFd) -> io::Result<bool> {
    let (v, _) = raw::getsockopt::<libc::c_int>(fd.as_fd(), libc::SOL_SOCKET, libc::SO_RXQ_OVFL)?;
    Ok(v != 0)
}

/// The socket's drop counter (`sk_drops`: datagrams dropped because the receive queue was
/// full, the very count `SO_RXQ_OVFL` attaches to received datagrams), read with
/// `getsockopt(SO_MEMINFO)` at any moment, including after the last datagram arrived.
/// Cumulative and wrapping (`u32`): take wrapping differences.
pub fn socket_drops(fd: impl AsFd) -> io::Result<u32> {
    /// `SK_MEMINFO_DROPS` in `linux/sock_diag.h`.
    const SK_MEMINFO_DROPS: usize = 8;
    meminfo(fd, SK_MEMINFO_DROPS, "SO_MEMINFO has no drop counter")
}

/// Memory held by the socket's receive queue (`SK_MEMINFO_RMEM_ALLOC`): 0 exactly when
/// nothing waits to be read. A UDP receiver that has been quiet for a while may still have
/// datagrams queued when its thread was not scheduled; this tells the two apart.
pub fn receive_queue_bytes(fd: impl AsFd) -> io::Result<u32> {
    /// `SK_MEMINFO_RMEM_ALLOC` in `linux/sock_diag.h`.
    const SK_MEMINFO_RMEM_ALLOC: usize = 0;
    meminfo(fd, SK_MEMINFO_RMEM_ALLOC, "SO_MEMINFO has no receive memory")
}

/// One entry of `getsockopt(SO_MEMINFO)`.
fn meminfo(fd: impl AsFd, index: usize, missing: &str) -> io::Result<u32> {
    let (v, len) = raw::getsockopt::<[u32; 16]>(fd.as_fd(), libc::SOL_SOCKET, libc::SO_MEMINFO)?;
    if len < (index + 1) * 4 {
        return Err(io::Error::new(io::ErrorKind::Unsupported, missing.to_string()));
    }
    Ok(v[index])
}

/// Enables extended error reporting (`IP_RECVERR`, and `IPV6_RECVERR` on IPv6 sockets).
///
/// For a UDP sender this makes drops visible: without it Linux reports success for a datagram
/// that the local qdisc or device queue dropped (`ENOBUFS` is swallowed and only counted in
/// `SndbufErrors`); with it the send fails with `ENOBUFS`, so the sender can count the datagram
/// as not sent instead of the receiver counting it as lost.
pub fn set_recverr(fd: impl AsFd, on: bool) -> io::Result<()> {
    let fd = fd.as_fd();
    let v: libc::c_int = on.into();
    if is_ipv6(&fd)? {
        raw::setsockopt(fd, libc::IPPROTO_IPV6, libc::IPV6_RECVERR, &v)?;
        // v4-mapped destinations leave as IPv4; the IPv4 option may be refused on a v6-only
        // socket, which is harmless.
        let _ = raw::setsockopt(fd, libc::IPPROTO_IP, libc::IP_RECVERR, &v);
        Ok(())
    } else {
        raw::setsockopt(fd, libc::IPPROTO_IP, libc::IP_RECVERR, &v)
    }
}

#[cfg(test)]
#[path = "sockopt_tests.rs"]
mod tests;
