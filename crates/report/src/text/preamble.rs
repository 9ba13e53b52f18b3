//! Lines printed before the first interval, the server banner, and `iperf Done.`.
//!
//! iperf3 prints these as events happen (connect, each stream, test start), so each is its
//! own function for the engine to call at that moment. [`render_client_preamble`] and
//! [`render_server_preamble`] put them together from a finished report's `start` object, for
//! replays and tests.

use super::prefix::Printed;
use super::{Role, TextContext};
use wireperf_protocol::Protocol;
use wireperf_protocol::schema::{Connected, Start, TestStart};

/// 59 dashes, above and below `Server listening on …`.
pub const BANNER_RULE: &str = "-----------------------------------------------------------\n";

/// `Connecting to host 127.0.0.1, port 5201` (client; `host` as the user typed it).
pub fn connecting(host: &str, port: u16) -> String {
    format!("Connecting to host {host}, port {port}\n")
}

/// `Reverse mode, remote host 127.0.0.1 is sending` (client with `-R`).
pub fn reverse_mode(host: &str) -> String {
    format!("Reverse mode, remote host {host} is sending\n")
}

/// `[  5] local 127.0.0.1 port 56646 connected to 127.0.0.1 port 5201`, one per stream.
pub fn connected(c: &Connected) -> String {
    format!(
        "[{:>3}] local {} port {} connected to {} port {}\n",
        c.socket, c.local_host, c.local_port, c.remote_host, c.remote_port
    )
}

/// `Accepted connection from 127.0.0.1, port 56634` (server; the client's control port).
pub fn accepted(host: &str, port: u16) -> String {
    format!("Accepted connection from {host}, port {port}\n")
}

/// The three-line banner a server prints before waiting for each test.
pub fn server_banner(port: u16, test_number: u32) -> String {
    format!("{BANNER_RULE}Server listening on {port} (test #{test_number})\n{BANNER_RULE}")
}

/// `      Cookie: <36 chars>` (`-V`).
pub fn cookie(cookie: &str) -> String {
    format!("      Cookie: {cookie}\n")
}

/// `      TCP MSS: 32768 (default)`, or without `(default)` when `-M` was given (`-V`, TCP).
pub fn tcp_mss(mss: u32, default: bool) -> String {
    if default { format!("      TCP MSS: {mss} (default)\n") } else { format!("      TCP MSS: {mss}\n") }
}

/// `      Target Bitrate: 10000000` (`-V`, when a rate is set; bit/s).
pub fn target_bitrate(bits_per_second: u64) -> String {
    format!("      Target Bitrate: {bits_per_second}\n")
}

/// `Time: Sun, 29 Nov 2026 18:00:20 GMT` (`-V`; the RFC 1123 text of `start.timestamp`).
pub fn time(rfc1123: &str) -> String {
    format!("Time: {rfc1123}\n")
}

/// `Control connection MSS 32768` (client `-V`; iperf3 prints it with plain `printf`, so it
/// never carries the title or timestamp prefix: add it with [`Printed::raw`]).
pub fn control_mss(mss: u32) -> String {
    format!("Control connection MSS {mss}\n")
}

/// `Setting UDP block size to 32768` (client `-V`, UDP without `-l`; plain `printf` too).
pub fn udp_block_size(blksize: u32) -> String {
    format!("Setting UDP block size to {blksize}\n")
}

/// `Starting Test: protocol: TCP, 1 streams, 131072 byte blocks, omitting 0 seconds, 2
/// second test, tos 0` (`-V`), or the `-n`/`-k` variants.
pub fn starting_test(t: &TestStart) -> String {
    let head = format!(
        "Starting Test: protocol: {}, {} streams, {} byte blocks, omitting {} seconds, ",
        t.protocol, t.num_streams, t.blksize, t.omit
    );
    let amount = if t.bytes != 0 {
        format!("{} bytes to send", t.bytes)
    } else if t.blocks != 0 {
        format!("{} blocks to send", t.blocks)
    } else {
        format!("{} second test", t.duration)
    };
    format!("{head}{amount}, tos {}\n", t.tos)
}

/// `Finished omit period, starting real test` (`-V` with `-i 0` only).
pub fn omit_done() -> &'static str {
    "Finished omit period, starting real test\n"
}

/// `Authentication succeeded for user 'u' ts 1795975249` (or `failed`).
pub fn authentication(user: &str, ts: i64, succeeded: bool) -> String {
    let word = if succeeded { "succeeded" } else { "failed" };
    format!("Authentication {word} for user '{user}' ts {ts}\n")
}

/// The blank line and `iperf Done.` the client prints last (two printing calls, so with
/// `-T` the blank line becomes `title:  `).
pub fn done() -> &'static str {
    "\niperf Done.\n"
}

/// `iperf3: error - <message>` (stderr).
pub fn error_line(message: &str) -> String {
    format!("iperf3: error - {message}\n")
}

/// The `-V` version block: `iperf 3.12` and the system line. iperf3 prints an empty call
/// between them, so with `-T` the system line carries the prefix twice; [`Printed`] keeps it.
pub fn version_block(version: &str, system_info: &str) -> Printed {
    let mut p = Printed::new();
    p.report(format!("{version}\n"));
    p.report("");
    p.report(format!("{system_info}\n"));
    p
}

