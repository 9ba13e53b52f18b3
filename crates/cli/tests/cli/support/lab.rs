//! The network-namespace test lab: two namespaces joined by a veth pair, with an optional link
//! rate (`tc qdisc … tbf`), MTU, and a random drop of UDP datagrams (`nft`, with a counter).
//!
//! ```text
//!   namespace A (10.77.0.1/24) ── veth ── namespace B (10.77.0.2/24)
//!        tbf on A's egress (LabConfig::rate)       nft drop rule in either side's input
//!
//!   with LabConfig::middle_shaper, a bridge between them in a third namespace:
//!   A ── veth ── [ M: bridge, tbf rate/limit on the port toward B ] ── veth ── B
//! ```
//!
//! Usage (see docs/lab.md):
//! ```ignore
//! let lab = Lab::new(LabConfig { rate: Some("150mbit"), ..Default::default() });
//! let server = lab.start_server(Side::B, &["-1", "-J"]);          // wireperf -s in B
//! lab.drop_udp(Side::B, 5201, 1);                                   // 1 % of datagrams to B:5201
//! let out = lab.run(Side::A, &wireperf(), &["-c", lab.addr(Side::B), "-u", …]);
//! let dropped = lab.nft_dropped(Side::B);
//! ```
//!
//! Needs root (CAP_NET_ADMIN) and `ip`, `tc`, `nft`. Every lab has unique names (process id and
//! a counter), so tests run in parallel; [`Drop`] deletes both namespaces (and with them the veth
//! pair, qdisc and nft tables) even when the test panics, and [`Lab::new`] first deletes labs
//! left behind by processes that no longer exist (a killed test run). Traffic stays inside the
//! namespaces: the addresses exist nowhere else.
//!
//! The veth pair is created with `gso_max_segs 1`: the sender's stack then cuts UDP GSO
//! batches into datagrams before the veth, so nft, tc and the receiver each see one packet per
//! datagram (otherwise one GSO packet of 40 datagrams would be one nft "packet").
//! [`LabConfig::whole_gso`] leaves that out, as a container's veth does: GSO packets then cross
//! whole, and [`Lab::datagrams`] still counts datagrams (from the counter's bytes).

#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)]

use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const PREFIX: &str = "wplab-";
/// The router's address on A's and on B's subnet (see [`LabConfig::middle_shaper`]).
const ROUTER: [&str; 2] = ["10.77.0.254", "10.77.1.254"];
/// The priority of the lab's clients and servers: above the other tests of the run.
///
/// A lab test asserts what limited a link, and its verdict is only the lab's when the CPU is
/// not taken by something else: the suite runs tests side by side on two cores, and a
/// loopback test beside a lab test saturates a core. At nice -10 a lab process outweighs a
/// nice-0 one about nine to one (the scheduler's weights 9548 and 1024), so the other tests are
/// to it what a nice-19 background is to a user's test; a lab test that starves its own process
/// on purpose puts it in the idle class (`chrt -i 0`), which no niceness lifts.
const LAB_NICE: &str = "-10";
/// The port servers in the lab listen on (the namespaces are private, so it never collides).
pub const LAB_PORT: u16 = 5201;

/// One end of the lab.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// Namespace A, 10.77.0.1.
    A,
    /// Namespace B, 10.77.0.2 (10.77.1.2 behind a router).
    B,
}

/// How to build a lab.
#[derive(Clone, Debug, Default)]
pub struct LabConfig {
    /// tbf rate on A's egress (A→B), as `tc` spells it ("150mbit").
    pub rate: Option<&'static str>,
    /// tbf rate on B's egress (B→A): a shaper on the server's host shapes the download.
    pub rate_b: Option<&'static str>,
    /// MTU of both veth ends.
    pub mtu: Option<u32>,
    /// MTU of B's end when it differs from A's (`mtu`): two hosts configured apart.
    pub mtu_b: Option<u32>,
    /// Let UDP GSO packets cross the veth whole (no `gso_max_segs 1`): one nft "packet" and one
    /// receive-queue entry then carry up to 64 datagrams.
    pub whole_gso: bool,
    /// A shaper *between* the hosts: a third namespace routes between A (10.77.0.1) and B
    /// (10.77.1.2), as a home router does, with a tbf of this rate and queue `limit` (bytes)
    /// on its port toward B. A tbf on A's own egress barely queues TCP, because A's TCP Small
    /// Queues keep each socket's bytes in the local qdisc to about a millisecond; a queue in a
    /// box on the path (a home router, a modem) is where bufferbloat lives, and this is that
    /// box. It routes rather than bridges for the same reason: a packet crossing a veth keeps
    /// its socket (kernels since 5.14 no longer orphan it between namespaces), so through a
    /// bridge TSQ still counts it while it waits in the middle box's tbf and keeps that queue
    /// to about a millisecond too (measured: 21 KB backlog at 478 Mbit/s, round trips 0.4 ms);
    /// IP receive in the router orphans it, and the queue fills as a real router's does
    /// (Reno: 0.8 MB backlog, 9-13 ms).
    pub middle_shaper: Option<MiddleShaper>,
}

