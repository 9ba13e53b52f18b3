//! Readers: build `HostSnapshot` and `LinkSnapshot`s from a `Root` and the kernel log.

pub mod commands;
pub mod firmware;
pub mod kernel_log;
pub mod procfs;
pub mod sysfs;
pub mod usb;

use std::path::PathBuf;

use crate::error::Error;
use crate::root::Root;
use crate::snapshot::{HostSnapshot, KernelLogStatus, LinkSnapshot};
use kernel_log::KernelEvent;

/// Where kernel messages come from.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum KernelLogSource {
    /// Live: `/dev/kmsg`, else `dmesg`. With `--root`: `DIR/wireperf/kernel.log` if present.
    #[default]
    Auto,
    /// A text file as printed by `dmesg` (or `/dev/kmsg` records).
    File(PathBuf),
    /// Do not read the kernel log; log-based rules say "not checked".
    Off,
}

/// The interfaces to inspect: the named ones (which must exist), or every interface with a
/// `device` link (physical), loopback excluded.
pub fn interface_names(root: &Root, named: &[String]) -> Result<Vec<String>, Error> {
    let all = root.list("sys/class/net");
    if !root.path("sys/class/net").is_dir() {
        return Err(Error::BadRoot(root.base().to_path_buf()));
    }
    if !named.is_empty() {
        for n in named {
            if !all.contains(n) {
                return Err(Error::NoSuchInterface { name: n.clone(), dir: root.path("sys/class/net") });
            }
        }
        return Ok(named.to_vec());
    }
    Ok(all.into_iter().filter(|n| n != "lo" && root.resolve(format!("sys/class/net/{n}/device")).is_some()).collect())
}

/// Reads the kernel log text and its status.
pub fn read_kernel_log(root: &Root, src: &KernelLogSource) -> (Option<String>, KernelLogStatus) {
    let from_file = |p: PathBuf| match std::fs::read(&p) {
        Ok(b) => (
            Some(String::from_utf8_lossy(&b).into_owned()),
            KernelLogStatus { available: true, source: Some(p.display().to_string()), ..Default::default() },
        ),
        Err(e) => (None, KernelLogStatus { note: Some(format!("{}: {e}", p.display())), ..Default::default() }),
    };
    let (text, mut status) = match src {
        KernelLogSource::Off => {
            (None, KernelLogStatus { note: Some("kernel log not read (disabled)".into()), ..Default::default() })
        }
        KernelLogSource::File(p) => from_file(p.clone()),
        KernelLogSource::Auto if !root.is_live() => {
            let p = root.path("wireperf/kernel.log");
            if p.exists() {
                from_file(p)
            } else {
                (
                    None,
                    KernelLogStatus {
                        note: Some("no kernel log given (use --kernel-log FILE)".into()),
                        ..Default::default()
                    },
                )
            }
        }
        KernelLogSource::Auto => match kernel_log::read_live() {
            Ok((t, src)) => (Some(t), KernelLogStatus { available: true, source: Some(src), ..Default::default() }),
            Err(e) => (None, KernelLogStatus { note: Some(e), ..Default::default() }),
        },
    };
    status.lines = text.as_deref().map(|t| t.lines().count()).unwrap_or(0);
    (text, status)
}

/// True when a log event concerns this interface: by name, USB interface/device, or PCI address.
pub fn event_matches(e: &KernelEvent, link: &LinkSnapshot) -> bool {
    if e.ifname.as_deref() == Some(link.name.as_str()) {
        return true;
    }
    if e.device.is_empty() {
        return false;
    }
    if let Some(u) = &link.usb
        && (e.device == u.interface || e.device == u.device || e.device.starts_with(&format!("{}:", u.device)))
    {
        return true;
    }
    link.pci.as_ref().is_some_and(|p| p.address == e.device)
}

/// Everything read: host, links, and the raw kernel log (for `--snapshot`).
#[derive(Debug)]
pub struct Collected {
    /// Host facts.
    pub host: HostSnapshot,
    /// One snapshot per interface.
    pub links: Vec<LinkSnapshot>,
    /// The kernel log text that was read.
    pub kernel_log: Option<String>,
}

/// Reads the host, the interfaces and the kernel log.
pub fn collect(root: &Root, named: &[String], log: &KernelLogSource) -> Result<Collected, Error> {
    let names = interface_names(root, named)?;
    let mut host = procfs::read_host(root);
    let (text, status) = read_kernel_log(root, log);
    host.kernel_log = status;
    let events = text.as_deref().map(kernel_log::parse_log).unwrap_or_default();
    let links = names
        .iter()
        .map(|n| {
            let mut l = sysfs::read_link(root, n);
            l.kernel_events = events.iter().filter(|e| event_matches(e, &l)).cloned().collect();
            l
        })
        .collect();
    Ok(Collected { host, links, kernel_log: text })
}
