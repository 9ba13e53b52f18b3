//! `-y C`: iperf 2's comma-separated lines. Fields: local time stamp, the data sender's address
//! and port, the receiver's address and port, stream id (-1 for sums), interval with one
//! decimal, bytes, bits per second; UDP receivers add jitter (ms), lost, total, loss percent
//! and out-of-order.
//!
//! The address order is by data direction, not local/remote: iperf 2.1.8 prints the sender
//! first on both hosts, so the two ends' lines for one stream carry the same four fields and
//! can be joined.

use super::sums::Sum;
use crate::event::{ConnInfo, Dir, Sample};

fn stamp() -> String {
    wireperf_sys::time::strftime_local("%Y%m%d%H%M%S").unwrap_or_else(|_| "19700101000000".into())
}

fn bps(bytes: u64, secs: f64) -> u64 {
    if secs > 0.0 { (bytes as f64 * 8.0 / secs) as u64 } else { 0 }
}

/// One stream's line. `udp_sender` adds the receiver columns a UDP client prints for itself
/// (iperf 2 prints them as `0.000,0,-1,-0.000,0` there, and parsers expect 14 fields).
pub fn sample_line(c: &ConnInfo, s: &Sample, udp_sender: bool) -> String {
    let (a, b) = if s.dir == Dir::Send { (c.local, c.peer) } else { (c.peer, c.local) };
    let mut l = format!(
        "{},{},{},{},{},{},{:.1}-{:.1},{},{}",
        stamp(),
        a.ip(),
        a.port(),
        b.ip(),
        b.port(),
        s.id,
        s.start,
        s.end,
        s.bytes,
        bps(s.bytes, s.end - s.start)
    );
    match (s.dir, s.udp) {
        (Dir::Recv, Some(u)) => {
            let pct = if u.total > 0 { 100.0 * u.lost as f64 / u.total as f64 } else { 0.0 };
            l.push_str(&format!(",{:.3},{},{},{pct:.3},{}", u.jitter_ms, u.lost, u.total, u.out_of_order));
        }
        (Dir::Send, _) if udp_sender => l.push_str(",0.000,0,-1,-0.000,0"),
        _ => {}
    }
    l
}

/// A `[SUM]` line: id -1.
pub fn sum_line(c: &ConnInfo, s: &Sum) -> String {
    format!(
        "{},{},{},{},{},-1,{:.1}-{:.1},{},{}",
        stamp(),
        c.local.ip(),
        0,
        c.peer.ip(),
        0,
        s.start,
        s.end,
        s.bytes,
        bps(s.bytes, s.end - s.start)
    )
}