/// The shaper of [`LabConfig::middle_shaper`].
#[derive(Clone, Copy, Debug)]
pub struct MiddleShaper {
    /// tbf rate as `tc` spells it ("20mbit").
    pub rate: &'static str,
    /// The rate in bit/s (to compute the queue's delay).
    pub rate_bps: f64,
    /// tbf queue limit, bytes: the queue the box can hold.
    pub limit: u32,
}

impl MiddleShaper {
    /// The delay of a full queue: `limit × 8 / rate`, ms.
    pub fn full_queue_ms(&self) -> f64 {
        f64::from(self.limit) * 8.0 / self.rate_bps * 1000.0
    }
}

/// A pair of namespaces (and the middle one, when asked); deleted on drop.
pub struct Lab {
    ns: [String; 2],
    dev: [String; 2],
    middle: Option<String>,
}

static COUNTER: AtomicU32 = AtomicU32::new(0);

fn sh(args: &[&str]) -> Output {
    Command::new(args[0]).args(&args[1..]).output().unwrap_or_else(|e| panic!("cannot run {args:?}: {e}"))
}

fn must(args: &[&str]) -> Output {
    let out = sh(args);
    assert!(out.status.success(), "lab command failed: {}\n{}", args.join(" "), String::from_utf8_lossy(&out.stderr));
    out
}

/// Deletes labs whose creating process is gone (names are `wplab-<pid>-<n>-<a|b>`).
fn clean_stale() {
    let list = sh(&["ip", "netns", "list"]);
    for line in String::from_utf8_lossy(&list.stdout).lines() {
        let Some(name) = line.split_whitespace().next() else { continue };
        let Some(rest) = name.strip_prefix(PREFIX) else { continue };
        let pid = rest.split('-').next().and_then(|p| p.parse::<u32>().ok());
        if pid.is_some_and(|p| !Path::new(&format!("/proc/{p}")).exists()) {
            let _ = sh(&["ip", "netns", "del", name]);
        }
    }
}

impl Lab {
    /// Creates the namespaces, the veth pair, addresses, and the optional rate limit and MTU.
    pub fn new(cfg: LabConfig) -> Lab {
        clean_stale();
        let pid = std::process::id();
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let ns = [format!("{PREFIX}{pid}-{n}-a"), format!("{PREFIX}{pid}-{n}-b")];
        // Interface names: at most 15 bytes.
        let dev = [format!("wl{pid:x}x{n}a"), format!("wl{pid:x}x{n}b")];
        let middle = cfg.middle_shaper.map(|_| format!("{PREFIX}{pid}-{n}-m"));
        let lab = Lab { ns, dev, middle };
        for ns in lab.ns.iter().chain(&lab.middle) {
            must(&["ip", "netns", "add", ns]);
        }
        let segs: &[&str] = if cfg.whole_gso { &[] } else { &["gso_max_segs", "1"] };
        match (&lab.middle, cfg.middle_shaper) {
            (Some(m), Some(shaper)) => lab.router(m, segs, shaper),
            _ => {
                let mut add = vec!["ip", "link", "add", &lab.dev[0], "netns", &lab.ns[0]];
                add.extend_from_slice(segs);
                add.extend_from_slice(&["type", "veth", "peer", "name", &lab.dev[1], "netns", &lab.ns[1]]);
                add.extend_from_slice(segs);
                must(&add);
            }
        }
        for (i, side) in [Side::A, Side::B].into_iter().enumerate() {
            let (ns, dev) = (&lab.ns[i], &lab.dev[i]);
            must(&["ip", "-n", ns, "addr", "add", &format!("{}/24", lab.addr(side)), "dev", dev]);
            if let Some(mtu) = if i == 1 { cfg.mtu_b.or(cfg.mtu) } else { cfg.mtu } {
                must(&["ip", "-n", ns, "link", "set", dev, "mtu", &mtu.to_string()]);
            }
            must(&["ip", "-n", ns, "link", "set", dev, "up"]);
            must(&["ip", "-n", ns, "link", "set", "lo", "up"]);
            if lab.middle.is_some() {
                must(&["ip", "-n", ns, "route", "add", "default", "via", ROUTER[i]]);
            }
        }
        lab.wait_until_up();
        for (i, rate) in [cfg.rate, cfg.rate_b].into_iter().enumerate() {
            if let Some(rate) = rate {
                // burst: enough for a few ms at the rate; latency bounds the queue.
                let (ns, dev) = (&lab.ns[i], &lab.dev[i]);
                let tbf =
                    ["qdisc", "add", "dev", dev, "root", "tbf", "rate", rate, "burst", "256kb", "latency", "100ms"];
                must(&[&["tc", "-n", ns][..], &tbf].concat());
            }
        }
        lab
    }

