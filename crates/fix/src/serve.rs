//! The server's end of the fix channel: a `--allow-fix` server changes its own host for a
//! client's fix loop, and only as its own doctor says.
//!
//! Safety rules, in the order a request meets them:
//! - One channel at a time ([`SessionGate`]): two loops tuning one host would prove nothing.
//! - A server that authenticates its clients takes a fix request only with a valid token.
//! - The client names a finding id; the server recomputes its own fix for it (its doctor on
//!   the interface toward that client, or its own buffer sysctls) and applies its own actions.
//!   Nothing the client sends is a path, a value or a command: a buffer is sized from the
//!   client's measured bytes in flight, within the doctor's own bounds (never below the kernel's
//!   default, never above 64 MiB).
//! - A change that drops the link (a ring resize) is never made remotely.
//! - Every change is journaled before it is made (the doctor's journal on this host) and
//!   logged with the client's address.
//! - A step not yet kept is restored when the channel closes for any reason (the client's
//!   `Bye`, its crash, a lost path: TCP keepalive notices within seconds).

use crate::local::LocalHost;
use std::collections::BTreeMap;
use std::io::{ErrorKind, Read, Write};
use std::net::{IpAddr, SocketAddr, TcpStream};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use wireperf_doctor::journal::Entry;
use wireperf_doctor::remedy;
use wireperf_doctor::rules::Action;
use wireperf_engine::server::AuthHook;
use wireperf_protocol::fix_wire::{FixAnswer, FixRequest, MAX_MESSAGE, decode_request, encode_answer};
use wireperf_protocol::frame::{Expect, FrameReader, Item};

/// The first request must come within this.
const HELLO_TIMEOUT: Duration = Duration::from_secs(10);
/// A channel lives at most this long: a fix loop of many steps and long series fits easily.
const SESSION_MAX: Duration = Duration::from_secs(6 * 3600);
/// Steps one channel may apply.
const MAX_STEPS: u32 = 64;

/// Allows one fix channel at a time on a server.
#[derive(Debug, Clone, Default)]
pub struct SessionGate(Arc<AtomicBool>);

impl SessionGate {
    /// Takes the gate; `None` when another channel holds it.
    pub fn enter(&self) -> Option<GateHeld> {
        self.0.compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire).ok()?;
        Some(GateHeld(Arc::clone(&self.0)))
    }
}

/// The gate, held until dropped.
#[derive(Debug)]
pub struct GateHeld(Arc<AtomicBool>);

impl Drop for GateHeld {
    fn drop(&mut self) {
        self.0.store(false, Ordering::Release);
    }
}

/// What a `--allow-fix` server needs to serve a channel.
#[derive(Debug, Clone)]
pub struct ServeConfig {
    /// This host's journal (`--fix-journal`, else the doctor's default).
    pub journal: Option<PathBuf>,
}

/// One step the channel applied.
struct Applied {
    cause: String,
    entries: Vec<Entry>,
    kept: bool,
}

/// Serves one channel until it closes; every line for the operator's log goes to `log`.
pub fn serve(
    sock: TcpStream,
    peer: SocketAddr,
    cfg: &ServeConfig,
    auth: Option<AuthHook>,
    _gate: GateHeld,
    log: &mut dyn FnMut(String),
) {
    let mut s = Session { sock, peer, reader: FrameReader::new(), host: LocalHost::live(cfg.journal.clone()) };
    set_keepalive(&s.sock);
    if s.send(&FixAnswer::Offer { auth_required: auth.is_some() }).is_err() {
        return;
    }
    let who = match s.hello(auth.as_ref()) {
        Ok(who) => who,
        Err(reason) => {
            log(format!("fix channel from {}: refused: {reason}", peer.ip()));
            let _ = s.send(&FixAnswer::Refused { reason });
            return;
        }
    };
    let root = s.host.can_apply();
    log(format!("fix channel from {who}: open (journal {})", s.host.journal().display()));
    if s.send(&FixAnswer::Welcome { root }).is_err() {
        return;
    }
    let mut steps: BTreeMap<u32, Applied> = BTreeMap::new();
    let started = Instant::now();
    while started.elapsed() < SESSION_MAX {
        let req = match s.read_request(None) {
            Ok(Some(r)) => r,
            Ok(None) => break,
            Err(reason) => {
                let _ = s.send(&FixAnswer::Error { reason });
                break;
            }
        };
        if req == FixRequest::Bye {
            break;
        }
        let answer = s.handle(req, root, &mut steps, &who, log);
        if s.send(&answer).is_err() {
            break;
        }
    }
    for (n, a) in steps.iter().filter(|(_, a)| !a.kept) {
        match s.host.undo(&a.entries) {
            Ok(()) => log(format!(
                "fix channel from {who}: restored step {n} ({}), the channel closed before it was kept: {}",
                a.cause,
                describe_restores(&a.entries).join("; ")
            )),
            Err(e) => log(format!("fix channel from {who}: cannot restore step {n} ({}): {e}", a.cause)),
        }
    }
    log(format!("fix channel from {who}: closed"));
}

