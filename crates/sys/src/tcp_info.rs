//! `getsockopt(IPPROTO_TCP, TCP_INFO)`: the kernel's live view of one TCP connection.
//!
//! iperf3 samples this once per interval and at the end of a test for its `Retr`, `Cwnd`,
//! `rtt`, `rttvar`, `pmtu` and `snd_wnd` columns/JSON keys; the doctor and the live view use the
//! `*_limited` and `delivery_rate` fields to say *why* a stream is slow (receiver window, send
//! buffer, or the network).
//!
//! socket2 has no `TCP_INFO` (rust-lang/socket2#362), so this reads `libc::tcp_info` directly.
//! The kernel copies `min(offered, sizeof(kernel struct))` bytes, so an older kernel with a
//! shorter struct returns a shorter length: the buffer starts zeroed, and every field beyond the
//! returned length reads as 0. [`TcpInfo::len`] says how many bytes were real.

use std::io;
use std::os::fd::AsFd;

use crate::raw;

/// `tcpi_state` value of an established connection (`TCP_ESTABLISHED` in `<netinet/tcp.h>`).
pub const TCP_ESTABLISHED: u8 = 1;

/// A snapshot of `struct tcp_info`, with units in the field names.
///
/// Counters (`total_retrans`, `bytes_*`, `segs_*`, `*_us` times) are cumulative since the
/// connection started; take deltas between samples for per-interval numbers, as iperf3 does for
/// `retransmits`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TcpInfo {
    /// Bytes of `struct tcp_info` the kernel filled; fields past this offset are 0 because the
    /// kernel is too old to know them (e.g. `snd_wnd` needs Linux 5.4).
    pub len: usize,
    /// Connection state (`tcpi_state`, a `TCP_*` state number; [`TCP_ESTABLISHED`] is 1).
    pub state: u8,
    /// Congestion-avoidance state (`tcpi_ca_state`: 0 open, 1 disorder, 2 CWR, 3 recovery, 4 loss).
    pub ca_state: u8,
    /// Consecutive retransmissions of the current unacknowledged segment (`tcpi_retransmits`).
    pub retransmits: u8,
    /// Total segments retransmitted over the connection's life (`tcpi_total_retrans`): what
    /// iperf3 differences per interval for its `Retr` column.
    pub total_retrans: u32,
    /// Segments currently in flight and not yet acknowledged (`tcpi_unacked`).
    pub unacked: u32,
    /// Segments currently considered lost (`tcpi_lost`).
    pub lost: u32,
    /// Congestion window in packets (`tcpi_snd_cwnd`); see [`TcpInfo::cwnd_bytes`].
    pub snd_cwnd: u32,
    /// Slow-start threshold in packets (`tcpi_snd_ssthresh`; very large while still in slow start).
    pub snd_ssthresh: u32,
    /// Sender maximum segment size in bytes (`tcpi_snd_mss`).
    pub snd_mss: u32,
    /// Receiver maximum segment size in bytes (`tcpi_rcv_mss`, an estimate).
    pub rcv_mss: u32,
    /// Smoothed round-trip time in microseconds (`tcpi_rtt`).
    pub rtt_us: u32,
    /// Round-trip time variance in microseconds (`tcpi_rttvar`).
    pub rttvar_us: u32,
    /// Minimum round-trip time seen, in microseconds (`tcpi_min_rtt`).
    pub min_rtt_us: u32,
    /// Path MTU in bytes (`tcpi_pmtu`).
    pub pmtu: u32,
    /// Peer's advertised receive window in bytes (`tcpi_snd_wnd`; Linux ≥ 5.4, else 0).
    pub snd_wnd: u32,
    /// Our advertised receive window in bytes (`tcpi_rcv_wnd`; Linux ≥ 6.2, else 0).
    pub rcv_wnd: u32,
    /// Receive-buffer autotuning's estimate of the space needed, in bytes (`tcpi_rcv_space`).
    pub rcv_space: u32,
    /// Bytes written by the application but not yet sent (`tcpi_notsent_bytes`).
    pub notsent_bytes: u32,
    /// Current pacing rate in bytes/s (`tcpi_pacing_rate`).
    pub pacing_rate: u64,
    /// Pacing cap in bytes/s from `SO_MAX_PACING_RATE` (`tcpi_max_pacing_rate`; `u64::MAX` = none).
    pub max_pacing_rate: u64,
    /// Time spent with data in flight, microseconds (`tcpi_busy_time`).
    pub busy_time_us: u64,
    /// Time limited by the peer's receive window, microseconds (`tcpi_rwnd_limited`).
    pub rwnd_limited_us: u64,
    /// Time limited by our send buffer, microseconds (`tcpi_sndbuf_limited`).
    pub sndbuf_limited_us: u64,
    /// Most recent delivery-rate sample in bytes/s (`tcpi_delivery_rate`).
    pub delivery_rate: u64,
    /// Bytes acknowledged by the peer (`tcpi_bytes_acked`).
    pub bytes_acked: u64,
    /// Bytes received in order (`tcpi_bytes_received`).
    pub bytes_received: u64,
    /// Bytes sent, including retransmissions (`tcpi_bytes_sent`; Linux ≥ 4.19).
    pub bytes_sent: u64,
    /// Bytes retransmitted (`tcpi_bytes_retrans`; Linux ≥ 4.19).
    pub bytes_retrans: u64,
    /// Segments sent (`tcpi_segs_out`).
    pub segs_out: u32,
    /// Segments received (`tcpi_segs_in`).
    pub segs_in: u32,
    /// Segments the peer reported back as received twice (`tcpi_dsack_dups`; Linux ≥ 4.19):
    /// retransmits that were spurious (reordering or an early timer), not losses.
    pub dsack_dups: u32,
    /// Reordering events seen (`tcpi_reord_seen`; Linux ≥ 4.19).
    pub reord_seen: u32,
}

