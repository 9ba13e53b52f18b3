//! Fast TCP streams move several `-l` blocks per system call and wake their reader once per
//! block (`SO_RCVLOWAT`); the counts users see stay iperf3's: `-n`/`-k` end on the first
//! whole block at or past the limit, receivers count every byte, and paced or slow streams
//! keep reading as data arrives.

use crate::support::harness::{io_of, iperf3, one_shot_json, u, wireperf};

#[test]
fn budgets_end_on_the_first_whole_block_past_the_limit() {
    // Block sizes that do not divide 1 MiB or -n, so a many-block call must be cut short.
    // The rule is iperf3's on a quiet path (-n 10M -l 300K: 35 blocks, 10752000 bytes, as a
    // stock 3.12 client sends). iperf3 itself is not compared here: under load its
    // non-blocking writes can be partial and it then stops mid-block (measured: 10511146).
    for (args, want) in [
        (&["-n", "10M", "-l", "300K"][..], 35 * 300 * 1024),
        (&["-k", "37", "-l", "100K"], 37 * 100 * 1024),
        (&["-n", "4000001", "-l", "7000"], 572 * 7000),
    ] {
        let doc = one_shot_json(&iperf3(), &wireperf(), args);
        assert_eq!(u(&doc, "/end/sum_sent/bytes"), want, "{args:?}");
    }
}

#[test]
fn a_fast_receiver_wakes_per_block_and_counts_every_byte() {
    // -R: this client receives from a wireperf server at loopback speed (Gbit/s), far above
    // the 0.5 Gbit/s at which the low-water mark is set.
    let doc = one_shot_json(&wireperf(), &wireperf(), &["-t", "1", "-R"]);
    assert_eq!(u(&doc, "/end/sum_received/bytes"), u(&doc, "/end/sum_sent/bytes"), "{}", doc["end"]);
    let io = io_of(&doc);
    assert_eq!(io["direction"], "receive", "{io}");
    assert_eq!(io["low_water_bytes"], 128 * 1024, "{io}");

    // With -w 64K the kernel caps the mark at half the (doubled) buffer; the extras say so.
    let doc = one_shot_json(&wireperf(), &wireperf(), &["-t", "1", "-R", "-w", "64K"]);
    assert_eq!(u(&doc, "/end/sum_received/bytes"), u(&doc, "/end/sum_sent/bytes"), "{}", doc["end"]);
    assert_eq!(io_of(&doc)["low_water_bytes"], 64 * 1024, "{}", io_of(&doc));
}

#[test]
fn a_paced_receiver_never_waits_for_whole_blocks() {
    // 20 Mbit/s: a 128 KiB block takes 52 ms, far slower than the mark's threshold, so every
    // read returns what has arrived and the intervals stay even.
    let doc = one_shot_json(&wireperf(), &wireperf(), &["-t", "2", "-R", "-b", "20M"]);
    assert_eq!(u(&doc, "/end/sum_received/bytes"), u(&doc, "/end/sum_sent/bytes"));
    assert!(io_of(&doc).get("low_water_bytes").is_none(), "{}", io_of(&doc));
}

#[test]
fn many_blocks_per_call_are_counted_in_blocks_of_l() {
    // A wireperf server drains every byte; -k 100 is 100 blocks of 128 KiB however many
    // calls (1 MiB each) carried them.
    let doc = one_shot_json(&wireperf(), &wireperf(), &["-k", "100"]);
    assert_eq!(u(&doc, "/end/sum_sent/bytes"), 100 * 128 * 1024);
    assert_eq!(u(&doc, "/end/sum_received/bytes"), 100 * 128 * 1024, "{}", doc["end"]);
}

/// The `notsent_lowat_bytes` of every stream in a `-J` document (`None` where absent).
fn notsent_marks(doc: &serde_json::Value) -> Vec<Option<u64>> {
    let streams = doc.pointer("/end/streams").and_then(|s| s.as_array()).cloned().unwrap_or_default();
    assert!(!streams.is_empty(), "no streams in {}", doc["end"]);
    streams.iter().map(|s| s.pointer("/wireperf_io/notsent_lowat_bytes").and_then(|v| v.as_u64())).collect()
}

