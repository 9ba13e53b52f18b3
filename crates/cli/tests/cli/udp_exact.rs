//! Exact UDP loss, repeated: every run's reported loss must equal what the kernel dropped.
//!
//! Each test function builds one lab (docs/lab.md) and runs its configurations [`RUNS`] times
//! each in it. Both namespaces hold the same nft table ([`Lab::count_and_drop_udp`]): an input
//! rule dropping 2 % of the data datagrams, and an output rule counting the data datagrams that
//! left the side's sockets, so every direction (forward, `-R`, both of `--bidir`) is measured
//! the same way. For one direction, with `out` counted at the sender's output and the rest at
//! the receiver (nft input drops, `RcvbufErrors`) or on the path (the sending veth's transmit
//! drops: its peer's backlog was full):
//!
//! ```text
//! arrived  = out − veth − nft − rcvbuf            (every datagram that reached the socket)
//! expected = claimed − arrived                    (claimed: the sender's count, as the receiver learnt it)
//! ```
//!
//! and the reported loss must equal `expected` every time. The sender is checked too:
//! `claimed − out` (a "phantom": counted but never given to the kernel) must be 0 for a wireperf
//! sender, which may instead leave a datagram uncounted only if the kernel refused it (at most
//! the veth's drops); iperf3 3.16+ senders end their stream threads with `pthread_cancel`, which
//! can land between a datagram's count and its `write`, so up to one phantom per stream is
//! allowed for them and printed: the loss is still exact against the count they report.
//! A stock iperf3 receiver (the client's own direction of a stock `--bidir` client) reports no
//! socket drops, and counts loss only below the highest sequence number it saw (iperf3's
//! `cnt_error`), so a datagram lost at the very end of its stream goes uncounted there: for that
//! direction the check is that it never reports more than the kernel dropped, and no phantoms.
//! Every run's figures are printed; a test fails after printing the whole table. Runs are 1 s
//! long, and a test function holds at most ~30 runs, to stay well inside nextest's 2-minute
//! limit on a loaded machine.

#![allow(clippy::unwrap_used)]

use crate::harness::*;
use crate::lab::{LAB_PORT, Lab, LabConfig, Side, UdpCounters};
use serde_json::Value;
use std::path::PathBuf;
use std::time::Duration;

/// Runs per configuration.
pub const RUNS: usize = 10;
/// Datagram payload (1428 bytes with IPv4 and UDP headers: one per 1500-byte frame).
const LEN: u64 = 1400;
/// Percent of data datagrams the nft rule drops.
const DROP_PERCENT: u32 = 2;

/// Who sends, and how.
pub struct Case {
    /// Shown in the table.
    pub name: &'static str,
    /// The sending program (the client, or with `-R` the server).
    pub sender: PathBuf,
    /// Extra client arguments (`-b`, `-P`, `-R`, `--bidir`).
    pub args: &'static [&'static str],
    /// Run both wireperf ends with `WIREPERF_UDP_OFFLOAD=off` (no GSO, no GRO).
    pub no_offload: bool,
    /// The lab lets GSO packets cross the veth whole ([`LabConfig::whole_gso`]).
    pub whole_gso: bool,
    /// Phantoms allowed per stream (see the module doc): 0, or 1 for iperf3 3.16+ senders.
    pub phantom_per_stream: u64,
}

impl Case {
    fn has(&self, flag: &str) -> bool {
        self.args.contains(&flag)
    }

    fn streams(&self) -> u64 {
        let p = self.args.iter().position(|&a| a == "-P");
        p.and_then(|i| self.args.get(i + 1)).map_or(1, |n| n.parse().unwrap())
    }
}

/// One direction of one run.
#[derive(Debug, Default, Clone, Copy)]
pub struct Figures {
    /// Datagrams the sender says it sent (the receiver's document).
    pub claimed: u64,
    /// Data datagrams that left the sender's sockets (its nft output counter).
    pub out: u64,
    /// Packets the receiver's nft rule dropped, and the datagrams they held.
    pub nft_packets: u64,
    pub nft_datagrams: u64,
    /// The receiving namespace's `RcvbufErrors`.
    pub rcvbuf: u64,
    /// The sending veth's transmit drops.
    pub veth_drops: u64,
    /// Reported by the receiver: socket drops (`None` from a stock iperf3 receiver), sender
    /// drops (wireperf senders), loss.
    pub socket_drops: Option<u64>,
    pub sender_drops: u64,
    pub reported: u64,
    /// The receiver is stock iperf3 (see the module doc).
    pub stock_receiver: bool,
}