    /// Waits (at most 3 s) until both veths report operstate UP. The kernel's linkwatch
    /// moves a new link's operstate from down to up with up to a second's delay, and a doctor
    /// that reads the interface in that window rightly reports `link-down`.
    fn wait_until_up(&self) {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(3);
        for i in 0..2 {
            loop {
                let out = must(&["ip", "-n", &self.ns[i], "-o", "link", "show", "dev", &self.dev[i]]);
                if String::from_utf8_lossy(&out.stdout).contains("state UP") {
                    break;
                }
                assert!(std::time::Instant::now() < deadline, "{} never came up", self.dev[i]);
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
        }
    }

    /// A's and B's veths each paired with a port of the router namespace `m` (A's subnet
    /// 10.77.0.0/24, B's 10.77.1.0/24, the router .254 on each); the port toward B gets the tbf.
    fn router(&self, m: &str, segs: &[&str], shaper: MiddleShaper) {
        let ports = [format!("{}m", self.dev[0]), format!("{}m", self.dev[1])];
        for (i, port) in ports.iter().enumerate() {
            let mut add = vec!["ip", "link", "add", &self.dev[i], "netns", &self.ns[i]];
            add.extend_from_slice(segs);
            add.extend_from_slice(&["type", "veth", "peer", "name", port, "netns", m]);
            add.extend_from_slice(segs);
            must(&add);
            let gw = ROUTER[i];
            must(&["ip", "-n", m, "addr", "add", &format!("{gw}/24"), "dev", port]);
            must(&["ip", "-n", m, "link", "set", port, "up"]);
        }
        must(&["ip", "-n", m, "link", "set", "lo", "up"]);
        must(&["ip", "netns", "exec", m, "sysctl", "-qw", "net.ipv4.ip_forward=1"]);
        let limit = shaper.limit.to_string();
        // A small burst (a few packets): a big bucket would drain the queue in bursts.
        let tbf =
            ["qdisc", "add", "dev", &ports[1], "root", "tbf", "rate", shaper.rate, "burst", "8kb", "limit", &limit];
        let mut tc = vec!["tc", "-n", m];
        tc.extend_from_slice(&tbf);
        must(&tc);
    }

    fn idx(side: Side) -> usize {
        match side {
            Side::A => 0,
            Side::B => 1,
        }
    }

    /// The namespace name of a side.
    pub fn ns(&self, side: Side) -> &str {
        &self.ns[Self::idx(side)]
    }

    /// The veth device of a side.
    pub fn dev(&self, side: Side) -> &str {
        &self.dev[Self::idx(side)]
    }

    /// The side's address (B's is on the router's other subnet when there is a router).
    pub fn addr(&self, side: Side) -> &'static str {
        match (side, self.middle.is_some()) {
            (Side::A, _) => "10.77.0.1",
            (Side::B, false) => "10.77.0.2",
            (Side::B, true) => "10.77.1.2",
        }
    }

    /// A command that runs `program args` inside the side's namespace, at [`LAB_NICE`].
    pub fn command(&self, side: Side, program: &Path, args: &[&str]) -> Command {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", self.ns(side), "nice", "-n", LAB_NICE]).arg(program).args(args);
        c
    }

    /// Runs a command in the namespace and returns its output (no time limit: for short tools).
    pub fn exec(&self, side: Side, args: &[&str]) -> Output {
        let mut c = vec!["ip", "netns", "exec", self.ns(side)];
        c.extend_from_slice(args);
        must(&c)
    }