/// The unsent mark a host-local sender of a `streams`-stream test takes here (the processes
/// the tests start run on this one's CPUs): 64 KiB when every sender and receiver has a CPU
/// (twice the streams at most the CPUs: `-P 1` on the 2-core CI machine), else 32 KiB.
fn expected_mark(streams: usize) -> Option<u64> {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    Some(if 2 * streams <= cpus { 64 * 1024 } else { 32 * 1024 })
}

/// On loopback (no wire, `noqueue`) every unpaced sender holds its unsent queue short, on a
/// thread of its own (`-P 1`) and on the shared workers (`-P 4` on a 2-core machine), with
/// the mark chosen by how the test's threads share the CPUs, and the counts stay exact; paced
/// streams, `-k` streams and `WIREPERF_NOTSENT_LOWAT=off` never set it, and a number sets it.
#[test]
fn loopback_senders_hold_their_unsent_queue_short() {
    for p in [1, 4] {
        let doc = one_shot_json(&wireperf(), &wireperf(), &["-t", "1", "-P", &p.to_string()]);
        assert_eq!(u(&doc, "/end/sum_received/bytes"), u(&doc, "/end/sum_sent/bytes"), "-P {p}: {}", doc["end"]);
        let want = expected_mark(p);
        assert!(notsent_marks(&doc).iter().all(|m| *m == want), "-P {p}, want {want:?}: {}", doc["end"]["streams"]);
    }
    let doc = one_shot_json(&wireperf(), &wireperf(), &["-t", "1", "-b", "200M"]);
    assert!(notsent_marks(&doc).iter().all(Option::is_none), "paced: {}", doc["end"]["streams"]);
    // -k: stock receivers count a block per read; whole blocks keep their count right.
    let doc = one_shot_json(&wireperf(), &wireperf(), &["-k", "3000"]);
    assert!(notsent_marks(&doc).iter().all(Option::is_none), "-k: {}", doc["end"]["streams"]);
    assert_eq!(u(&doc, "/end/sum_sent/bytes"), 3000 * 128 * 1024, "{}", doc["end"]);
    // A one-stream test with the client's WIREPERF_NOTSENT_LOWAT set to `mark`.
    let with_mark = |mark: &str| {
        let srv = crate::support::harness::start_server(&wireperf(), &["-1"]);
        let port = srv.port.to_string();
        let out = crate::support::harness::run_client_env(
            &wireperf(),
            &["-c", "127.0.0.1", "-p", &port, "-t", "1", "-J"],
            &[("WIREPERF_NOTSENT_LOWAT", mark)],
        );
        crate::support::harness::json_of(&out)
    };
    let doc = with_mark("off");
    assert!(notsent_marks(&doc).iter().all(Option::is_none), "turned off: {}", doc["end"]["streams"]);
    let doc = with_mark("49152");
    assert_eq!(notsent_marks(&doc), [Some(49152)], "a mark set by number: {}", doc["end"]["streams"]);
}

/// Across an unshaped veth pair the path is host-local too; with a tbf on the sender's device
/// (a queue of its own, as a NIC has) the unsent data is what keeps the link busy, and the
/// sender must leave the queue as the kernel sizes it.
#[test]
fn lab_a_veth_sender_holds_its_unsent_queue_short_unless_its_device_is_shaped() {
    use crate::support::lab::{LAB_PORT, Lab, LabConfig, Side};
    let lab = Lab::new(LabConfig::default());
    let port = LAB_PORT.to_string();
    let run = |lab: &Lab| {
        let server = lab.spawn_server(Side::B, lab.command(Side::B, &wireperf(), &["-s", "-p", &port, "-1"]));
        let out = lab.run_command(lab.command(
            Side::A,
            &wireperf(),
            &["-c", lab.addr(Side::B), "-p", &port, "-t", "1", "-J"],
        ));
        let _ = server.finish(std::time::Duration::from_secs(15));
        crate::support::harness::json_of(&out)
    };
    let doc = run(&lab);
    assert_eq!(notsent_marks(&doc), [expected_mark(1)], "unshaped veth: {}", doc["end"]["streams"]);
    let dev = lab.dev(Side::A).to_string();
    lab.exec(
        Side::A,
        &["tc", "qdisc", "add", "dev", &dev, "root", "tbf", "rate", "1gbit", "burst", "128k", "limit", "1m"],
    );
    let doc = run(&lab);
    assert_eq!(notsent_marks(&doc), [None], "tbf on the sender's device: {}", doc["end"]["streams"]);
    assert!(u(&doc, "/end/sum_received/bytes") > 0, "{}", doc["end"]);
}
