//! The shared workers end to end on loopback pairs: budgets spent exactly, every byte counted
//! on its own stream, stops, timeouts, and streams moved between workers mid-transfer.

use super::{Member, WorkerLink, spawn};
use crate::config::SendMode;
use crate::ctrl::Wake;
use crate::error::EngineError;
use crate::stream::budget::Budget;
use crate::stream::counters::Counters;
use crate::stream::send_path::tests::{pair, spec};
use crate::stream::sock::DataSock;
use crate::stream::spec::StreamSpec;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

fn member(sock: TcpStream, budget: Option<Arc<Budget>>) -> Member {
    Member {
        sock: Arc::new(DataSock::Tcp(sock)),
        counters: Arc::new(Counters::default()),
        stop: Arc::new(AtomicBool::new(false)),
        budget,
    }
}

fn join(t: Vec<JoinHandle<()>>) {
    for t in t {
        t.join().unwrap();
    }
}

fn handle(m: &Member) -> (Arc<Counters>, Arc<AtomicBool>) {
    (Arc::clone(&m.counters), Arc::clone(&m.stop))
}

fn count_until_eof(mut s: TcpStream) -> std::thread::JoinHandle<u64> {
    std::thread::spawn(move || {
        let mut buf = vec![0u8; 65536];
        let mut n = 0u64;
        loop {
            match s.read(&mut buf) {
                Ok(0) | Err(_) => return n,
                Ok(k) => n += k as u64,
            }
        }
    })
}

/// Half-closes the senders' sockets and checks that every stream's count is what its peer
/// read; returns the counts.
fn counts_as_read(
    socks: &[TcpStream],
    readers: Vec<std::thread::JoinHandle<u64>>,
    handles: &[(Arc<Counters>, Arc<AtomicBool>)],
    mode: SendMode,
) -> Vec<u64> {
    for s in socks {
        s.shutdown(std::net::Shutdown::Write).unwrap();
    }
    let read: Vec<u64> = readers.into_iter().map(|r| r.join().unwrap()).collect();
    let counted: Vec<u64> = handles.iter().map(|(c, _)| c.bytes()).collect();
    assert_eq!(read, counted, "{mode:?}: every stream's count is what its peer read");
    counted
}

/// Five senders on one worker share a block budget: exactly the budget goes out in all,
/// and each stream's counter is what its peer read.
fn budgeted_senders(mode: SendMode) {
    let blocks = 37;
    let budget = Arc::new(Budget::new(0, blocks, true));
    let mut members = Vec::new();
    let mut readers = Vec::new();
    let mut socks = Vec::new();
    for _ in 0..5 {
        let (tx, rx) = pair();
        socks.push(tx.try_clone().unwrap());
        members.push(member(tx, Some(Arc::clone(&budget))));
        readers.push(count_until_eof(rx));
    }
    let handles: Vec<_> = members.iter().map(handle).collect();
    let (note, wakes) = crossbeam_channel::unbounded();
    let (t, _link) = spawn("test-tx", true, vec![members], &spec(mode), note).unwrap();
    join(t);
    let counted = counts_as_read(&socks, readers, &handles, mode);
    assert_eq!(counted.iter().sum::<u64>(), blocks * 128 * 1024, "{mode:?}");
    assert!(handles.iter().all(|(c, _)| c.finished.load(Ordering::Acquire)));
    for (c, _) in &handles {
        assert!(c.cpu_recorded.load(Ordering::Relaxed), "{mode:?}: a share of the worker's CPU");
        assert_eq!(c.cpu_shared_by.load(Ordering::Relaxed), 5, "{mode:?}: shared by all five");
    }
    // Only a stream that found the budget spent with every claimed block written says so
    // (at least one, the last; others may find the same at the same time).
    let reached = wakes.try_iter().filter(|w| matches!(w, Wake::BudgetReached)).count();
    assert!((1..=5).contains(&reached), "{mode:?}: {reached} budget wakes");
    let io = handles[0].0.io.snapshot().unwrap();
    assert_eq!((io.requested.as_str(), io.fallback), (mode.name(), None), "{mode:?}");
}

#[test]
fn shared_senders_spend_a_block_budget_exactly() {
    budgeted_senders(SendMode::Write);
    budgeted_senders(SendMode::Sendfile);
}