    /// Runs a command in the router namespace (see [`LabConfig::middle_shaper`]); panics
    /// when the lab has no router.
    pub fn exec_router(&self, args: &[&str]) -> Output {
        let m = self.middle.as_deref().expect("this lab has no router");
        let mut c = vec!["ip", "netns", "exec", m];
        c.extend_from_slice(args);
        sh(&c)
    }

    /// Runs a client to completion inside the namespace, killed after 30 s.
    pub fn run(&self, side: Side, program: &Path, args: &[&str]) -> Output {
        self.run_command(self.command(side, program, args))
    }

    /// [`Lab::run`] with another time limit (a repeat series runs several suites).
    pub fn run_within(&self, limit: Duration, side: Side, program: &Path, args: &[&str]) -> Output {
        self.run_command_within(self.command(side, program, args), limit)
    }

    /// Replaces the side's egress shaper by a tbf of `rate` (as [`LabConfig::rate`] makes it):
    /// the path changes between two tests, as when a user moves to another port.
    pub fn set_rate(&self, side: Side, rate: &str) {
        let (ns, dev) = (self.ns(side), self.dev(side));
        must(&[
            "tc", "-n", ns, "qdisc", "replace", "dev", dev, "root", "tbf", "rate", rate, "burst", "256kb", "latency",
            "100ms",
        ]);
    }

    /// Runs a command made by [`Lab::command`] (perhaps with an environment) to completion,
    /// killed after 30 s.
    pub fn run_command(&self, cmd: Command) -> Output {
        self.run_command_within(cmd, Duration::from_secs(30))
    }

