//! Echo probes: small timestamped probes to a wireperf server's latency echo (UDP datagrams,
//! or requests on one TCP connection of their own), at a steady rate, each matched with its
//! reply by sequence number.
//!
//! Unlike a connect probe, an echo probe is answered by the server's application, so it
//! measures exactly what a small request of an interactive program sees, and the reply
//! carries the server's receive time, which splits the round trip into its two directions
//! ([`crate::direction`]). The sender never waits for a reply: a slow answer under a deep
//! queue does not slow the rate. A reply later than the timeout counts as lost.

use crate::echo_wire::{REPLY_LEN, Reply, Request, Token};
use crate::prober::{Prober, ProberConfig, ms, phase_now};
use crate::sample::{Method, Phase, Probe};
use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream, UdpSocket};
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// How often the reader looks at its stop flag.
const POLL: Duration = Duration::from_millis(50);

/// One flow to the echo, connected.
enum Flow {
    Udp(UdpSocket),
    Tcp(TcpStream),
}

impl Flow {
    fn method(&self) -> Method {
        match self {
            Flow::Udp(_) => Method::UdpEcho,
            Flow::Tcp(_) => Method::TcpRr,
        }
    }

    fn send(&mut self, b: &[u8]) -> std::io::Result<()> {
        match self {
            Flow::Udp(s) => s.send(b).map(|_| ()),
            Flow::Tcp(s) => s.write_all(b),
        }
    }

    fn reader(&self) -> std::io::Result<Flow> {
        Ok(match self {
            Flow::Udp(s) => Flow::Udp(s.try_clone()?),
            Flow::Tcp(s) => Flow::Tcp(s.try_clone()?),
        })
    }
}

/// A reply: its sequence number, round trip and server-minus-send time, ms.
type Answer = (u32, f64, f64);

/// Starts UDP echo probes to `target`, labelled `phase` until [`Prober::set_phase`].
pub fn start_udp(cfg: ProberConfig, token: Token, phase: Phase) -> std::io::Result<Prober> {
    let local: SocketAddr = if cfg.target.is_ipv4() { ([0, 0, 0, 0], 0).into() } else { ([0u16; 8], 0).into() };
    let s = UdpSocket::bind(local)?;
    s.connect(cfg.target)?;
    s.set_read_timeout(Some(POLL))?;
    start(cfg, Flow::Udp(s), token, phase)
}

/// Opens the echo's TCP connection to `target` and starts request/response probes on it.
pub fn start_tcp(cfg: ProberConfig, token: Token, phase: Phase) -> std::io::Result<Prober> {
    let s = TcpStream::connect_timeout(&cfg.target, cfg.timeout)?;
    s.set_nodelay(true)?;
    s.set_read_timeout(Some(POLL))?;
    s.set_write_timeout(Some(cfg.timeout))?;
    start(cfg, Flow::Tcp(s), token, phase)
}

fn start(cfg: ProberConfig, flow: Flow, token: Token, phase: Phase) -> std::io::Result<Prober> {
    Prober::spawn(phase, move |p, s| run(&cfg, flow, token, p, s))
}

