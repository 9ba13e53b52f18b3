//! `--apply` and `--undo`: perform the safe, reversible fixes (RPS mask, txqueuelen, sysctls,
//! RX ring size) and restore them exactly.
//!
//! Safety rules: only the findings' `apply` actions are run (driver swaps and udev rules are
//! printed, never applied); only interfaces in the report (the named ones, when named) are
//! touched; a change that drops the link (ring resize) is refused on the interface the current
//! SSH session runs over unless `--force`; every change is journaled before the next one.

use std::net::IpAddr;
use std::path::Path;

use crate::Report;
use crate::error::Error;
use crate::journal::{self, Change, Entry, Journal};
use crate::read::commands::run;
use crate::root::Root;
use crate::rules::Action;

/// One planned change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    /// Interface of the finding.
    pub iface: String,
    /// Finding id.
    pub finding: &'static str,
    /// What to do.
    pub action: Action,
    /// Why it will not be done (refused), if so.
    pub refused: Option<String>,
}

impl Step {
    /// Human description, e.g. `write 3 to /sys/class/net/eth0/queues/rx-0/rps_cpus`.
    pub fn describe(&self) -> String {
        match &self.action {
            Action::WriteFile { path, value } => {
                format!("write {} to /{path}", value.replace('\t', " "))
            }
            Action::SetRxRing { iface, rx } => format!("ethtool -G {iface} rx {rx}"),
        }
    }
}

/// What happened to a step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StepResult {
    /// Done and journaled.
    Applied(Entry),
    /// Not done, with the reason (refused, unsupported, ethtool missing).
    Skipped(Step, String),
}

/// True when running with effective uid 0 (read from /proc/self/status: no libc call needed).
pub fn is_root_user() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines().find_map(|l| l.strip_prefix("Uid:")).and_then(|u| u.split_whitespace().nth(1).map(|e| e == "0"))
        })
        .unwrap_or(false)
}

/// The interface the current SSH session arrives on (from `SSH_CONNECTION`), if any.
pub fn session_interface(root: &Root) -> Option<String> {
    let conn = std::env::var("SSH_CONNECTION").ok()?;
    let client: IpAddr = conn.split_whitespace().next()?.parse().ok()?;
    crate::route::interface_for_in(root, client)
}

fn drops_link(a: &Action) -> bool {
    matches!(a, Action::SetRxRing { .. })
}

/// Plans the changes for a report. Duplicate writes (a sysctl suggested for two interfaces)
/// are planned once.
pub fn plan(report: &Report, named: &[String], force: bool, session_iface: Option<&str>) -> Vec<Step> {
    let mut steps: Vec<Step> = Vec::new();
    for i in &report.interfaces {
        if !named.is_empty() && !named.contains(&i.link.name) {
            continue;
        }
        for f in &i.findings {
            for a in &f.apply {
                if steps.iter().any(|s| s.action == *a) {
                    continue;
                }
                let refused = (drops_link(a) && !force && session_iface == Some(i.link.name.as_str())).then(|| {
                    format!("it drops the link of {}, which carries this SSH session (use --force)", i.link.name)
                });
                steps.push(Step { iface: i.link.name.clone(), finding: f.id, action: a.clone(), refused });
            }
        }
    }
    steps
}

/// Executes the planned steps, journaling each change in `journal_path` (appending to an
/// existing, not yet undone journal) before it is made.
pub fn execute(root: &Root, steps: &[Step], journal_path: &Path) -> Result<Vec<StepResult>, Error> {
    let mut out = Vec::new();
    for s in steps {
        if let Some(r) = &s.refused {
            out.push(StepResult::Skipped(s.clone(), format!("refused: {r}")));
            continue;
        }
        match change_for(root, &s.action) {
            Ok(change) => out.push(StepResult::Applied(make(root, &s.iface, s.finding, change, journal_path)?)),
            Err(why) => out.push(StepResult::Skipped(s.clone(), why)),
        }
    }
    Ok(out)
}

/// Applies `actions` (the fix of `finding` on `iface`) one by one, each journaled before it
/// is made; the entries made, in order. A step that cannot be made stops the rest and
/// restores the ones made, so a fix is applied whole or not at all.
pub fn apply_actions(
    root: &Root,
    iface: &str,
    finding: &str,
    actions: &[Action],
    journal_path: &Path,
) -> Result<Vec<Entry>, Error> {
    let mut made = Vec::new();
    for a in actions {
        let step = change_for(root, a)
            .map_err(|msg| Error::Apply { what: describe_action(a), msg })
            .and_then(|c| make(root, iface, finding, c, journal_path));
        match step {
            Ok(e) => made.push(e),
            Err(e) => {
                let _ = restore_entries(root, journal_path, &made);
                return Err(e);
            }
        }
    }
    Ok(made)
}