impl Figures {
    /// What the kernel's counters say the receiver must report lost.
    pub fn expected(&self) -> i64 {
        let arrived = self.out as i64 - (self.veth_drops + self.nft_datagrams + self.rcvbuf) as i64;
        self.claimed as i64 - arrived
    }

    /// Reported minus expected.
    pub fn difference(&self) -> i64 {
        self.reported as i64 - self.expected()
    }

    /// Counted as sent but never given to the kernel (negative: given to it uncounted).
    pub fn phantom(&self) -> i64 {
        self.claimed as i64 - self.out as i64
    }

    fn row(&self, name: &str, run: usize) -> String {
        format!(
            "{name:<30} run {run:>2}: sent {:>7} out {:>7}  nft {:>5} pkts = {:>5} dgrams  socket {:>5} \
             (RcvbufErrors {:>5})  veth {:>4}  sender_drops {:>4}  reported {:>5}  expected {:>5}  \
             difference {:>+3}  phantom {:>+3}",
            self.claimed,
            self.out,
            self.nft_packets,
            self.nft_datagrams,
            self.socket_drops.map_or("n/a".to_string(), |d| d.to_string()),
            self.rcvbuf,
            self.veth_drops,
            self.sender_drops,
            self.reported,
            self.expected(),
            self.difference(),
            self.phantom()
        )
    }

    /// Why this direction of a run of `case` is wrong, if it is.
    fn fault(&self, case: &Case) -> Option<&'static str> {
        let phantom = self.phantom();
        if self.nft_datagrams == 0 {
            Some("the drop rule dropped nothing")
        } else if self.stock_receiver && self.difference() > 0 {
            Some("the stock receiver reported more loss than the kernel's counters")
        } else if !self.stock_receiver && self.difference() != 0 {
            Some("reported loss differs from the kernel's counters")
        } else if !self.stock_receiver && self.socket_drops != Some(self.rcvbuf) {
            Some("socket drops differ from RcvbufErrors")
        } else if phantom > (case.phantom_per_stream * case.streams()) as i64 {
            Some("the sender counted datagrams it never gave the kernel")
        } else if -phantom > self.veth_drops as i64 {
            Some("datagrams left the sender uncounted and were not dropped by the kernel")
        } else {
            None
        }
    }
}

fn program(lab: &Lab, side: Side, bin: &PathBuf, args: &[&str], no_offload: bool) -> std::process::Command {
    let is_wireperf = *bin == wireperf();
    let mut c = lab.command(side, bin, args);
    if no_offload && is_wireperf {
        c.env("WIREPERF_UDP_OFFLOAD", "off");
    }
    c
}

fn opt_u(v: &Value, ptr: &str) -> u64 {
    v.pointer(ptr).and_then(Value::as_u64).unwrap_or(0)
}

/// Reads both sides' counters.
fn counters(lab: &Lab) -> [UdpCounters; 2] {
    [lab.udp_counters(Side::A), lab.udp_counters(Side::B)]
}

/// One direction's figures: `tx` sent, `rx` received, `doc` is the receiver's document and
/// `sum` its summary key for this direction.
fn direction(delta: &[UdpCounters; 2], tx: Side, doc: &Value, sum: &str, stock_receiver: bool) -> Figures {
    let (t, r) = match tx {
        Side::A => (&delta[0], &delta[1]),
        Side::B => (&delta[1], &delta[0]),
    };
    Figures {
        claimed: u(doc, &format!("/end/{sum}/packets")),
        out: Lab::datagrams(t.output, LEN),
        nft_packets: r.dropped.0,
        nft_datagrams: Lab::datagrams(r.dropped, LEN),
        rcvbuf: r.rcvbuf,
        veth_drops: t.veth_tx_dropped,
        socket_drops: if stock_receiver {
            None
        } else {
            Some(u(doc, &format!("/end/{sum}/wireperf_receiver_socket_drops")))
        },
        sender_drops: opt_u(doc, &format!("/end/{sum}/wireperf_sender_drops")),
        reported: u(doc, &format!("/end/{sum}/lost_packets")),
        stock_receiver,
    }
}