fn run(cfg: &ProberConfig, mut flow: Flow, token: Token, phase: &AtomicU8, stop: &AtomicBool) -> Vec<Probe> {
    let method = flow.method();
    let (tx, rx) = mpsc::channel::<Answer>();
    let reader_stop = AtomicBool::new(false);
    let mut sent: Vec<Probe> = Vec::new();
    std::thread::scope(|scope| {
        let reader = flow.reader();
        if let Ok(r) = reader {
            let (origin, rs) = (cfg.origin, &reader_stop);
            let _ = std::thread::Builder::new()
                .name("latency-echo-rx".into())
                .spawn_scoped(scope, move || read_replies(r, token, origin, rs, &tx));
        }
        let mut next = Instant::now();
        let mut broken = false;
        while sent.len() < cfg.max_probes && !stop.load(Ordering::Relaxed) {
            let now = Instant::now();
            if now < next {
                std::thread::sleep((next - now).min(Duration::from_millis(10)));
                continue;
            }
            let since = now.saturating_duration_since(cfg.origin);
            let seq = u32::try_from(sent.len()).unwrap_or(u32::MAX);
            let req = Request { seq, sent_ns: u64::try_from(since.as_nanos()).unwrap_or(u64::MAX) };
            // A failed send (a broken TCP connection) leaves the probe lost, as a real
            // program's request would be.
            if !broken && flow.send(&req.encode(token)).is_err() {
                broken = matches!(flow, Flow::Tcp(_));
            }
            sent.push(Probe::new(ms(since), phase_now(phase), None, method));
            next += cfg.interval;
        }
        // Give the last probes their timeout to come back, then stop the reader.
        let deadline = Instant::now() + cfg.timeout;
        let mut answered = 0;
        while Instant::now() < deadline && answered < sent.len() {
            match rx.recv_timeout(POLL) {
                Ok(a) => {
                    answered += usize::from(record(&mut sent, a, cfg.timeout));
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            }
        }
        reader_stop.store(true, Ordering::Relaxed);
    });
    for a in rx.try_iter() {
        record(&mut sent, a, cfg.timeout);
    }
    sent
}

/// Puts an answer on its probe; true when it was the first answer to an unanswered probe in
/// time (a late or duplicate reply changes nothing).
fn record(sent: &mut [Probe], (seq, rtt, up): Answer, timeout: Duration) -> bool {
    let Some(p) = usize::try_from(seq).ok().and_then(|i| sent.get_mut(i)) else { return false };
    if p.rtt_ms.is_some() || rtt > timeout.as_secs_f64() * 1000.0 {
        return false;
    }
    p.rtt_ms = Some(rtt);
    p.up_ms = Some(up);
    true
}

fn read_replies(mut flow: Flow, token: Token, origin: Instant, stop: &AtomicBool, tx: &mpsc::Sender<Answer>) {
    let mut buf = [0u8; 2048];
    let mut have = 0;
    while !stop.load(Ordering::Relaxed) {
        let got = match &mut flow {
            Flow::Udp(s) => s.recv(&mut buf),
            Flow::Tcp(s) => s.read(&mut buf[have..REPLY_LEN]),
        };
        let n = match got {
            Ok(0) if matches!(flow, Flow::Tcp(_)) => return,
            Ok(n) => n,
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted) => {
                continue;
            }
            // A UDP error (an ICMP unreachable for an earlier probe): keep reading.
            Err(_) if matches!(flow, Flow::Udp(_)) => continue,
            Err(_) => return,
        };
        let frame = match flow {
            Flow::Udp(_) => &buf[..n],
            Flow::Tcp(_) => {
                have += n;
                if have < REPLY_LEN {
                    continue;
                }
                have = 0;
                &buf[..REPLY_LEN]
            }
        };
        let now_ns = origin.elapsed().as_nanos() as f64;
        let Some(r) = Reply::parse(frame, token) else { continue };
        let sent = r.request.sent_ns as f64;
        let rtt = round_us((now_ns - sent) / 1e6);
        let up = round_us((r.received_ns as f64 - sent) / 1e6);
        if tx.send((r.request.seq, rtt, up)).is_err() {
            return;
        }
    }
}

fn round_us(ms: f64) -> f64 {
    (ms * 1000.0).round() / 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::echo::EchoServer;
    use std::net::IpAddr;

    const T: Token = Token([3; 8]);
    const LO: IpAddr = IpAddr::V4(std::net::Ipv4Addr::LOCALHOST);

    fn cfg(port: u16, count: usize) -> ProberConfig {
        let mut c = ProberConfig::new(SocketAddr::new(LO, port), Duration::from_millis(20), Instant::now());
        c.max_probes = count;
        c.timeout = Duration::from_millis(500);
        c
    }

    #[test]
    fn udp_and_tcp_probes_come_back_with_their_phase() {
        let e = EchoServer::start(LO, LO, T).unwrap();
        for method in [Method::UdpEcho, Method::TcpRr] {
            let p = match method {
                Method::UdpEcho => start_udp(cfg(e.offer().udp_port.unwrap(), 10), T, Phase::Idle).unwrap(),
                _ => start_tcp(cfg(e.offer().tcp_port.unwrap(), 10), T, Phase::Idle).unwrap(),
            };
            std::thread::sleep(Duration::from_millis(90));
            p.set_phase(Phase::Upload);
            let probes = p.join();
            assert_eq!(probes.len(), 10);
            assert!(probes.iter().all(|p| p.method == method && p.rtt_ms.is_some_and(|r| r < 400.0)), "{probes:?}");
            assert!(probes.iter().all(|p| p.up_ms.is_some()), "{probes:?}");
            assert!(probes[0].phase == Phase::Idle && probes[9].phase == Phase::Upload, "{probes:?}");
        }
    }

    #[test]
    fn probes_to_a_silent_port_are_lost() {
        // A UDP socket that never answers: every probe is lost after the timeout.
        let silent = UdpSocket::bind((LO, 0)).unwrap();
        let probes = start_udp(cfg(silent.local_addr().unwrap().port(), 4), T, Phase::Idle).unwrap().join();
        assert_eq!(probes.len(), 4);
        assert!(probes.iter().all(|p| p.rtt_ms.is_none()), "{probes:?}");
    }

    #[test]
    fn late_and_duplicate_answers_change_nothing() {
        let mut sent = vec![Probe::new(0.0, Phase::Idle, None, Method::UdpEcho); 2];
        let t = Duration::from_millis(100);
        assert!(record(&mut sent, (0, 5.0, 2.0), t));
        assert!(!record(&mut sent, (0, 6.0, 2.0), t), "duplicate");
        assert!(!record(&mut sent, (1, 150.0, 2.0), t), "late");
        assert!(!record(&mut sent, (9, 1.0, 0.5), t), "never sent");
        assert_eq!((sent[0].rtt_ms, sent[0].up_ms, sent[1].rtt_ms), (Some(5.0), Some(2.0), None));
    }
}