struct Session {
    sock: TcpStream,
    peer: SocketAddr,
    reader: FrameReader,
    host: LocalHost,
}

impl Session {
    fn send(&mut self, a: &FixAnswer) -> std::io::Result<()> {
        let _ = self.sock.set_write_timeout(Some(Duration::from_secs(10)));
        self.sock.write_all(&encode_answer(a))
    }

    /// The Hello, checked: who the client is for the log (`user at address`).
    fn hello(&mut self, auth: Option<&AuthHook>) -> Result<String, String> {
        let req = self.read_request(Some(HELLO_TIMEOUT))?.ok_or("the client left before its hello")?;
        let FixRequest::Hello { authtoken } = req else { return Err("the first request must be a hello".into()) };
        let ip = self.peer.ip();
        match auth {
            None => Ok(ip.to_string()),
            Some(a) => a.authorize(authtoken.as_deref()).map(|user| format!("{user} at {ip}")),
        }
    }

    /// The next request; `Ok(None)` when the client closed or the path died. Without a limit
    /// it waits as long as the client's series runs (keepalive notices a dead peer).
    fn read_request(&mut self, limit: Option<Duration>) -> Result<Option<FixRequest>, String> {
        let _ = self.sock.set_read_timeout(Some(limit.unwrap_or(Duration::from_secs(1))));
        let started = Instant::now();
        let mut buf = [0u8; 4096];
        loop {
            match self.reader.next(Expect::Json { max_len: MAX_MESSAGE }) {
                Ok(Some(Item::Json(v))) => return decode_request(v).map(Some).map_err(|e| e.to_string()),
                Ok(Some(_)) => return Err("not a JSON request".into()),
                Ok(None) => {}
                Err(e) => return Err(e.to_string()),
            }
            match self.sock.read(&mut buf) {
                Ok(0) => return Ok(None),
                Ok(n) => self.reader.push(&buf[..n]),
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                    if limit.is_some_and(|l| started.elapsed() >= l) {
                        return Err("no request in time".into());
                    }
                    if started.elapsed() >= SESSION_MAX {
                        return Ok(None);
                    }
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => return Ok(None),
            }
        }
    }

    fn handle(
        &mut self,
        req: FixRequest,
        root: bool,
        steps: &mut BTreeMap<u32, Applied>,
        who: &str,
        log: &mut dyn FnMut(String),
    ) -> FixAnswer {
        match req {
            FixRequest::Apply { finding, need_bytes } => {
                let fix = match own_fix(&finding, need_bytes, self.peer.ip()) {
                    Ok(f) => f,
                    Err((reason, commands)) => return FixAnswer::NotApplied { reason, commands },
                };
                if !root {
                    let reason = "the server does not run as root, so it cannot change its host".to_string();
                    return FixAnswer::NotApplied { reason, commands: fix.commands };
                }
                if steps.len() as u32 >= MAX_STEPS {
                    return FixAnswer::Error { reason: format!("at most {MAX_STEPS} steps per channel") };
                }
                match self.host.apply(&fix.iface, &finding, &fix.actions) {
                    Ok(entries) => {
                        let n = steps.keys().next_back().map_or(1, |k| k + 1);
                        let changes: Vec<String> = entries.iter().map(|e| e.change.describe()).collect();
                        log(format!("fix channel from {who}: step {n} ({finding}) applied: {}", changes.join("; ")));
                        steps.insert(n, Applied { cause: finding, entries, kept: false });
                        FixAnswer::Applied { step: n, changes, persist: fix.persist }
                    }
                    Err(e) => FixAnswer::Error { reason: e.to_string() },
                }
            }
            FixRequest::Keep { step } => match steps.get_mut(&step) {
                Some(a) => {
                    a.kept = true;
                    log(format!("fix channel from {who}: step {step} ({}) kept", a.cause));
                    FixAnswer::Kept { step }
                }
                None => FixAnswer::Error { reason: format!("no step {step}") },
            },
            FixRequest::Undo { step } => match steps.remove(&step) {
                Some(a) => match self.host.undo(&a.entries) {
                    Ok(()) => {
                        let restored = describe_restores(&a.entries);
                        log(format!(
                            "fix channel from {who}: step {step} ({}) undone: {}",
                            a.cause,
                            restored.join("; ")
                        ));
                        FixAnswer::Undone { step, restored }
                    }
                    Err(e) => {
                        steps.insert(step, a);
                        FixAnswer::Error { reason: e.to_string() }
                    }
                },
                None => FixAnswer::Error { reason: format!("no step {step}") },
            },
            FixRequest::Hello { .. } => FixAnswer::Error { reason: "hello twice".into() },
            FixRequest::Bye => FixAnswer::Error { reason: "bye is not answered".into() },
        }
    }
}

