//! What the doctor's tests are built from, kept apart from the tests (no `#[test]` here):
//! [`fixture`] writes sysfs/procfs-shaped trees, and the functions below inspect one and read
//! its findings.

pub mod fixture;

use std::collections::BTreeSet;
use std::path::Path;

use wireperf_doctor::{InspectOptions, KernelLogSource, Report, RuleOptions};

/// Inspects a fixture root (kernel log from `DIR/wireperf/kernel.log` when present).
pub fn inspect_root(root: &Path, rules: RuleOptions) -> Report {
    let opts =
        InspectOptions { root: Some(root.to_path_buf()), interfaces: vec![], kernel_log: KernelLogSource::Auto, rules };
    wireperf_doctor::inspect(&opts).expect("inspect")
}

/// The finding ids of the only interface in a report.
pub fn ids(r: &Report) -> BTreeSet<&'static str> {
    assert_eq!(
        r.interfaces.len(),
        1,
        "expected one interface, got {:?}",
        r.interfaces.iter().map(|i| &i.link.name).collect::<Vec<_>>()
    );
    r.interfaces[0].finding_ids().into_iter().collect()
}

/// Builds a set of ids.
pub fn set(v: &[&'static str]) -> BTreeSet<&'static str> {
    v.iter().copied().collect()
}