/// What `a` would change, with the value there now; `Err` when it cannot be made here.
fn change_for(root: &Root, a: &Action) -> Result<Change, String> {
    match a {
        Action::WriteFile { path, value } => {
            let old = root.read(path).map_err(|e| format!("cannot read the old value of /{path} ({e})"))?;
            Ok(Change::File { path: path.clone(), old, new: value.clone() })
        }
        Action::SetRxRing { iface, rx } => match current_rx_ring(root, iface) {
            Some(old) => Ok(Change::RxRing { iface: iface.clone(), old, new: *rx }),
            None => Err(ring_unavailable(root, iface)),
        },
    }
}

fn describe_action(a: &Action) -> String {
    match a {
        Action::WriteFile { path, .. } => format!("/{path}"),
        Action::SetRxRing { iface, rx } => format!("ethtool -G {iface} rx {rx}"),
    }
}

/// Journals `change`, then makes it; a change that fails is taken out of the journal again.
/// Journal first: a crash between the two leaves an entry whose old value is still what is
/// there, which `--undo` restores harmlessly; the other order would leave a change nobody
/// can undo.
fn make(root: &Root, iface: &str, finding: &str, change: Change, journal_path: &Path) -> Result<Entry, Error> {
    let e = Entry { iface: iface.to_string(), finding: finding.to_string(), change, at_unix: journal::now_unix() };
    let mut j = open_journal(root, journal_path);
    j.entries.push(e.clone());
    journal::save(journal_path, &j)?;
    let done = match &e.change {
        Change::File { path, new, .. } => {
            root.write(path, new).map_err(|err| Error::Apply { what: format!("/{path}"), msg: err.to_string() })
        }
        Change::RxRing { iface, new, .. } => set_rx_ring(iface, *new),
    };
    if let Err(err) = done {
        let mut j = open_journal(root, journal_path);
        if let Some(i) = j.entries.iter().rposition(|x| *x == e) {
            j.entries.remove(i);
        }
        journal::save(journal_path, &j)?;
        return Err(err);
    }
    Ok(e)
}

/// The journal to append to: the one at `path` unless it was undone or is another root's.
fn open_journal(root: &Root, path: &Path) -> Journal {
    match journal::load(path) {
        Ok(j) if !j.undone && j.root == root.base().display().to_string() => j,
        _ => Journal::new(root),
    }
}

/// Restores `entries` (newest first) and takes them out of the journal: the fix loop's undo
/// of one step, leaving the rest of the journal as it was.
pub fn restore_entries(root: &Root, journal_path: &Path, entries: &[Entry]) -> Result<(), Error> {
    for e in entries.iter().rev() {
        restore(root, &e.change)?;
        let mut j = open_journal(root, journal_path);
        if let Some(i) = j.entries.iter().rposition(|x| x == e) {
            j.entries.remove(i);
            journal::save(journal_path, &j)?;
        }
    }
    Ok(())
}

fn restore(root: &Root, c: &Change) -> Result<(), Error> {
    match c {
        Change::File { path, old, .. } => {
            root.write(path, old).map_err(|err| Error::Apply { what: format!("restore /{path}"), msg: err.to_string() })
        }
        Change::RxRing { iface, old, .. } => set_rx_ring(iface, *old),
    }
}

fn ring_unavailable(root: &Root, iface: &str) -> String {
    if !root.is_live() {
        "ring sizes are only changed on a live system (not with --root)".into()
    } else if run(&["ethtool".into(), "--version".into()]).is_none() {
        format!("ethtool is not installed; run by hand: sudo ethtool -G {iface} rx N")
    } else {
        format!("the driver of {iface} does not report ring sizes (e.g. veth), so they cannot be changed")
    }
}

fn current_rx_ring(root: &Root, iface: &str) -> Option<u32> {
    if !root.is_live() {
        return None;
    }
    let t = run(&["ethtool".into(), "-g".into(), iface.into()])?;
    crate::read::commands::parse_ethtool_g(&t)?.rx
}

fn set_rx_ring(iface: &str, rx: u32) -> Result<(), Error> {
    let argv = vec!["ethtool".to_string(), "-G".into(), iface.into(), "rx".into(), rx.to_string()];
    run(&argv).map(|_| ()).ok_or_else(|| Error::Apply { what: argv.join(" "), msg: "ethtool failed".into() })
}

/// Restores every change of the journal, newest first, and marks it undone.
pub fn undo(root: &Root, journal_path: &Path) -> Result<Vec<Entry>, Error> {
    let mut j = journal::load(journal_path)?;
    if j.undone {
        return Err(Error::Journal { path: journal_path.to_path_buf(), msg: "already undone".into() });
    }
    if j.root != root.base().display().to_string() {
        return Err(Error::Journal {
            path: journal_path.to_path_buf(),
            msg: format!("it was written for root {}, not {}", j.root, root.base().display()),
        });
    }
    for e in j.entries.iter().rev() {
        restore(root, &e.change)?;
    }
    j.undone = true;
    journal::save(journal_path, &j)?;
    Ok(j.entries)
}