fn describe_restores(entries: &[Entry]) -> Vec<String> {
    entries.iter().rev().map(|e| e.change.describe_restore()).collect()
}

/// TCP keepalive on the channel: a client whose host died or whose path broke sends no FIN,
/// and its unkept steps must not wait for the session's end to be restored.
fn set_keepalive(sock: &TcpStream) {
    let ka = socket2::TcpKeepalive::new()
        .with_time(Duration::from_secs(2))
        .with_interval(Duration::from_secs(1))
        .with_retries(3);
    let _ = socket2::SockRef::from(sock).set_tcp_keepalive(&ka);
}

/// The server's own fix for a finding.
struct OwnFix {
    iface: String,
    actions: Vec<Action>,
    commands: Vec<String>,
    persist: Vec<String>,
}

/// This host's fix for `finding`, toward a client at `peer`: `Err((why, commands by hand))`
/// when there is nothing this server will change for it.
fn own_fix(finding: &str, need: Option<u64>, peer: IpAddr) -> Result<OwnFix, (String, Vec<String>)> {
    let iface = wireperf_doctor::interface_for(peer).unwrap_or_default();
    let buffers = |rmem: bool, wmem: bool| {
        let mut found = Vec::new();
        if rmem {
            found.extend(remedy::receive_buffer(crate::local::sysctl_triple("net.ipv4.tcp_rmem"), need));
        }
        if wmem {
            found.extend(remedy::send_buffer(crate::local::sysctl_triple("net.ipv4.tcp_wmem"), need));
        }
        if found.is_empty() {
            return Err(("the server's TCP buffers already hold what the test had in flight".to_string(), Vec::new()));
        }
        Ok(OwnFix {
            iface: iface.clone(),
            actions: found.iter().flat_map(|r| r.actions.clone()).collect(),
            commands: found.iter().flat_map(|r| r.commands.clone()).collect(),
            persist: found.iter().flat_map(|r| r.persist.clone()).collect(),
        })
    };
    match finding {
        "receiver-window" => return buffers(true, false),
        "sender-buffer" => return buffers(false, true),
        "socket-buffers" => return buffers(true, true),
        _ => {}
    }
    let opts = wireperf_doctor::InspectOptions { interfaces: vec![iface.clone()], ..Default::default() };
    let report =
        wireperf_doctor::inspect(&opts).map_err(|e| (format!("the server's doctor failed: {e}"), Vec::new()))?;
    let f = report
        .interfaces
        .iter()
        .flat_map(|i| i.findings.iter())
        .find(|f| f.id == finding)
        .ok_or_else(|| (format!("the server's doctor does not find {finding} on {iface} now"), Vec::new()))?;
    if f.apply.is_empty() {
        return Err((
            format!("{finding} is not a change wireperf makes; run its fix there by hand"),
            f.fix.commands.clone(),
        ));
    }
    if f.apply.iter().any(|a| matches!(a, Action::SetRxRing { .. })) {
        return Err((
            "a change that drops the link (a ring resize) is never made remotely; run it on the server".to_string(),
            f.fix.commands.clone(),
        ));
    }
    Ok(OwnFix {
        iface,
        actions: f.apply.clone(),
        commands: f.fix.commands.clone(),
        persist: f.fix.notes.iter().filter(|n| n.starts_with("Persist")).cloned().collect(),
    })
}