/// Extra `-V` facts the `start` object does not hold.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VerboseExtras {
    /// MSS of the control connection (`Control connection MSS`, client only).
    pub control_mss: Option<u32>,
    /// UDP block size chosen because `-l` was not given (`Setting UDP block size to`).
    pub udp_block_size_chosen: Option<u32>,
}

/// What a client prints before its first interval, from `start` (the `connecting_to` host
/// is the one the user typed). With `-V`: version block, control MSS, UDP block size,
/// `Time:`, connecting, reverse, cookie, TCP MSS, target bitrate, connected lines,
/// `Starting Test:`.
pub fn render_client_preamble(start: &Start, ctx: &TextContext, extras: &VerboseExtras) -> Printed {
    let mut p = Printed::new();
    if ctx.verbose {
        p.extend(version_block(&start.version, &start.system_info));
        if let Some(mss) = extras.control_mss {
            p.raw(control_mss(mss));
        }
        if let Some(b) = extras.udp_block_size_chosen {
            p.raw(udp_block_size(b));
        }
        if let Some(ts) = &start.timestamp {
            p.report(time(&ts.time));
        }
    }
    if let Some(to) = &start.connecting_to {
        p.report(connecting(&to.host, to.port));
        if ctx.reverse && !ctx.bidir {
            p.report(reverse_mode(&to.host));
        }
    }
    if ctx.verbose {
        verbose_connect_details(&mut p, start, ctx);
    }
    connected_and_start(&mut p, start, ctx);
    p
}

/// What a server prints for one test before its first interval: banner, (`-V`: `Time:`),
/// `Accepted connection`, (`-V`: cookie, TCP MSS, target bitrate), connected lines,
/// (`-V`: `Starting Test:`). With `-V` iperf3 prints the version block once per server
/// iteration, before the banner; pass it separately with [`version_block`].
pub fn render_server_preamble(start: &Start, ctx: &TextContext, port: u16, test_number: u32) -> Printed {
    let mut p = Printed::new();
    p.report(BANNER_RULE);
    p.report(format!("Server listening on {port} (test #{test_number})\n"));
    p.report(BANNER_RULE);
    if let Some(ts) = start.timestamp.as_ref().filter(|_| ctx.verbose) {
        p.report(time(&ts.time));
    }
    if let Some(from) = &start.accepted_connection {
        p.report(accepted(&from.host, from.port));
    }
    if ctx.verbose {
        verbose_connect_details(&mut p, start, ctx);
    }
    connected_and_start(&mut p, start, ctx);
    p
}

fn verbose_connect_details(p: &mut Printed, start: &Start, ctx: &TextContext) {
    if let Some(c) = &start.cookie {
        p.report(cookie(c));
    }
    if ctx.protocol == Protocol::Tcp {
        if let Some(mss) = start.tcp_mss {
            p.report(tcp_mss(mss, false));
        } else if let Some(mss) = start.tcp_mss_default {
            p.report(tcp_mss(mss, true));
        }
    }
    if let Some(rate) = start.target_bitrate.filter(|&r| r != 0) {
        p.report(target_bitrate(rate));
    }
}

fn connected_and_start(p: &mut Printed, start: &Start, ctx: &TextContext) {
    for c in &start.connected {
        p.report(connected(c));
    }
    if let Some(t) = start.test_start.as_ref().filter(|_| ctx.verbose) {
        p.report(starting_test(t));
    }
}

/// Whether the role prints `iperf Done.` at all (the server never does).
pub fn prints_done(ctx: &TextContext) -> bool {
    ctx.role == Role::Client
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn banner_is_59_dashes() {
        assert_eq!(BANNER_RULE.trim_end().len(), 59);
        assert_eq!(server_banner(5391, 2), format!("{BANNER_RULE}Server listening on 5391 (test #2)\n{BANNER_RULE}"));
    }

    #[test]
    fn starting_test_variants() {
        let mut t =
            TestStart { protocol: "TCP".into(), num_streams: 1, blksize: 131072, duration: 2, ..TestStart::default() };
        assert_eq!(
            starting_test(&t),
            "Starting Test: protocol: TCP, 1 streams, 131072 byte blocks, omitting 0 seconds, 2 second test, tos 0\n"
        );
        t.bytes = 20 << 20;
        assert!(starting_test(&t).ends_with("omitting 0 seconds, 20971520 bytes to send, tos 0\n"));
        t.bytes = 0;
        t.blocks = 7;
        assert!(starting_test(&t).ends_with("7 blocks to send, tos 0\n"));
    }

    #[test]
    fn small_lines() {
        assert_eq!(tcp_mss(1448, false), "      TCP MSS: 1448\n");
        assert_eq!(authentication("mario", 1, false), "Authentication failed for user 'mario' ts 1\n");
        assert_eq!(error_line("x"), "iperf3: error - x\n");
        assert_eq!(omit_done(), "Finished omit period, starting real test\n");
    }
}
