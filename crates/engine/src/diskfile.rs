//! The `diskfile` object iperf3 adds to each stream of `end` with `-F`.

use std::path::Path;
use wireperf_protocol::schema::{DiskFile, End};

/// Adds `diskfile` to every TCP stream of `end`: bytes sent and received against the file's
/// size (as it is now: the sender's source, or the receiver's freshly written copy).
pub(crate) fn add_diskfile(end: &mut End, file: &Path) {
    let size = std::fs::metadata(file).map(|m| m.len()).unwrap_or(0);
    // iperf3 says 100 % of an empty file was moved.
    let pct = |b: u64| b.saturating_mul(100).checked_div(size).unwrap_or(100);
    for s in &mut end.streams {
        let (Some(snd), Some(rcv)) = (s.sender.as_ref(), s.receiver.as_ref()) else { continue };
        s.diskfile = Some(DiskFile {
            sent: snd.bytes,
            received: rcv.bytes,
            size,
            percent_sent: pct(snd.bytes),
            percent_received: pct(rcv.bytes),
            filename: file.display().to_string(),
        });
    }
}
