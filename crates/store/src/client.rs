//! Saving a `wireperf -c` run: the one call the client command makes.

use std::path::Path;

use serde_json::Value;
use wireperf_protocol::schema::TestReport;

use crate::error::StoreError;
use crate::model::{NewRun, RunId, RunKind};
use crate::store::Store;

/// Stores one client test in the database at `db` (default location when `None`), with its
/// bottleneck verdicts and per-CPU load when it was watched (`--why`).
pub fn save_client_run(
    db: Option<&Path>,
    report: &TestReport,
    command_line: &str,
    watched: Option<(Value, Value)>,
) -> Result<RunId, StoreError> {
    let mut store = Store::open_default(db)?;
    let mut run = NewRun::single(RunKind::Client, Some(command_line.to_string()), report.clone());
    if let (Some((bottleneck, cpu_load)), Some(p)) = (watched, run.phases.first_mut()) {
        p.bottleneck = Some(bottleneck);
        p.cpu_load = Some(cpu_load);
    }
    store.insert_run(&run)
}

/// The process's command line as one string, each argument quoted when a shell would need it;
/// the program is named by its file name (`wireperf`), not the path it was started from.
pub fn current_command_line() -> String {
    std::env::args()
        .enumerate()
        .map(|(i, a)| {
            let a = if i == 0 {
                Path::new(&a).file_name().map_or(a.clone(), |n| n.to_string_lossy().into_owned())
            } else {
                a
            };
            shell_quote(&a)
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn shell_quote(a: &str) -> String {
    let plain = !a.is_empty() && a.chars().all(|c| c.is_ascii_alphanumeric() || "-_./:=,%@+".contains(c));
    if plain { a.to_string() } else { format!("'{}'", a.replace('\'', "'\\''")) }
}

#[cfg(test)]
mod tests {
    #[test]
    fn quotes_only_what_needs_it() {
        assert_eq!(super::shell_quote("-c"), "-c");
        assert_eq!(super::shell_quote("a b"), "'a b'");
        assert_eq!(super::shell_quote("it's"), "'it'\\''s'");
        assert_eq!(super::shell_quote(""), "''");
    }
}
