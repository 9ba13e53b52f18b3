//! Which thread runs each data stream: its own, or one of a few shared workers.
//!
//! Sans-I/O: the test's streams come in as candidates (which direction, and whether their loop
//! can share a thread at all) and a [`Placement`] per stream comes out, with the workers to
//! start. The rule, per direction: as long as there are no more streams than worker threads
//! allowed, every stream keeps a thread of its own (blocking I/O, the path a single stream is
//! fastest on); past that, the streams of that direction share that many workers, dealt out in
//! turn so no worker carries more than one stream more than another. A `-P 128` test then runs
//! on one sender or receiver thread per core instead of 128 threads with a buffer each.
//! This is only where streams start: while the test runs, `balance` moves streams between the
//! workers of a direction when their load becomes uneven.

use crate::config::StreamWorkers;

/// What a stream needs from the thread that runs it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Candidate {
    /// Its loop can share a worker with other streams of the same direction (plain TCP).
    Shareable {
        /// This host sends on it.
        sender: bool,
    },
    /// It needs a thread of its own (UDP, `-F`, `MSG_ZEROCOPY`).
    Own,
}

/// Where one stream runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Placement {
    /// A thread of its own.
    Own,
    /// Shared worker number `n` (an index into [`Schedule::workers`]).
    Worker(usize),
}

/// One shared worker: the direction it moves data in and its streams (indices in creation
/// order).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct WorkerPlan {
    /// The worker sends (else it receives).
    pub sender: bool,
    /// Indices of its streams.
    pub streams: Vec<usize>,
}

/// The placement of every stream of a test.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Schedule {
    /// One entry per candidate, in the same order.
    pub placements: Vec<Placement>,
    /// The shared workers to start.
    pub workers: Vec<WorkerPlan>,
}

/// Places `streams` with at most `per_direction` threads for the shareable streams of each
/// direction (at least one).
pub(crate) fn place(streams: &[Candidate], per_direction: usize) -> Schedule {
    let cap = per_direction.max(1);
    let mut placements = vec![Placement::Own; streams.len()];
    let mut workers = Vec::new();
    for sender in [true, false] {
        let members: Vec<usize> = streams
            .iter()
            .enumerate()
            .filter(|(_, c)| **c == Candidate::Shareable { sender })
            .map(|(i, _)| i)
            .collect();
        if members.len() <= cap {
            continue;
        }
        let first = workers.len();
        workers.extend((0..cap).map(|_| WorkerPlan { sender, streams: Vec::new() }));
        for (k, &i) in members.iter().enumerate() {
            let w = first + k % cap;
            placements[i] = Placement::Worker(w);
            workers[w].streams.push(i);
        }
    }
    Schedule { placements, workers }
}

/// How many shared workers each direction may use: one per CPU the process may run on, or
/// what [`StreamWorkers`] (`EngineTuning::stream_workers`) says; `None` is a thread for every
/// stream (the engine before the shared workers, kept for diagnosis; it is also what one
/// stream, or up to one per CPU, runs on anyway).
///
/// Why one per CPU: up to that many streams, a thread each already has a CPU each and blocks
/// in its system call, the cheapest way to move bytes; past it, more threads only add stacks,
/// buffers and context switches, while one epoll loop per CPU keeps every CPU busy.
pub(crate) fn workers_per_direction(workers: StreamWorkers) -> Option<usize> {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    workers.per_direction(cpus)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TX: Candidate = Candidate::Shareable { sender: true };
    const RX: Candidate = Candidate::Shareable { sender: false };

    #[test]
    fn few_streams_keep_their_own_threads() {
        let s = place(&[TX, TX], 2);
        assert_eq!(s.placements, [Placement::Own, Placement::Own]);
        assert!(s.workers.is_empty());
        assert_eq!(place(&[], 2), Schedule { placements: vec![], workers: vec![] });
    }

    #[test]
    fn many_streams_are_dealt_out_evenly() {
        let s = place(&[TX; 5], 2);
        assert_eq!(s.placements, [0, 1, 0, 1, 0].map(Placement::Worker), "streams alternate between the two workers");
        assert_eq!(s.workers.len(), 2);
        assert_eq!(s.workers[0], WorkerPlan { sender: true, streams: vec![0, 2, 4] });
        assert_eq!(s.workers[1].streams, [1, 3]);
        let big = place(&[RX; 128], 2);
        assert_eq!(big.workers.iter().map(|w| w.streams.len()).collect::<Vec<_>>(), [64, 64]);
        assert!(big.workers.iter().all(|w| !w.sender));
    }

    #[test]
    fn directions_are_placed_apart() {
        // --bidir -P 3: three senders then three receivers, cap 2 each way.
        let s = place(&[TX, TX, TX, RX, RX, RX], 2);
        assert_eq!(s.workers.len(), 4);
        assert_eq!(s.workers.iter().filter(|w| w.sender).count(), 2);
        for (i, p) in s.placements.iter().enumerate() {
            let Placement::Worker(w) = *p else { panic!("stream {i} not shared") };
            assert_eq!(s.workers[w].sender, i < 3, "stream {i} on a worker of the wrong direction");
            assert!(s.workers[w].streams.contains(&i));
        }
        // One direction over the cap, the other not: only the first shares.
        let s = place(&[TX, TX, TX, RX], 2);
        assert_eq!(s.placements[3], Placement::Own);
        assert_eq!(s.workers.len(), 2);
    }

    #[test]
    fn streams_that_need_a_thread_keep_it() {
        let s = place(&[Candidate::Own, TX, TX, TX, Candidate::Own], 1);
        assert_eq!(s.placements[0], Placement::Own);
        assert_eq!(s.placements[4], Placement::Own);
        assert_eq!(s.workers, [WorkerPlan { sender: true, streams: vec![1, 2, 3] }]);
        assert_eq!(place(&[TX, TX], 0).workers.len(), 1, "a cap of 0 means one");
    }

    #[test]
    fn every_stream_is_placed_exactly_once() {
        for n in 0..40 {
            for cap in 1..5 {
                let c: Vec<_> = (0..n).map(|i| if i % 3 == 0 { RX } else { TX }).collect();
                let s = place(&c, cap);
                let mut seen = vec![0; n];
                for w in &s.workers {
                    for &i in &w.streams {
                        seen[i] += 1;
                        assert_eq!(s.placements[i], Placement::Worker(s.workers.iter().position(|x| x == w).unwrap()));
                    }
                }
                for (i, p) in s.placements.iter().enumerate() {
                    assert_eq!(seen[i], usize::from(*p != Placement::Own), "n={n} cap={cap} stream {i}");
                }
                let per_dir = |tx| s.workers.iter().filter(|w| w.sender == tx).count();
                assert!(per_dir(true) <= cap && per_dir(false) <= cap);
            }
        }
    }

    #[test]
    fn one_worker_per_cpu_unless_the_tuning_says_otherwise() {
        assert_eq!(StreamWorkers::PerCpu.per_direction(4), Some(4));
        assert_eq!(StreamWorkers::PerCpu.per_direction(0), Some(1), "no CPU count known: one");
        assert_eq!(StreamWorkers::Fixed(3).per_direction(8), Some(3));
        assert_eq!(StreamWorkers::Off.per_direction(8), None, "a thread per stream");
    }
}