    /// [`Lab::run_command`], killed after `limit`.
    pub fn run_command_within(&self, mut cmd: Command, limit: Duration) -> Output {
        let mut child = cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("spawn client in lab");
        let deadline = Instant::now() + limit;
        while Instant::now() < deadline {
            if let Ok(Some(_)) = child.try_wait() {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = child.kill();
        child.wait_with_output().expect("client output")
    }

    /// Starts `program -s -p LAB_PORT args` in the side's namespace and waits until it listens.
    pub fn start_server(&self, side: Side, program: &Path, args: &[&str]) -> LabServer {
        let port = LAB_PORT.to_string();
        let mut a = vec!["-s", "-p", port.as_str()];
        a.extend_from_slice(args);
        self.spawn_server(side, self.command(side, program, &a))
    }

    /// Starts a server command made by [`Lab::command`] (its arguments must listen on
    /// [`LAB_PORT`]) and waits until it listens.
    pub fn spawn_server(&self, side: Side, cmd: Command) -> LabServer {
        let s = LabServer::spawn(cmd);
        let hex = format!(":{LAB_PORT:04X}");
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            let tcp = self.exec(side, &["cat", "/proc/net/tcp", "/proc/net/tcp6"]);
            let text = String::from_utf8_lossy(&tcp.stdout);
            if text.lines().any(|l| {
                let c: Vec<&str> = l.split_whitespace().collect();
                c.len() > 3 && c[1].ends_with(&hex) && c[3] == "0A"
            }) {
                return s;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("server in {} never listened", self.ns(side));
    }

    /// Adds an nft rule in `side`'s input that drops `percent` % of the UDP datagrams from or
    /// to `port` at random, with a counter. Only data datagrams (UDP length > 32) are matched,
    /// so the 4-byte stream handshakes always get through.
    pub fn drop_udp(&self, side: Side, port: u16, percent: u32) {
        let p = port.to_string();
        let pct = percent.to_string();
        let rules = format!(
            "table inet wplab {{\n chain input {{\n  type filter hook input priority 0; policy accept;\n  \
             udp dport {p} udp length > 32 numgen random mod 100 < {pct} counter drop\n  \
             udp sport {p} udp length > 32 numgen random mod 100 < {pct} counter drop\n }}\n}}\n"
        );
        self.load_nft(side, &rules);
    }

    /// [`Lab::drop_udp`] plus counters in `side`'s output of the UDP data datagrams it sends
    /// from or to `port`: what left its sockets, read with [`Lab::udp_counters`]. Put on both
    /// sides, one table serves every direction (forward, `-R`, `--bidir`).
    pub fn count_and_drop_udp(&self, side: Side, port: u16, percent: u32) {
        let rules = format!(
            "table inet wplab {{\n chain input {{\n  type filter hook input priority 0; policy accept;\n  \
             udp dport {port} udp length > 32 numgen random mod 100 < {percent} counter drop\n  \
             udp sport {port} udp length > 32 numgen random mod 100 < {percent} counter drop\n }}\n \
             chain output {{\n  type filter hook output priority 0; policy accept;\n  \
             udp dport {port} udp length > 32 counter\n  \
             udp sport {port} udp length > 32 counter\n }}\n}}\n"
        );
        self.load_nft(side, &rules);
    }

    /// The kernel's UDP counters of `side`, read in one go (one process): the nft table of
    /// [`Lab::count_and_drop_udp`] by chain, `Udp: RcvbufErrors`, and the veth's `tx_dropped`.
    pub fn udp_counters(&self, side: Side) -> UdpCounters {
        let script = format!(
            "nft -j list table inet wplab && echo && grep '^Udp:' /proc/net/snmp && cat /sys/class/net/{}/statistics/tx_dropped",
            self.dev(side)
        );
        let out = self.exec(side, &["sh", "-c", &script]);
        let text = String::from_utf8_lossy(&out.stdout);
        let mut lines = text.lines();
        let nft: serde_json::Value = serde_json::from_str(lines.next().unwrap_or("")).expect("nft -j output");
        let mut c = UdpCounters::default();
        for item in nft["nftables"].as_array().expect("nftables array") {
            let Some(rule) = item.get("rule") else { continue };
            for e in rule["expr"].as_array().into_iter().flatten() {
                let Some(n) = e.get("counter") else { continue };
                let pb = (n["packets"].as_u64().unwrap_or(0), n["bytes"].as_u64().unwrap_or(0));
                let sum = if rule["chain"] == "output" { &mut c.output } else { &mut c.dropped };
                *sum = (sum.0 + pb.0, sum.1 + pb.1);
            }
        }
        let rest: Vec<&str> = lines.filter(|l| !l.trim().is_empty()).collect();
        let (head, vals) =
            (rest[0].split_whitespace().collect::<Vec<_>>(), rest[1].split_whitespace().collect::<Vec<_>>());
        let i = head.iter().position(|&k| k == "RcvbufErrors").expect("RcvbufErrors in /proc/net/snmp");
        c.rcvbuf = vals[i].parse().unwrap();
        c.veth_tx_dropped = rest[2].trim().parse().unwrap();
        c
    }

    /// Adds an nft rule in `side`'s input that drops `percent` % of the TCP data segments
    /// (IP length > 500: no SYNs, pure ACKs or small control messages) to `port`, with a counter.
    pub fn drop_tcp(&self, side: Side, port: u16, percent: u32) {
        let rules = format!(
            "table inet wplab {{\n chain input {{\n  type filter hook input priority 0; policy accept;\n  \
             tcp dport {port} ip length > 500 numgen random mod 100 < {percent} counter drop\n }}\n}}\n"
        );
        self.load_nft(side, &rules);
    }

    /// Sets a sysctl in `side`'s namespace (e.g. the per-namespace `net.ipv4.tcp_rmem`).
    pub fn sysctl(&self, side: Side, key: &str, value: &str) {
        self.exec(side, &["sysctl", "-q", "-w", &format!("{key}={value}")]);
    }

    /// Loads an nft ruleset (`nft -f -`) into `side`'s namespace.
    pub fn load_nft(&self, side: Side, rules: &str) {
        let mut child = Command::new("ip")
            .args(["netns", "exec", self.ns(side), "nft", "-f", "-"])
            .stdin(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("nft");
        use std::io::Write;
        child.stdin.take().expect("stdin").write_all(rules.as_bytes()).expect("write nft rules");
        let out = child.wait_with_output().expect("nft");
        assert!(out.status.success(), "nft: {}", String::from_utf8_lossy(&out.stderr));
    }

    /// Datagrams the drop rules of `side` have dropped so far.
    pub fn nft_dropped(&self, side: Side) -> u64 {
        let out = self.exec(side, &["nft", "list", "table", "inet", "wplab"]);
        let text = String::from_utf8_lossy(&out.stdout);
        text.lines()
            .filter_map(|l| {
                let w: Vec<&str> = l.split_whitespace().collect();
                let i = w.iter().position(|&x| x == "packets")?;
                w.get(i + 1)?.parse::<u64>().ok()
            })
            .sum()
    }

    /// Datagrams of `payload` bytes in a (packets, bytes) difference of an nft counter. nft
    /// counts packets, and a UDP GSO packet (at the sender's output, or one that crossed the veth
    /// whole) is one packet of many datagrams; its bytes are one IPv4 and UDP header (28 bytes)
    /// plus every datagram's payload, so `(bytes − 28·packets) / payload` is exact either way.
    pub fn datagrams((packets, bytes): (u64, u64), payload: u64) -> u64 {
        let body = bytes - 28 * packets;
        assert_eq!(body % payload, 0, "nft dropped {packets} packets of {bytes} bytes: not {payload}-byte datagrams");
        body / payload
    }

    /// Packets the side's veth dropped on transmit (its peer's backlog or ring was full): a
    /// drop on the path that neither nft nor the receiving socket sees.
    pub fn veth_tx_dropped(&self, side: Side) -> u64 {
        let out = self.exec(side, &["cat", &format!("/sys/class/net/{}/statistics/tx_dropped", self.dev(side))]);
        String::from_utf8_lossy(&out.stdout).trim().parse().unwrap_or(0)
    }

    /// One counter of the `Udp:` lines of the side's `/proc/net/snmp` (e.g. "RcvbufErrors").
    pub fn snmp_udp(&self, side: Side, key: &str) -> u64 {
        let out = self.exec(side, &["cat", "/proc/net/snmp"]);
        let text = String::from_utf8_lossy(&out.stdout);
        let rows: Vec<Vec<&str>> =
            text.lines().filter(|l| l.starts_with("Udp:")).map(|l| l.split_whitespace().collect()).collect();
        let (Some(head), Some(vals)) = (rows.first(), rows.get(1)) else { panic!("no Udp: lines in {text}") };
        let i = head.iter().position(|&k| k == key).unwrap_or_else(|| panic!("no {key} in {text}"));
        vals[i].parse().unwrap_or(0)
    }
}

/// One side's UDP counters ([`Lab::udp_counters`]); subtract two readings with [`UdpCounters::since`].
#[derive(Clone, Copy, Debug, Default)]
pub struct UdpCounters {
    /// The input drop rules: (packets, bytes).
    pub dropped: (u64, u64),
    /// The output counting rules: (packets, bytes).
    pub output: (u64, u64),
    /// `Udp: RcvbufErrors`.
    pub rcvbuf: u64,
    /// The veth's transmit drops.
    pub veth_tx_dropped: u64,
}

impl UdpCounters {
    /// What moved between `before` and `self`.
    pub fn since(&self, before: &UdpCounters) -> UdpCounters {
        let d = |a: (u64, u64), b: (u64, u64)| (a.0 - b.0, a.1 - b.1);
        UdpCounters {
            dropped: d(self.dropped, before.dropped),
            output: d(self.output, before.output),
            rcvbuf: self.rcvbuf - before.rcvbuf,
            veth_tx_dropped: self.veth_tx_dropped - before.veth_tx_dropped,
        }
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        // Deleting a namespace removes its veth end (and so the pair), qdisc and nft tables.
        for ns in self.ns.iter().chain(&self.middle) {
            let _ = sh(&["ip", "netns", "del", ns]);
        }
    }
}

/// A server running in a lab namespace; killed when dropped. Its output is collected in the
/// background so it never blocks on a full pipe.
pub struct LabServer {
    child: Child,
    out: [Arc<Mutex<Vec<u8>>>; 2],
}

impl LabServer {
    fn spawn(mut cmd: Command) -> LabServer {
        let mut child = cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("spawn server in lab");
        let out = [
            crate::support::harness::collect(child.stdout.take()),
            crate::support::harness::collect(child.stderr.take()),
        ];
        LabServer { child, out }
    }

    /// The server's process id (`ip netns exec` execs the program, so it is wireperf's own).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// What the server has written so far (stdout, stderr), while it keeps running: a server
    /// without `-1` serves test after test, and each test's `-J` document appears here.
    pub fn output_so_far(&self) -> (String, String) {
        let text = |i: usize| String::from_utf8_lossy(&self.out[i].lock().unwrap()).into_owned();
        (text(0), text(1))
    }

    /// Waits for a `-1` server to exit (killing it after `limit`); returns stdout and stderr.
    pub fn finish(mut self, limit: Duration) -> (String, String) {
        let deadline = Instant::now() + limit;
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        crate::support::harness::await_eof(&[&self.out[0], &self.out[1]]);
        let text = |i: usize| String::from_utf8_lossy(&self.out[i].lock().unwrap()).into_owned();
        (text(0), text(1))
    }
}

impl Drop for LabServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