/// One run of `case` in `lab` (set up by [`lab_for`]): the figures of each direction, named.
pub fn one_run(lab: &Lab, case: &Case) -> Vec<(String, Figures)> {
    let (reverse, bidir) = (case.has("-R"), case.has("--bidir"));
    let server_bin = if reverse { case.sender.clone() } else { wireperf() };
    let client_bin = if reverse { wireperf() } else { case.sender.clone() };
    let port = LAB_PORT.to_string();
    // With GSO packets crossing the veth whole, a GRO receiver's socket counts a dropped packet
    // once however many datagrams it held (RcvbufErrors in packets), so socket drops could not
    // be checked datagram for datagram: that receiver runs without GRO, and the kernel queues
    // (and drops) each datagram on its own.
    let server_no_offload = case.no_offload || (case.whole_gso && !reverse);
    let server = lab
        .spawn_server(Side::B, program(lab, Side::B, &server_bin, &["-s", "-p", &port, "-1", "-J"], server_no_offload));
    let before = counters(lab);
    let mut a = vec!["-c", lab.addr(Side::B), "-p", &port, "-u", "-t", "1", "-l", "1400", "-J"];
    a.extend_from_slice(case.args);
    let out = lab.run_command(program(lab, Side::A, &client_bin, &a, case.no_offload));
    assert_ok(&out);
    let (so, se) = server.finish(Duration::from_secs(10));
    let after = counters(lab);
    let delta = [after[0].since(&before[0]), after[1].since(&before[1])];
    let client = json_of(&out);
    let server_doc =
        || -> Value { serde_json::from_str(&so).unwrap_or_else(|e| panic!("server JSON: {e}\n{so}\n{se}")) };
    if bidir && client_bin != wireperf() {
        // A stock client's document has no wireperf figures: the forward direction is read from
        // the wireperf server's own, the reverse one from the stock client's (its receiver).
        let server = server_doc();
        vec![
            ("→".to_string(), direction(&delta, Side::A, &server, receiving_sum(&server), false)),
            ("←".to_string(), direction(&delta, Side::B, &client, receiving_sum(&client), true)),
        ]
    } else if bidir {
        // The client's document holds both directions, each with the receiver's exact count.
        vec![
            ("→".to_string(), direction(&delta, Side::A, &client, "sum", false)),
            ("←".to_string(), direction(&delta, Side::B, &client, "sum_bidir_reverse", false)),
        ]
    } else if reverse {
        vec![("←".to_string(), direction(&delta, Side::B, &client, "sum", false))]
    } else {
        vec![("→".to_string(), direction(&delta, Side::A, &server_doc(), "sum", false))]
    }
}

/// The `--bidir` summary key of the direction `doc`'s side received (`"sender": false`).
fn receiving_sum(doc: &Value) -> &'static str {
    let key = ["sum", "sum_bidir_reverse"].into_iter().find(|k| doc["end"][k]["sender"] == Value::Bool(false));
    key.unwrap_or_else(|| panic!("no receiving sum in {}", doc["end"]))
}

/// A lab for `cases` (all with the same `whole_gso`), with the counting drop rules on both sides.
pub fn lab_for(cases: &[Case]) -> Lab {
    let whole_gso = cases.first().is_some_and(|c| c.whole_gso);
    assert!(cases.iter().all(|c| c.whole_gso == whole_gso), "one lab per veth setting");
    let lab = Lab::new(LabConfig { whole_gso, ..Default::default() });
    for side in [Side::A, Side::B] {
        lab.count_and_drop_udp(side, LAB_PORT, DROP_PERCENT);
    }
    lab
}

/// Runs every case [`RUNS`] times in one lab, prints every run, and requires exact equality
/// every time.
pub fn check_cases(cases: &[Case]) {
    let lab = lab_for(cases);
    let mut rows = Vec::new();
    let mut bad = Vec::new();
    for case in cases {
        for run in 1..=RUNS {
            for (dir, f) in one_run(&lab, case) {
                let row = f.row(&format!("{} {dir}", case.name), run);
                eprintln!("{row}");
                if let Some(why) = f.fault(case) {
                    bad.push(format!("{row}: {why}"));
                }
                rows.push(row);
            }
        }
    }
    eprintln!("{} directions of runs, {} not exact", rows.len(), bad.len());
    assert!(bad.is_empty(), "runs whose loss was not exact:\n{}", bad.join("\n"));
}