impl TcpInfo {
    /// Congestion window in bytes: `snd_cwnd * snd_mss`, which is what iperf3 prints as `Cwnd`
    /// and reports as `snd_cwnd` in `-J` output. Computed in `u64` so it cannot overflow.
    pub fn cwnd_bytes(&self) -> u64 {
        u64::from(self.snd_cwnd) * u64::from(self.snd_mss)
    }

    /// Whether the kernel filled `tcpi_dsack_dups` (and `tcpi_reord_seen` after it): Linux 4.19
    /// added both; an older kernel's shorter struct leaves them 0, which must not read as
    /// "no spurious retransmits".
    pub fn has_dsack_dups(&self) -> bool {
        self.len >= std::mem::offset_of!(libc::tcp_info, tcpi_reord_seen) + 4
    }

    /// Whether the connection is in the established state.
    pub fn is_established(&self) -> bool {
        self.state == TCP_ESTABLISHED
    }

    /// Converts the raw struct; `len` is how many bytes the kernel filled.
    fn from_raw(r: &libc::tcp_info, len: usize) -> Self {
        TcpInfo {
            len,
            state: r.tcpi_state,
            ca_state: r.tcpi_ca_state,
            retransmits: r.tcpi_retransmits,
            total_retrans: r.tcpi_total_retrans,
            unacked: r.tcpi_unacked,
            lost: r.tcpi_lost,
            snd_cwnd: r.tcpi_snd_cwnd,
            snd_ssthresh: r.tcpi_snd_ssthresh,
            snd_mss: r.tcpi_snd_mss,
            rcv_mss: r.tcpi_rcv_mss,
            rtt_us: r.tcpi_rtt,
            rttvar_us: r.tcpi_rttvar,
            min_rtt_us: r.tcpi_min_rtt,
            pmtu: r.tcpi_pmtu,
            snd_wnd: r.tcpi_snd_wnd,
            rcv_wnd: r.tcpi_rcv_wnd,
            rcv_space: r.tcpi_rcv_space,
            notsent_bytes: r.tcpi_notsent_bytes,
            pacing_rate: r.tcpi_pacing_rate,
            max_pacing_rate: r.tcpi_max_pacing_rate,
            busy_time_us: r.tcpi_busy_time,
            rwnd_limited_us: r.tcpi_rwnd_limited,
            sndbuf_limited_us: r.tcpi_sndbuf_limited,
            delivery_rate: r.tcpi_delivery_rate,
            bytes_acked: r.tcpi_bytes_acked,
            bytes_received: r.tcpi_bytes_received,
            bytes_sent: r.tcpi_bytes_sent,
            bytes_retrans: r.tcpi_bytes_retrans,
            segs_out: r.tcpi_segs_out,
            segs_in: r.tcpi_segs_in,
            dsack_dups: r.tcpi_dsack_dups,
            reord_seen: r.tcpi_reord_seen,
        }
    }
}

