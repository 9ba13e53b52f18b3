//! Fast TCP streams move several `-l` blocks per system call and wake their reader once per
//! block (`SO_RCVLOWAT`); the counts users see stay iperf3's: `-n`/`-k` end on the first
//! whole block at or past the limit, receivers count every byte, and paced or slow streams
//! keep reading as data arrives.

use crate::harness::{io_of, iperf3, one_shot_json, u, wireperf};

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