fn case(name: &'static str, sender: PathBuf, args: &'static [&'static str]) -> Case {
    Case { name, sender, args, no_offload: false, whole_gso: false, phantom_per_stream: 0 }
}

/// An iperf3 3.16+ sender (see the module doc on phantoms).
fn threaded_stock(name: &'static str, version: &str, args: &'static [&'static str]) -> Case {
    Case { phantom_per_stream: 1, ..case(name, stock_iperf3(version), args) }
}

#[test]
fn lab_udp_exact_loss_wireperf_sender_paced_rates() {
    check_cases(&[
        case("wireperf 100M", wireperf(), &["-b", "100M"]),
        case("wireperf 200M", wireperf(), &["-b", "200M"]),
        case("wireperf 1G", wireperf(), &["-b", "1G"]),
    ]);
}

#[test]
fn lab_udp_exact_loss_wireperf_sender_ceiling_streams_reverse() {
    check_cases(&[
        case("wireperf -b 0", wireperf(), &["-b", "0"]),
        case("wireperf 200M -P 2", wireperf(), &["-b", "200M", "-P", "2"]),
        case("wireperf 200M -R", wireperf(), &["-b", "200M", "-R"]),
    ]);
}

#[test]
fn lab_udp_exact_loss_wireperf_bidir_and_three_and_four_streams() {
    check_cases(&[
        case("wireperf 200M --bidir", wireperf(), &["-b", "200M", "--bidir"]),
        case("wireperf 300M -P 3", wireperf(), &["-b", "300M", "-P", "3"]),
        case("wireperf -b 0 -P 4", wireperf(), &["-b", "0", "-P", "4"]),
    ]);
}

#[test]
fn lab_udp_exact_loss_without_gso_gro() {
    let off = |name, args| Case { no_offload: true, ..case(name, wireperf(), args) };
    check_cases(&[
        off("no offload 200M", &["-b", "200M"]),
        off("no offload 1G", &["-b", "1G"]),
        off("no offload -b 0", &["-b", "0"]),
    ]);
}

#[test]
fn lab_udp_exact_loss_stock_iperf3_312_sender() {
    check_cases(&[
        case("iperf3 3.12 100M", iperf3(), &["-b", "100M"]),
        case("iperf3 3.12 1G", iperf3(), &["-b", "1G"]),
        case("iperf3 3.12 -b 0", iperf3(), &["-b", "0"]),
    ]);
}

#[test]
fn lab_udp_exact_loss_stock_iperf3_312_sender_streams_and_bidir() {
    check_cases(&[
        case("iperf3 3.12 200M -P 2", iperf3(), &["-b", "200M", "-P", "2"]),
        case("iperf3 3.12 200M --bidir", iperf3(), &["-b", "200M", "--bidir"]),
    ]);
}

#[test]
fn lab_udp_exact_loss_stock_iperf3_318_322_at_100m() {
    check_cases(&[
        threaded_stock("iperf3 3.18 100M", "3.18", &["-b", "100M"]),
        threaded_stock("iperf3 3.22 100M", "3.22", &["-b", "100M"]),
    ]);
}

#[test]
fn lab_udp_exact_loss_stock_iperf3_318_322_senders() {
    check_cases(&[
        threaded_stock("iperf3 3.18 200M", "3.18", &["-b", "200M"]),
        threaded_stock("iperf3 3.22 200M", "3.22", &["-b", "200M"]),
        threaded_stock("iperf3 3.22 server 200M -R", "3.22", &["-b", "200M", "-R"]),
    ]);
}

#[test]
fn lab_udp_exact_loss_stock_iperf3_318_at_1g_and_ceiling() {
    check_cases(&[
        threaded_stock("iperf3 3.18 1G", "3.18", &["-b", "1G"]),
        threaded_stock("iperf3 3.18 -b 0", "3.18", &["-b", "0"]),
    ]);
}

#[test]
fn lab_udp_exact_loss_stock_iperf3_322_at_1g_and_ceiling() {
    check_cases(&[
        threaded_stock("iperf3 3.22 1G", "3.22", &["-b", "1G"]),
        threaded_stock("iperf3 3.22 -b 0", "3.22", &["-b", "0"]),
    ]);
}