#[test]
fn shared_receivers_count_every_byte_of_every_stream() {
    let sizes = [0usize, 1, 128 * 1024 - 1, 3 * 1024 * 1024 + 17, 10_000_000];
    let mut members = Vec::new();
    let mut writers = Vec::new();
    for &n in &sizes {
        let (mut tx, rx) = pair();
        members.push(member(rx, None));
        writers.push(std::thread::spawn(move || {
            tx.write_all(&vec![5u8; n]).unwrap();
        }));
    }
    let handles: Vec<_> = members.iter().map(handle).collect();
    let (note, wakes) = crossbeam_channel::unbounded();
    let (t, link) = spawn("test-rx", false, vec![members], &spec(SendMode::Write), note).unwrap();
    for w in writers {
        w.join().unwrap();
    }
    join(t);
    assert!(link.exited());
    let counted: Vec<u64> = handles.iter().map(|(c, _)| c.bytes()).collect();
    assert_eq!(counted, sizes.map(|n| n as u64));
    assert!(wakes.try_iter().next().is_none(), "EOF is a clean end");
    assert_eq!(handles[0].0.io.snapshot().unwrap().used, "read");
}

#[test]
fn a_stop_ends_shared_streams_promptly_and_others_run_on() {
    let mut members = Vec::new();
    let mut readers = Vec::new();
    for _ in 0..3 {
        let (tx, rx) = pair();
        members.push(member(tx, None));
        readers.push(count_until_eof(rx));
    }
    let handles: Vec<_> = members.iter().map(handle).collect();
    let socks: Vec<_> = members.iter().map(|m| Arc::clone(&m.sock)).collect();
    let (note, _wakes) = crossbeam_channel::unbounded();
    let (t, link) = spawn("test-stop", true, vec![members], &spec(SendMode::Write), note).unwrap();
    std::thread::sleep(Duration::from_millis(100));
    stop_one_then_all(&handles, &link, t, &socks, readers, Duration::from_secs(5));
}

/// Stops stream 0 and waits (up to `limit`) until it has ended while the others send on,
/// then stops them all: every stream's count is what its peer read.
fn stop_one_then_all(
    handles: &[(Arc<Counters>, Arc<AtomicBool>)],
    link: &WorkerLink,
    t: Vec<JoinHandle<()>>,
    socks: &[Arc<DataSock>],
    readers: Vec<std::thread::JoinHandle<u64>>,
    limit: Duration,
) {
    handles[0].1.store(true, Ordering::Relaxed);
    link.wake();
    let asked = Instant::now();
    while !handles[0].0.finished.load(Ordering::Acquire) {
        assert!(asked.elapsed() < limit, "stream 0 did not stop");
        std::thread::sleep(Duration::from_millis(1));
    }
    // The others must move on. Within `limit`, not a fixed 50 ms: with the short unsent
    // queue of a loopback sender (`notsent`) a stream only moves while its reader thread
    // runs, and under a full suite's load that reader was once off its CPU for 50 ms.
    let before = handles[1].0.bytes();
    let since = Instant::now();
    while handles[1].0.bytes() == before {
        assert!(since.elapsed() < limit, "the other streams keep sending");
        std::thread::sleep(Duration::from_millis(1));
    }
    for (_, stop) in handles {
        stop.store(true, Ordering::Relaxed);
    }
    link.wake();
    join(t);
    for s in socks {
        s.shutdown(std::net::Shutdown::Write);
    }
    let read: Vec<u64> = readers.into_iter().map(|r| r.join().unwrap()).collect();
    let counted: Vec<u64> = handles.iter().map(|(c, _)| c.bytes()).collect();
    assert_eq!(read, counted, "a stopped stream's count is what went out");
}

#[test]
fn a_silent_shared_receiver_times_out() {
    let (_tx, rx) = pair();
    let m = member(rx, None);
    let (c, _) = handle(&m);
    let (note, wakes) = crossbeam_channel::unbounded();
    let sp = StreamSpec { rcv_timeout: Duration::from_millis(120), ..spec(SendMode::Write) };
    let (t, _link) = spawn("test-silent", false, vec![vec![m]], &sp, note).unwrap();
    join(t);
    assert!(c.finished.load(Ordering::Acquire));
    assert!(matches!(wakes.try_recv(), Ok(Wake::StreamFailed(EngineError::RecvTimeout))));
}

