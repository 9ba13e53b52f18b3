//! Tests for `zerocopy`, each on real loopback sockets, pipes and files.

use super::*;
use crate::testutil::tcp_pair_v4;
use std::io::{Read, Write};

fn pattern(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 7 % 251) as u8).collect()
}

#[test]
fn sendfile_from_memblock_delivers_the_block_exactly() {
    let data = pattern(200_000);
    let block = MemBlock::new(&data).unwrap();
    assert_eq!(block.len(), data.len());
    let (tx, mut rx) = tcp_pair_v4();
    let reader = std::thread::spawn(move || {
        let mut got = Vec::new();
        rx.read_to_end(&mut got).unwrap();
        got
    });
    let mut off = 0;
    while off < data.len() {
        off += sendfile(&tx, &block, off as u64, data.len() - off).unwrap();
    }
    tx.shutdown(std::net::Shutdown::Write).unwrap();
    assert_eq!(reader.join().unwrap(), data);
}

#[test]
fn sendfile_into_an_append_only_file_is_a_refusal() {
    // The kernel refuses sendfile to an O_APPEND file with EINVAL: the refusal the engine's
    // fallback to plain writes must recognise.
    let block = MemBlock::new(&pattern(4096)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let f = std::fs::OpenOptions::new().create(true).append(true).open(dir.path().join("out")).unwrap();
    let err = sendfile(&f, &block, 0, 4096).unwrap_err();
    assert!(is_refusal(&err), "{err:?}");
}

#[test]
fn connection_errors_are_not_refusals() {
    assert!(!is_refusal(&io::Error::from_raw_os_error(libc::EPIPE)));
    assert!(!is_refusal(&io::Error::from_raw_os_error(libc::ECONNRESET)));
    assert!(!is_refusal(&io::Error::from(io::ErrorKind::WouldBlock)));
}

#[test]
fn recv_discard_counts_tcp_bytes_without_writing_the_buffer() {
    let (mut tx, rx) = tcp_pair_v4();
    let data = pattern(100_000);
    let writer = std::thread::spawn(move || {
        tx.write_all(&data).unwrap();
    });
    let mut buf = vec![0xAAu8; 65_536];
    let mut total = 0;
    loop {
        let n = recv_discard(&rx, &mut buf).unwrap();
        if n == 0 {
            break;
        }
        total += n;
    }
    writer.join().unwrap();
    assert_eq!(total, 100_000);
    // TCP MSG_TRUNC discards in the kernel: the buffer was never written.
    assert!(buf.iter().all(|&b| b == 0xAA));
}

#[test]
fn msg_zerocopy_sends_arrive_and_every_id_completes() {
    let (tx, mut rx) = tcp_pair_v4();
    set_zerocopy(&tx, true).unwrap();
    assert!(zerocopy(&tx).unwrap());
    let data = pattern(64 * 1024);
    let reader = std::thread::spawn(move || {
        let mut got = Vec::new();
        rx.read_to_end(&mut got).unwrap();
        got
    });
    let mut calls = 0u64;
    for _ in 0..8 {
        let mut off = 0;
        while off < data.len() {
            off += send_zerocopy(&tx, &data[off..]).unwrap();
            calls += 1;
        }
    }
    tx.shutdown(std::net::Shutdown::Write).unwrap();
    let got = reader.join().unwrap();
    assert_eq!(got.len(), 8 * data.len());
    assert_eq!(&got[..data.len()], &data[..]);
    let mut reaped = ZcReaped::default();
    for _ in 0..200 {
        if reaped.completed >= calls {
            break;
        }
        let _ = wait_errqueue(&tx, 10).unwrap();
        let r = reap_zerocopy(&tx).unwrap();
        reaped.completed += r.completed;
        reaped.copied += r.copied;
        reaped.highest = r.highest.or(reaped.highest);
    }
    assert_eq!(reaped.completed, calls);
    assert_eq!(reaped.highest, Some((calls - 1) as u32));
    // Loopback always copies (deferred copy for locally delivered packets).
    assert_eq!(reaped.copied, calls);
}

#[test]
fn reaping_an_empty_queue_returns_nothing() {
    let (tx, _rx) = tcp_pair_v4();
    assert_eq!(reap_zerocopy(&tx).unwrap(), ZcReaped::default());
    assert!(!wait_errqueue(&tx, 0).unwrap());
}

#[test]
fn extended_err_decoding() {
    let mut d = vec![0u8; 16];
    d[4] = SO_EE_ORIGIN_ZEROCOPY;
    d[6] = SO_EE_CODE_ZEROCOPY_COPIED;
    d[8..12].copy_from_slice(&3u32.to_ne_bytes());
    d[12..16].copy_from_slice(&9u32.to_ne_bytes());
    let e = parse_extended_err(&d).unwrap();
    assert_eq!((e.errno, e.origin, e.code, e.lo, e.hi), (0, 5, 1, 3, 9));
    assert!(parse_extended_err(&d[..10]).is_none());
}
