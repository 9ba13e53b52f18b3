//! Streams moving between shared workers while a test runs (`engine::stream::balance`), end to
//! end against a stock iperf3 3.22 server in the lab: two of four streams are policed to a
//! trickle by port (`--cport` gives the streams consecutive ports), so the worker they were
//! dealt to idles while the other worker carries two fast streams; the balancer moves one of
//! those over. Per-stream counts and intervals must stay exact through the move.

use crate::support::harness::{assert_ok, json_of, stock_iperf3, u, wireperf};
use crate::support::lab::{LAB_PORT, Lab, LabConfig, Side};
use serde_json::Value;
use std::time::Duration;

/// The first client data port (the namespaces are private: it collides with nothing).
const CPORT: u16 = 40100;

#[test]
fn a_stream_moves_to_the_worker_whose_streams_are_slow_and_every_count_stays_exact() {
    let lab = Lab::new(LabConfig::default());
    // Streams 0 and 2 (ports CPORT and CPORT+2, both dealt to worker 0) get 2 MB/s between them.
    let (p0, p2) = (CPORT, CPORT + 2);
    lab.load_nft(
        Side::A,
        &format!(
            "table inet wplab {{\n chain output {{\n  type filter hook output priority 0; policy accept;\n  \
             tcp sport {{ {p0}, {p2} }} limit rate over 2 mbytes/second drop\n }}\n}}\n"
        ),
    );
    let srv = lab.start_server(Side::B, &stock_iperf3("3.22"), &["-1"]);
    let (port, cport) = (LAB_PORT.to_string(), CPORT.to_string());
    let args = ["-c", lab.addr(Side::B), "-p", &port, "-P", "4", "--cport", &cport, "-t", "2", "-J", "--no-save"];
    let mut cmd = lab.command(Side::A, &wireperf(), &args);
    cmd.env("WIREPERF_STREAM_WORKERS", "2");
    let out = lab.run_command(cmd);
    let (so, se) = srv.finish(Duration::from_secs(10));
    assert_ok(&out);
    let v = json_of(&out);
    let streams = v["end"]["streams"].as_array().expect("end.streams");
    assert_eq!(streams.len(), 4, "{v}\nserver:\n{so}\n{se}");
    let moves: Vec<u64> = streams.iter().map(|s| u(s, "/wireperf_cpu/worker_moves")).collect();
    let mut sum = 0;
    for (i, s) in streams.iter().enumerate() {
        let (tx, rx) = (u(s, "/sender/bytes"), u(s, "/receiver/bytes"));
        // The stock server stops counting at TEST_END: it may have read a little less.
        assert!(rx <= tx && tx > 0, "stream {i}: sent {tx}, the server read {rx}");
        assert_eq!(u(s, "/wireperf_cpu/shared_by"), 2, "stream {i}: dealt two to a worker");
        assert_eq!(interval_sum(&v, i), tx, "stream {i}: its intervals add up to its total");
        sum += tx;
    }
    assert_eq!(sum, u(&v, "/end/sum_sent/bytes"), "the streams add up to the sum");
    assert!(moves.iter().sum::<u64>() >= 1, "a stream moved to the idle worker: {moves:?}");
}

/// The bytes of stream `i` over all intervals.
fn interval_sum(v: &Value, i: usize) -> u64 {
    let iv = v["intervals"].as_array().expect("intervals");
    iv.iter().map(|x| u(&x["streams"][i], "/bytes")).sum()
}