/// A pair whose buffers are small, so a transfer lasts as long as its reader takes.
fn small_pair() -> (TcpStream, TcpStream) {
    let (tx, rx) = pair();
    socket2::SockRef::from(&tx).set_send_buffer_size(32 * 1024).unwrap();
    socket2::SockRef::from(&rx).set_recv_buffer_size(32 * 1024).unwrap();
    (tx, rx)
}

/// Reads to EOF at about `per_ms` bytes per millisecond.
fn slow_reader(mut s: TcpStream, per_ms: usize) -> std::thread::JoinHandle<u64> {
    std::thread::spawn(move || {
        let mut buf = vec![0u8; per_ms];
        let mut n = 0u64;
        loop {
            match s.read(&mut buf) {
                Ok(0) | Err(_) => return n,
                Ok(k) => n += k as u64,
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    })
}

/// Waits until each of `moved` has changed workers once, and says whether all of them
/// were still running then.
fn await_moves(handles: &[(Arc<Counters>, Arc<AtomicBool>)], moved: &[usize]) -> bool {
    let asked = Instant::now();
    while moved.iter().any(|&i| handles[i].0.worker_moves.load(Ordering::Relaxed) == 0) {
        assert!(asked.elapsed() < Duration::from_secs(5), "the ordered moves were not made");
        std::thread::sleep(Duration::from_millis(1));
    }
    moved.iter().all(|&i| !handles[i].0.finished.load(Ordering::Acquire))
}

/// Three senders on two workers (0 and 1 on the first, 2 on the second) share a budget
/// (`-n` bytes, or `-k` blocks); stream 0 moves to the second worker and stream 2 to the
/// first while their peers still read. Every byte is counted once, on the stream it went
/// out on, and the budget is spent exactly.
fn moved_senders(mode: SendMode, by_bytes: bool) {
    let blocks = 60;
    let budget =
        Arc::new(if by_bytes { Budget::new(blocks * 128 * 1024, 0, true) } else { Budget::new(0, blocks, true) });
    let (mut members, mut readers, mut socks) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..3 {
        let (tx, rx) = small_pair();
        socks.push(tx.try_clone().unwrap());
        members.push(member(tx, Some(Arc::clone(&budget))));
        readers.push(slow_reader(rx, 8 * 1024));
    }
    let handles: Vec<_> = members.iter().map(handle).collect();
    let last = members.pop().unwrap();
    let (note, wakes) = crossbeam_channel::unbounded();
    let (t, link) = spawn("test-move-tx", true, vec![members, vec![last]], &spec(mode), note).unwrap();
    assert_eq!(t.len(), 2);
    link.order_move(0, 0, 1);
    link.order_move(1, 2, 0);
    assert!(await_moves(&handles, &[0, 2]), "{mode:?}: the moves happened mid-transfer");
    join(t);
    assert!(link.exited());
    let counted = counts_as_read(&socks, readers, &handles, mode);
    assert_eq!(counted.iter().sum::<u64>(), blocks * 128 * 1024, "{mode:?}: the budget, exactly");
    assert!(counted.iter().all(|c| c % (128 * 1024) == 0), "{mode:?}: whole blocks {counted:?}");
    let moves: Vec<u32> = handles.iter().map(|(c, _)| c.worker_moves.load(Ordering::Relaxed)).collect();
    assert_eq!(moves, [1, 0, 1], "{mode:?}");
    let dealt: Vec<u64> = handles.iter().map(|(c, _)| c.cpu_shared_by.load(Ordering::Relaxed)).collect();
    assert_eq!(dealt, [2, 2, 1], "{mode:?}: shared_by is the worker each was dealt to");
    assert!(handles.iter().all(|(c, _)| c.finished.load(Ordering::Acquire) && c.cpu_recorded.load(Ordering::Relaxed)));
    let reached = wakes.try_iter().filter(|w| matches!(w, Wake::BudgetReached)).count();
    assert!((1..=3).contains(&reached), "{mode:?}: {reached} budget wakes, only from the last writers");
    for (c, _) in &handles {
        let io = c.io.snapshot().unwrap();
        assert_eq!((io.requested.as_str(), io.fallback), (mode.name(), None), "{mode:?}");
    }
}

#[test]
fn moved_senders_spend_a_budget_exactly() {
    moved_senders(SendMode::Write, true);
    moved_senders(SendMode::Sendfile, false);
}

#[test]
fn moved_receivers_count_every_byte_of_every_stream() {
    let sizes = [3 * 1024 * 1024 + 17, 2 * 1024 * 1024 + 1, 4 * 1024 * 1024 - 5];
    let (mut members, mut writers) = (Vec::new(), Vec::new());
    for &n in &sizes {
        let (mut tx, rx) = small_pair();
        members.push(member(rx, None));
        writers.push(std::thread::spawn(move || {
            // About 16 MB/s, so each transfer outlasts the first report (100 ms).
            let chunk = vec![9u8; 16 * 1024];
            let mut left = n;
            while left > 0 {
                let k = left.min(chunk.len());
                tx.write_all(&chunk[..k]).unwrap();
                left -= k;
                std::thread::sleep(Duration::from_millis(1));
            }
        }));
    }
    let handles: Vec<_> = members.iter().map(handle).collect();
    let last = members.pop().unwrap();
    let (note, wakes) = crossbeam_channel::unbounded();
    let (t, link) = spawn("test-move-rx", false, vec![members, vec![last]], &spec(SendMode::Write), note).unwrap();
    link.order_move(0, 0, 1);
    link.order_move(1, 2, 0);
    assert!(await_moves(&handles, &[0, 2]), "the moves happened mid-transfer");
    for w in writers {
        w.join().unwrap();
    }
    join(t);
    let counted: Vec<u64> = handles.iter().map(|(c, _)| c.bytes()).collect();
    assert_eq!(counted, sizes.map(|n| n as u64), "every byte, once, on its own stream");
    assert!(wakes.try_iter().next().is_none(), "EOF is a clean end");
    assert_eq!(handles[0].0.io.snapshot().unwrap().used, "read");
}

#[test]
fn a_stop_reaches_a_moved_stream_promptly() {
    let (mut members, mut readers) = (Vec::new(), Vec::new());
    for _ in 0..3 {
        let (tx, rx) = small_pair();
        members.push(member(tx, None));
        readers.push(count_until_eof(rx));
    }
    let handles: Vec<_> = members.iter().map(handle).collect();
    let socks: Vec<_> = members.iter().map(|m| Arc::clone(&m.sock)).collect();
    let last = members.pop().unwrap();
    let (note, _wakes) = crossbeam_channel::unbounded();
    let (t, link) = spawn("test-move-stop", true, vec![members, vec![last]], &spec(SendMode::Write), note).unwrap();
    link.order_move(0, 0, 1);
    assert!(await_moves(&handles, &[0]));
    // Stopped at once, possibly while still on its way to the other worker.
    stop_one_then_all(&handles, &link, t, &socks, readers, Duration::from_secs(1));
}

#[test]
fn a_moved_silent_receiver_still_times_out() {
    // Stream 0 says nothing; it moves to the second worker at the first report (100 ms)
    // and must still end by --rcv-timeout there, counted from its own last data.
    let (quiet_tx, quiet_rx) = pair();
    let (mut talk_tx, talk_rx) = pair();
    let (quiet, talk) = (member(quiet_rx, None), member(talk_rx, None));
    let handles = [handle(&quiet), handle(&talk)];
    let (note, wakes) = crossbeam_channel::unbounded();
    let sp = StreamSpec { rcv_timeout: Duration::from_millis(600), ..spec(SendMode::Write) };
    let started = Instant::now();
    let (t, link) = spawn("test-move-silent", false, vec![vec![quiet], vec![talk]], &sp, note).unwrap();
    link.order_move(0, 0, 1);
    talk_tx.write_all(&[1u8; 1000]).unwrap();
    drop(talk_tx);
    let asked = Instant::now();
    while !handles[0].0.finished.load(Ordering::Acquire) {
        assert!(asked.elapsed() < Duration::from_secs(3), "the moved stream never timed out");
        std::thread::sleep(Duration::from_millis(1));
    }
    assert!(started.elapsed() >= Duration::from_millis(600), "not before its timeout");
    assert_eq!(handles[0].0.worker_moves.load(Ordering::Relaxed), 1);
    join(t);
    drop(quiet_tx);
    assert!(matches!(wakes.try_recv(), Ok(Wake::StreamFailed(EngineError::RecvTimeout))));
    assert_eq!(handles[1].0.bytes(), 1000);
}
