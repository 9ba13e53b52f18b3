//! Exact UDP loss, repeated: every run's reported loss must equal what the kernel dropped.
//!
//! Each configuration runs [`RUNS`] times in one lab (docs/lab.md) with an nft rule dropping 2 %
//! of the data datagrams in the receiver's input. The truth for one run is
//! `nft datagrams + RcvbufErrors Δ + sender veth tx drops Δ − sender_drops`: what nft dropped,
//! what the receiving socket dropped, and what the sending veth dropped (its peer's backlog
//! full), less the sends a wireperf sender saw refused (`ENOBUFS`: never sent, never counted).
//! Every run's figures are printed; a test fails on the first run that differs, after printing
//! the table so far. Runs are 1 s long, so that a test function stays well inside nextest's
//! 2-minute limit on a loaded machine.

#![allow(clippy::unwrap_used)]

use crate::harness::*;
use crate::lab::{LAB_PORT, Lab, LabConfig, Side};
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
    /// Extra client arguments (`-b`, `-P`, `-R`).
    pub args: &'static [&'static str],
    /// Run both wireperf ends with `WIREPERF_UDP_OFFLOAD=off` (no GSO, no GRO).
    pub no_offload: bool,
    /// Let GSO packets cross the veth whole ([`LabConfig::whole_gso`]).
    pub whole_gso: bool,
}

/// One run's figures.
#[derive(Debug, Default, Clone, Copy)]
pub struct Figures {
    pub sent: u64,
    pub nft_packets: u64,
    pub nft_datagrams: u64,
    pub rcvbuf: u64,
    pub veth_drops: u64,
    pub sender_drops: u64,
    pub socket_drops: u64,
    pub reported: u64,
}

impl Figures {
    /// What the kernel says was lost.
    pub fn truth(&self) -> i64 {
        (self.nft_datagrams + self.rcvbuf + self.veth_drops) as i64 - self.sender_drops as i64
    }

    /// Reported minus truth.
    pub fn difference(&self) -> i64 {
        self.reported as i64 - self.truth()
    }

    fn row(&self, name: &str, run: usize) -> String {
        format!(
            "{name:<28} run {run:>2}: sent {:>7}  nft {:>5} pkts = {:>5} dgrams  socket {:>5} (RcvbufErrors {:>5})  \
             veth {:>4}  sender_drops {:>4}  reported {:>5}  difference {:>+4}",
            self.sent,
            self.nft_packets,
            self.nft_datagrams,
            self.socket_drops,
            self.rcvbuf,
            self.veth_drops,
            self.sender_drops,
            self.reported,
            self.difference()
        )
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

/// One run of `case` in `lab`; the receiver's own document gives the reported loss.
pub fn one_run(lab: &Lab, case: &Case) -> Figures {
    let reverse = case.args.contains(&"-R");
    let (rx, tx) = if reverse { (Side::A, Side::B) } else { (Side::B, Side::A) };
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
    let nft0 = lab.nft_counters(rx);
    let rcvbuf0 = lab.snmp_udp(rx, "RcvbufErrors");
    let veth0 = lab.veth_tx_dropped(tx);
    let mut a = vec!["-c", lab.addr(Side::B), "-p", &port, "-u", "-t", "1", "-l", "1400", "-J"];
    a.extend_from_slice(case.args);
    let out = lab.run_command(program(lab, Side::A, &client_bin, &a, case.no_offload));
    assert_ok(&out);
    let (so, se) = server.finish(Duration::from_secs(10));
    let nft1 = lab.nft_counters(rx);
    let client = json_of(&out);
    let receiver: Value = if reverse {
        client.clone()
    } else {
        serde_json::from_str(&so).unwrap_or_else(|e| panic!("server JSON: {e}\n{so}\n{se}"))
    };
    let sender_doc = if reverse { serde_json::from_str(&so).unwrap_or(Value::Null) } else { client };
    Figures {
        sent: opt_u(&sender_doc, "/end/sum/packets").max(opt_u(&receiver, "/end/sum_sent/packets")),
        nft_packets: nft1.0 - nft0.0,
        nft_datagrams: Lab::nft_datagrams(nft0, nft1, LEN),
        rcvbuf: lab.snmp_udp(rx, "RcvbufErrors") - rcvbuf0,
        veth_drops: lab.veth_tx_dropped(tx) - veth0,
        sender_drops: opt_u(&receiver, "/end/sum/wireperf_sender_drops"),
        socket_drops: u(&receiver, "/end/sum/wireperf_receiver_socket_drops"),
        reported: u(&receiver, "/end/sum/lost_packets"),
    }
}

/// Runs every case [`RUNS`] times, prints every run, and requires exact equality every time.
pub fn check_cases(cases: &[Case]) {
    let mut rows = Vec::new();
    let mut bad = Vec::new();
    for case in cases {
        let reverse = case.args.contains(&"-R");
        let lab = Lab::new(LabConfig { whole_gso: case.whole_gso, ..Default::default() });
        lab.drop_udp(if reverse { Side::A } else { Side::B }, LAB_PORT, DROP_PERCENT);
        for run in 1..=RUNS {
            let f = one_run(&lab, case);
            let row = f.row(case.name, run);
            eprintln!("{row}");
            if f.difference() != 0 || f.socket_drops != f.rcvbuf || f.nft_datagrams == 0 {
                bad.push(row.clone());
            }
            rows.push(row);
        }
    }
    eprintln!("{} runs, {} not exact", rows.len(), bad.len());
    assert!(bad.is_empty(), "runs whose loss was not exact (or nft dropped nothing):\n{}", bad.join("\n"));
}

fn case(name: &'static str, sender: PathBuf, args: &'static [&'static str]) -> Case {
    Case { name, sender, args, no_offload: false, whole_gso: false }
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
fn lab_udp_exact_loss_stock_iperf3_318_322_senders() {
    check_cases(&[
        case("iperf3 3.18 200M", stock_iperf3("3.18"), &["-b", "200M"]),
        case("iperf3 3.22 200M", stock_iperf3("3.22"), &["-b", "200M"]),
        case("iperf3 3.22 server 200M -R", stock_iperf3("3.22"), &["-b", "200M", "-R"]),
    ]);
}
