//! This host's changes: the doctor's actions, each journaled before it is made, and their
//! exact undo. The journal is the doctor's (`wireperf doctor --undo` restores it after a
//! kill), so a loop that dies mid-proof leaves a record, not a mystery.

use std::path::{Path, PathBuf};
use wireperf_doctor::apply;
use wireperf_doctor::journal::Entry;
use wireperf_doctor::root::Root;
use wireperf_doctor::rules::Action;

/// One of this host's buffer sysctls (`net.ipv4.tcp_rmem`) as a triple, read live.
pub fn sysctl_triple(name: &str) -> Option<[u64; 3]> {
    let path = format!("/proc/sys/{}", name.replace('.', "/"));
    wireperf_doctor::remedy::triple(&std::fs::read_to_string(path).ok()?)
}

/// Why a change was not made here.
#[derive(Debug, thiserror::Error)]
pub enum LocalError {
    /// Changing the host needs root.
    #[error("not root: run as root to apply this host's steps (their commands are printed)")]
    NotRoot,
    /// The doctor could not make the change (or restore it).
    #[error(transparent)]
    Doctor(#[from] wireperf_doctor::Error),
}

/// Applies and restores this host's steps.
#[derive(Debug, Clone)]
pub struct LocalHost {
    /// A fixture tree, or `None` for the live host (a [`Root`] logs what it reads, so one is
    /// made per change rather than kept).
    base: Option<PathBuf>,
    journal: PathBuf,
}

impl LocalHost {
    /// The live host, journaling in `journal` (the doctor's default when `None`).
    pub fn live(journal: Option<PathBuf>) -> Self {
        let journal =
            journal.unwrap_or_else(|| wireperf_doctor::journal::default_path(&Root::live(), apply::is_root_user()));
        Self { base: None, journal }
    }

    /// A fixture tree instead of `/` (tests).
    pub fn at(root: &Path, journal: PathBuf) -> Self {
        Self { base: Some(root.to_path_buf()), journal }
    }

    fn root(&self) -> Root {
        self.base.as_deref().map_or_else(Root::live, Root::at)
    }

    /// The journal file.
    pub fn journal(&self) -> &Path {
        &self.journal
    }

    /// Whether this process may change the host (a fixture tree always may).
    pub fn can_apply(&self) -> bool {
        self.base.is_some() || apply::is_root_user()
    }

    /// Makes `actions` for `cause` on `iface`; the journal entries made.
    pub fn apply(&self, iface: &str, cause: &str, actions: &[Action]) -> Result<Vec<Entry>, LocalError> {
        if !self.can_apply() {
            return Err(LocalError::NotRoot);
        }
        Ok(apply::apply_actions(&self.root(), iface, cause, actions, &self.journal)?)
    }

    /// Restores `entries` and takes them out of the journal.
    pub fn undo(&self, entries: &[Entry]) -> Result<(), LocalError> {
        Ok(apply::restore_entries(&self.root(), &self.journal, entries)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn apply_journals_and_undo_restores_the_exact_old_value() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let file = dir.path().join("proc/sys/net/ipv4");
        std::fs::create_dir_all(&file).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(file.join("tcp_rmem"), "4096\t8192\t8192\n").unwrap_or_else(|e| panic!("{e}"));
        let journal = dir.path().join("journal.json");
        let host = LocalHost::at(dir.path(), journal.clone());
        let a = Action::WriteFile { path: "proc/sys/net/ipv4/tcp_rmem".into(), value: "4096\t131072\t6291456".into() };
        let made = host.apply("veth0", "receiver-window", &[a]).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(made.len(), 1);
        let read = || std::fs::read_to_string(file.join("tcp_rmem")).unwrap_or_default();
        assert_eq!(read().trim(), "4096\t131072\t6291456");
        let j = wireperf_doctor::journal::load(&journal).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(j.entries, made, "journaled");
        host.undo(&made).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(read().trim(), "4096\t8192\t8192");
        let j = wireperf_doctor::journal::load(&journal).unwrap_or_else(|e| panic!("{e}"));
        assert!(j.entries.is_empty(), "an undone step leaves the journal");
    }

    #[test]
    fn a_step_that_fails_half_way_is_undone_whole() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        std::fs::create_dir_all(dir.path().join("sys/class/net/eth0")).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(dir.path().join("sys/class/net/eth0/tx_queue_len"), "500\n").unwrap_or_else(|e| panic!("{e}"));
        let host = LocalHost::at(dir.path(), dir.path().join("j.json"));
        let ok = Action::WriteFile { path: "sys/class/net/eth0/tx_queue_len".into(), value: "1000".into() };
        let missing = Action::WriteFile { path: "sys/class/net/eth9/tx_queue_len".into(), value: "1000".into() };
        assert!(host.apply("eth0", "txqueuelen", &[ok, missing]).is_err());
        let now = std::fs::read_to_string(dir.path().join("sys/class/net/eth0/tx_queue_len")).unwrap_or_default();
        assert_eq!(now.trim(), "500", "the first write was restored");
    }
}
