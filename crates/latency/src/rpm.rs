//! Responsiveness in round trips per minute (RPM).
//!
//! The IETF IPPM draft "Responsiveness under Working Conditions" (draft-ietf-ippm-responsiveness)
//! measures round trips while the path is loaded, on two kinds of probes: *foreign* probes on
//! connections of their own (a TCP handshake, a TLS handshake, an HTTP request) and *self*
//! probes on the load-generating connections (an HTTP/2 request queued behind the load). Each
//! kind is reduced to its **trimmed mean** (the slowest 5 % dropped, [`TRIM_KEEP`]), and
//!
//! ```text
//! RPM = 60000 / ( 1/6 · (TM(tcp_f) + TM(tls_f) + TM(http_f)) + 1/2 · TM(http_s) )   [ms]
//! ```
//!
//! so foreign and self probes weigh half each. wireperf implements the parts an iperf3 test
//! can carry: no TLS and no HTTP. Its foreign probes are one kind (a TCP connect to the
//! server's port; with a wireperf server, its echo probes), which then stands for the draft's
//! three foreign terms; its self probes are the load streams' own smoothed round trip
//! (`tcpi_rtt`, read by the sender's kernel). When a test has no self probes (a UDP test, or
//! a download against a server that does not report its TCP_INFO) the foreign term alone is
//! used: `RPM = 60000 / TM(foreign)`. The draft's load ramp-up and its stability criterion
//! are not implemented: the load is the iperf3 test as the user asked for it.

use crate::percentile::trimmed_mean;

/// The percentile a trimmed mean keeps (the draft trims the top 5 %).
pub const TRIM_KEEP: f64 = 95.0;

/// RPM from loaded foreign and self round trips (ms); `None` when no foreign probe came back
/// (a figure that was not measured is not invented) or the mean is not positive.
pub fn rpm(foreign_ms: &[f64], self_ms: &[f64]) -> Option<f64> {
    let f = trimmed_mean(foreign_ms, TRIM_KEEP)?;
    let rtt = match trimmed_mean(self_ms, TRIM_KEEP) {
        Some(s) => 0.5 * f + 0.5 * s,
        None => f,
    };
    (rtt > 0.0).then(|| 60_000.0 / rtt)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn foreign_only() {
        // 20 ms round trips: 3000 per minute.
        assert_eq!(rpm(&[20.0; 10], &[]), Some(3000.0));
    }

    #[test]
    fn foreign_and_self_weigh_half_each() {
        // TM(foreign) = 10, TM(self) = 50: (5 + 25) = 30 ms → 2000 RPM.
        assert_eq!(rpm(&[10.0; 20], &[50.0; 20]), Some(2000.0));
    }

    #[test]
    fn the_slowest_five_percent_are_trimmed() {
        let mut v = vec![100.0; 19];
        v.push(10_000.0);
        assert_eq!(rpm(&v, &[]), Some(600.0));
    }

    #[test]
    fn nothing_measured_is_none() {
        assert_eq!(rpm(&[], &[5.0]), None);
        assert_eq!(rpm(&[0.0], &[]), None);
    }
}