/// Reads `TCP_INFO` from a TCP socket.
///
/// Errors: `ENOPROTOOPT`/`EOPNOTSUPP` on a non-TCP socket, `EBADF`/`ENOTSOCK` on a bad fd.
pub fn tcp_info(fd: impl AsFd) -> io::Result<TcpInfo> {
    let (raw, len) = raw::getsockopt::<libc::tcp_info>(fd.as_fd(), libc::IPPROTO_TCP, libc::TCP_INFO)?;
    Ok(TcpInfo::from_raw(&raw, len))
}

/// Like [`tcp_info`] but offers the kernel only `offered` bytes, as an older libc/kernel pair
/// would. Lets tests prove that the fields past the returned length read as 0.
#[cfg(test)]
fn tcp_info_truncated(fd: impl AsFd, offered: usize) -> io::Result<TcpInfo> {
    let (raw, len) = raw::getsockopt_len::<libc::tcp_info>(fd.as_fd(), libc::IPPROTO_TCP, libc::TCP_INFO, offered)?;
    Ok(TcpInfo::from_raw(&raw, len))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{tcp_pair_v4, tcp_pair_v6, udp_pair_v4};
    use std::io::{Read, Write};
    use std::mem::{offset_of, size_of};
    use std::time::{Duration, Instant};

    const PAYLOAD: usize = 256 * 1024;

    /// Sends `PAYLOAD` bytes client → server and reads them all.
    fn transfer(client: &mut std::net::TcpStream, server: &mut std::net::TcpStream) {
        let writer = {
            let mut c = client.try_clone().unwrap();
            std::thread::spawn(move || c.write_all(&vec![7u8; PAYLOAD]).unwrap())
        };
        let mut buf = vec![0u8; PAYLOAD];
        server.read_exact(&mut buf).unwrap();
        writer.join().unwrap();
    }

    #[test]
    fn established_sender_and_receiver_fields() {
        let (mut client, mut server) = tcp_pair_v4();
        transfer(&mut client, &mut server);

        let rx = tcp_info(&server).unwrap();
        assert!(rx.is_established());
        assert!(rx.bytes_received >= PAYLOAD as u64, "{rx:?}");
        assert!(rx.segs_in > 0);
        assert!(rx.rcv_space > 0);

        // ACKs for the last segments may still be in flight; wait briefly for them.
        let deadline = Instant::now() + Duration::from_secs(5);
        let tx = loop {
            let tx = tcp_info(&client).unwrap();
            if tx.bytes_acked >= PAYLOAD as u64 || Instant::now() > deadline {
                break tx;
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        assert!(tx.is_established());
        assert!(tx.len >= offset_of!(libc::tcp_info, tcpi_snd_wnd) + 4);
        assert!(tx.bytes_acked >= PAYLOAD as u64, "{tx:?}");
        assert!(tx.bytes_sent >= PAYLOAD as u64);
        assert!(tx.snd_cwnd > 0 && tx.snd_mss > 0);
        assert_eq!(tx.cwnd_bytes(), u64::from(tx.snd_cwnd) * u64::from(tx.snd_mss));
        assert!(tx.rtt_us > 0);
        assert!(tx.min_rtt_us > 0 && tx.min_rtt_us <= tx.rtt_us + tx.rttvar_us);
        // Loopback's MTU is 65536; the kernel caps IPv4 path MTU at 65535 (IP_MAX_MTU).
        assert!((1280..=65536).contains(&tx.pmtu), "{}", tx.pmtu);
        assert!(tx.snd_wnd > 0, "kernel is ≥ 5.4, so tcpi_snd_wnd is present");
        assert!(tx.segs_out > 0);
        // busy_time is kept in jiffies: a loopback transfer this short may well read 0.
        assert!(tx.rwnd_limited_us <= tx.busy_time_us && tx.sndbuf_limited_us <= tx.busy_time_us);
    }

    #[test]
    fn works_on_ipv6() {
        let (mut client, mut server) = tcp_pair_v6();
        transfer(&mut client, &mut server);
        let tx = tcp_info(&client).unwrap();
        assert!(tx.is_established() && tx.snd_mss > 0);
    }

    #[test]
    fn shorter_struct_from_old_kernel_reads_zero_beyond_len() {
        let (mut client, mut server) = tcp_pair_v4();
        transfer(&mut client, &mut server);
        // Linux 4.17's struct ended after tcpi_sndbuf_limited; offer exactly that much.
        let cut = offset_of!(libc::tcp_info, tcpi_delivered);
        let old = tcp_info_truncated(&client, cut).unwrap();
        assert_eq!(old.len, cut);
        assert!(old.snd_mss > 0 && old.bytes_acked > 0);
        assert_eq!(old.snd_wnd, 0);
        assert_eq!(old.bytes_sent, 0);
        assert_eq!(old.rcv_wnd, 0);
        assert!(!old.has_dsack_dups(), "4.17's struct has no tcpi_dsack_dups");
        // Cut just before tcpi_reord_seen's end: still unknown.
        let short = tcp_info_truncated(&client, offset_of!(libc::tcp_info, tcpi_reord_seen) + 3).unwrap();
        assert!(!short.has_dsack_dups());
        let full = tcp_info(&client).unwrap();
        assert!(full.len <= size_of::<libc::tcp_info>());
        assert!(full.len > cut);
        assert!(full.has_dsack_dups(), "kernel is ≥ 4.19");
    }

    /// `tcpi_dsack_dups` sits right before `tcpi_reord_seen`, after `tcpi_bytes_retrans`, as in
    /// the kernel's `struct tcp_info` (include/uapi/linux/tcp.h, Linux 4.19+).
    #[test]
    fn dsack_dups_offset_matches_the_kernel_layout() {
        assert_eq!(offset_of!(libc::tcp_info, tcpi_dsack_dups), offset_of!(libc::tcp_info, tcpi_bytes_retrans) + 8);
        assert_eq!(offset_of!(libc::tcp_info, tcpi_reord_seen), offset_of!(libc::tcp_info, tcpi_dsack_dups) + 4);
        // The kernel header's offsets on x86_64 (offsetof on <linux/tcp.h>: 208, 216).
        if cfg!(target_arch = "x86_64") {
            assert_eq!(offset_of!(libc::tcp_info, tcpi_bytes_retrans), 208);
            assert_eq!(offset_of!(libc::tcp_info, tcpi_dsack_dups), 216);
        }
    }

    #[test]
    fn non_tcp_socket_is_an_error_not_a_panic() {
        let (a, _b) = udp_pair_v4();
        assert!(tcp_info(&a).is_err());
    }

    #[test]
    fn listening_socket_reports_listen_state() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let info = tcp_info(&l).unwrap();
        assert_eq!(info.state, 10, "TCP_LISTEN");
        assert!(!info.is_established());
    }
}
