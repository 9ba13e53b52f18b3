//! When a stream should move to another shared worker of its direction: the balancer.
//!
//! Sans-I/O: every period each worker of a direction reports what it saw on its own clock (an
//! [`Observation`]: how long the period was, how much of it the worker waited in epoll, its
//! thread's CPU time, and the bytes each of its streams moved), and [`Balancer::decide`] answers
//! with the [`Move`]s to make. `worker` measures and carries the moves out; nothing here
//! touches a socket or a clock.
//!
//! Why streams move: `schedule` deals streams out evenly, but the load does not stay even.
//! Streams end early (a stream whose peer closes, streams of a direction ending one by one),
//! a worker's CPU is taken by something else (its streams fall behind), or the streams of one
//! worker are slow for reasons of their own (a shaped path) while another worker is saturated.
//!
//! The model: a worker that hardly waits in epoll is *saturated*: its streams are held back by
//! it. Only such a worker gives a stream away. Its streams move bytes at `speed` bytes per
//! CPU-second of the worker; a stream moved to worker B would get B's idle time, or at least
//! its turn among B's streams plus itself (streams take turns, one call each), times the share
//! of the CPU B's thread actually gets when it runs (`available`: CPU time over time not spent
//! waiting, below 1 when something else takes the CPU). A move is made when
//! - the moved stream would gain at least [`MARGIN`] over what it moves now,
//! - no stream of B would end up slower than that unless it is already slower now (a move
//!   never just shifts who is held back: 3 streams against 2 on equal workers stay), and
//! - a worker's only stream moves only when no stream of B loses anything, and
//! - the stream moves at least half its worker's mean (a slower one is held elsewhere, and
//!   gains nothing from another worker).
//!
//! Hysteresis, so a stream never ping-pongs: a move must be wanted in two decisions in a row,
//! the two workers of a move are left alone for [`COOL`] decisions (their figures mix before
//! and after), a moved stream stays put for [`PIN`] decisions, nothing moves the other way
//! between the same two workers for [`NO_RETURN`] decisions, and each worker takes part in at
//! most one move per decision (so at most half the workers' count of moves per decision).

use std::collections::{HashMap, HashSet};
use std::time::Duration;

/// The relative gain a move must promise (25 %): measurement noise never reaches it.
pub(crate) const MARGIN: f64 = 0.25;
/// A worker that waits in epoll for less than this share of its period is saturated.
pub(crate) const SATURATED: f64 = 0.9;
/// Decisions a worker sits out after a move it took part in.
pub(crate) const COOL: u32 = 2;
/// Decisions a moved stream stays on its new worker.
pub(crate) const PIN: u32 = 10;
/// Decisions after a move from A to B during which nothing moves from B back to A: a
/// worker's share of the CPU that flickers (something else runs on one CPU, then the other)
/// must not swap streams to and fro.
pub(crate) const NO_RETURN: u32 = 20;

/// What one worker saw during one period, on its own clock.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Observation {
    /// The period's length.
    pub period: Duration,
    /// Time spent waiting in epoll.
    pub waited: Duration,
    /// The worker thread's CPU time (user + system).
    pub cpu: Duration,
    /// Each live stream (its id in the direction) and the bytes it moved in the period.
    pub streams: Vec<(usize, u64)>,
}

impl Observation {
    /// Adds a later period of the same worker (a worker may report twice before a decision).
    pub(crate) fn merge(&mut self, later: Observation) {
        self.period += later.period;
        self.waited += later.waited;
        self.cpu += later.cpu;
        let mut streams: Vec<(usize, u64)> = Vec::with_capacity(later.streams.len());
        for (id, bytes) in later.streams {
            let before = self.streams.iter().find(|(s, _)| *s == id).map_or(0, |(_, b)| *b);
            streams.push((id, before + bytes));
        }
        // A stream that ended or left in between is no longer the worker's.
        self.streams = streams;
    }
}

/// Move `stream` from worker `from` to worker `to` (indices into the observations).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Move {
    pub stream: usize,
    pub from: usize,
    pub to: usize,
}

/// The balancer of one direction's workers; keeps the hysteresis state between decisions.
#[derive(Debug, Default)]
pub(crate) struct Balancer {
    /// Decisions each worker still sits out.
    cooling: Vec<u32>,
    /// Decisions each moved stream still stays put.
    pinned: HashMap<usize, u32>,
    /// The (from, to) pairs the previous decision wanted.
    wanted: HashSet<(usize, usize)>,
    /// Decisions each (from, to) pair is still closed for (the way back of a recent move).
    closed: HashMap<(usize, usize), u32>,
}

/// One worker's figures, derived from its observation.
struct Load {
    streams: usize,
    /// Streams that take their turn (move at least half the mean): the others are held
    /// elsewhere and leave their time to the rest.
    turns: usize,
    /// Bytes per second of the worker's streams together.
    rate: f64,
    /// Bytes per second of each stream that takes its turn, on average.
    per_turn: f64,
    /// Share of the period not spent waiting.
    busy: f64,
    /// CPU time over busy time: how much of the CPU the thread gets when it runs.
    available: f64,
    /// Bytes per CPU-second.
    speed: Option<f64>,
}

impl Load {
    fn of(o: &Observation) -> Option<Load> {
        let secs = o.period.as_secs_f64();
        if secs <= 0.0 {
            return None;
        }
        let busy = (1.0 - o.waited.as_secs_f64() / secs).clamp(0.0, 1.0);
        let cpu = o.cpu.as_secs_f64();
        let bytes: u64 = o.streams.iter().map(|(_, b)| b).sum();
        // Too little busy time to tell: assume the thread gets its CPU.
        let available = if busy >= 0.1 { (cpu / (busy * secs)).clamp(0.05, 1.0) } else { 1.0 };
        let speed = (cpu > 0.0 && bytes > 0).then(|| bytes as f64 / cpu);
        let mean = if o.streams.is_empty() { 0.0 } else { bytes as f64 / o.streams.len() as f64 };
        let taking: Vec<u64> = o.streams.iter().map(|(_, b)| *b).filter(|&b| b as f64 >= mean / 2.0).collect();
        let turns = taking.len();
        let per_turn = if turns == 0 { 0.0 } else { taking.iter().sum::<u64>() as f64 / turns as f64 / secs };
        Some(Load { streams: o.streams.len(), turns, rate: bytes as f64 / secs, per_turn, busy, available, speed })
    }

    /// Bytes per second of each stream on average.
    fn per_stream(&self) -> f64 {
        if self.streams == 0 { 0.0 } else { self.rate / self.streams as f64 }
    }
}

/// Whether moving a stream of `source` that moves `moved` bytes/s to `target` pays, and by how
/// much (the moved stream's predicted rate over its current one).
fn gain(source: &Load, moved: f64, target: &Load) -> Option<f64> {
    if source.busy < SATURATED || moved <= 0.0 {
        return None;
    }
    let speed = source.speed?;
    // The moved stream's share of the target's time: its idle time, or at least its turn.
    let turn = 1.0 / (target.turns + 1) as f64;
    let share = (1.0 - target.busy).max(turn);
    let predicted = share * target.available * speed;
    if predicted < (1.0 + MARGIN) * moved {
        return None;
    }
    if target.streams > 0 {
        // The target's streams keep the time they used, unless the newcomer's turn eats into it.
        let now = target.per_turn;
        let left = if target.busy > 0.0 { ((1.0 - share) / target.busy).min(1.0) } else { 1.0 };
        let after = now * left;
        if after < now.min((1.0 + MARGIN) * moved) {
            return None;
        }
        if source.streams == 1 && after < now * 0.999 {
            return None;
        }
    }
    Some(predicted / moved)
}

/// Counts every entry down by one decision and forgets those that reach zero.
fn tick<K>(left: &mut HashMap<K, u32>) {
    left.retain(|_, n| {
        *n = n.saturating_sub(1);
        *n > 0
    });
}

impl Balancer {
    /// A balancer for `workers` workers.
    pub(crate) fn new(workers: usize) -> Self {
        Balancer { cooling: vec![0; workers], pinned: HashMap::new(), wanted: HashSet::new(), closed: HashMap::new() }
    }

    /// One decision from one observation per worker (`None`: no figures from that worker).
    pub(crate) fn decide(&mut self, obs: &[Option<Observation>]) -> Vec<Move> {
        if self.cooling.len() < obs.len() {
            self.cooling.resize(obs.len(), 0);
        }
        self.cooling.iter_mut().for_each(|c| *c = c.saturating_sub(1));
        tick(&mut self.pinned);
        tick(&mut self.closed);
        let loads: Vec<Option<Load>> = obs.iter().map(|o| o.as_ref().and_then(Load::of)).collect();
        // Every pair that pays now, best gain first.
        let mut pairs: Vec<(f64, usize, usize, usize)> = Vec::new();
        for (a, (la, oa)) in loads.iter().zip(obs).enumerate() {
            let (Some(la), Some(oa)) = (la, oa) else { continue };
            if self.cooling[a] > 0 {
                continue;
            }
            // The stream to give: the busiest that may move (it is what holds the worker). One
            // that moves less than half the worker's mean is held elsewhere: moving it gains
            // nothing.
            let secs = oa.period.as_secs_f64();
            let mean = la.per_stream() * secs;
            let Some(&(stream, bytes)) = oa
                .streams
                .iter()
                .filter(|(s, b)| !self.pinned.contains_key(s) && *b as f64 >= mean / 2.0)
                .max_by(|x, y| x.1.cmp(&y.1).then(y.0.cmp(&x.0)))
            else {
                continue;
            };
            for (b, lb) in loads.iter().enumerate() {
                let Some(lb) = lb else { continue };
                if b == a || self.cooling[b] > 0 || self.closed.contains_key(&(a, b)) {
                    continue;
                }
                if let Some(g) = gain(la, bytes as f64 / secs, lb) {
                    pairs.push((g, a, b, stream));
                }
            }
        }
        pairs.sort_by(|x, y| y.0.total_cmp(&x.0).then((x.1, x.2).cmp(&(y.1, y.2))));
        let wanted_before = std::mem::replace(&mut self.wanted, pairs.iter().map(|p| (p.1, p.2)).collect());
        let mut busy = HashSet::new();
        let mut moves = Vec::new();
        for (_, from, to, stream) in pairs {
            if !wanted_before.contains(&(from, to)) || busy.contains(&from) || busy.contains(&to) {
                continue;
            }
            busy.insert(from);
            busy.insert(to);
            self.cooling[from] = COOL + 1;
            self.cooling[to] = COOL + 1;
            self.pinned.insert(stream, PIN + 1);
            self.closed.insert((to, from), NO_RETURN + 1);
            moves.push(Move { stream, from, to });
        }
        // A pair that was carried out must be wanted anew after the cool-down.
        for m in &moves {
            self.wanted.remove(&(m.from, m.to));
        }
        moves
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PERIOD: Duration = Duration::from_millis(100);
    /// Bytes per CPU-second of a CPU-bound stream in the model.
    const SPEED: f64 = 4e9;

    /// A fluid model of workers: each has a CPU share (`available`), each stream a demand cap
    /// (bytes/s it could take if the worker had time; `f64::INFINITY` for CPU-bound). Streams
    /// take turns: time is shared equally, and what a capped stream leaves goes to the others.
    struct Model {
        available: Vec<f64>,
        /// (stream id, demand) per worker.
        streams: Vec<Vec<(usize, f64)>>,
        /// Deterministic noise on the bytes, as a fraction (0 = none).
        noise: f64,
        tick: u64,
    }

    impl Model {
        fn new(available: &[f64], streams: &[&[(usize, f64)]]) -> Self {
            Model {
                available: available.to_vec(),
                streams: streams.iter().map(|s| s.to_vec()).collect(),
                noise: 0.0,
                tick: 0,
            }
        }

        fn observe(&mut self) -> Vec<Option<Observation>> {
            let secs = PERIOD.as_secs_f64();
            let mut out = Vec::new();
            for (w, streams) in self.streams.iter().enumerate() {
                let full = self.available[w] * SPEED; // bytes/s of the worker's whole time
                // Water-fill the worker's time (1.0) over its streams.
                let mut time = vec![0.0; streams.len()];
                let mut left = 1.0;
                let mut open: Vec<usize> = (0..streams.len()).collect();
                while !open.is_empty() && left > 1e-12 {
                    let each = left / open.len() as f64;
                    let mut next = Vec::new();
                    for &i in &open {
                        let need = streams[i].1 / full - time[i];
                        if need <= each {
                            time[i] += need.max(0.0);
                            left -= need.max(0.0);
                        } else {
                            next.push(i);
                        }
                    }
                    if next.len() == open.len() {
                        for &i in &next {
                            time[i] += each;
                        }
                        left = 0.0;
                    }
                    open = next;
                }
                let used: f64 = time.iter().sum();
                let mut obs_streams = Vec::new();
                for (i, &(id, _)) in streams.iter().enumerate() {
                    self.tick += 1;
                    let wobble = 1.0 + self.noise * (((self.tick * 7919) % 200) as f64 / 100.0 - 1.0);
                    obs_streams.push((id, (time[i] * full * secs * wobble) as u64));
                }
                out.push(Some(Observation {
                    period: PERIOD,
                    waited: PERIOD.mul_f64((1.0 - used).clamp(0.0, 1.0)),
                    cpu: PERIOD.mul_f64(used * self.available[w]),
                    streams: obs_streams,
                }));
            }
            out
        }

        fn apply(&mut self, moves: &[Move]) {
            for m in moves {
                let pos =
                    self.streams[m.from].iter().position(|(id, _)| *id == m.stream).expect("stream on its worker");
                let s = self.streams[m.from].remove(pos);
                self.streams[m.to].push(s);
            }
        }

        fn end(&mut self, id: usize) {
            for w in &mut self.streams {
                w.retain(|(s, _)| *s != id);
            }
        }

        fn counts(&self) -> Vec<usize> {
            self.streams.iter().map(Vec::len).collect()
        }

        /// Runs `periods` decisions; returns every move made.
        fn run(&mut self, b: &mut Balancer, periods: usize) -> Vec<Move> {
            let mut all = Vec::new();
            for _ in 0..periods {
                let moves = b.decide(&self.observe());
                self.apply(&moves);
                all.extend(moves);
            }
            all
        }
    }

    const CPU: f64 = f64::INFINITY;

    #[test]
    fn equal_load_moves_nothing() {
        for (workers, streams) in [(2, 4), (2, 6), (3, 9), (4, 128)] {
            let dealt: Vec<Vec<(usize, f64)>> =
                (0..workers).map(|w| (w..streams).step_by(workers).map(|s| (s, CPU)).collect()).collect();
            let refs: Vec<&[(usize, f64)]> = dealt.iter().map(Vec::as_slice).collect();
            let mut m = Model::new(&vec![1.0; workers], &refs);
            m.noise = 0.15;
            let mut b = Balancer::new(workers);
            assert!(m.run(&mut b, 200).is_empty(), "{workers} workers, {streams} streams");
        }
    }

    #[test]
    fn one_stream_more_on_one_worker_is_left_as_it_is() {
        // -P 5 on 2 workers: 3 against 2. A move would only make the other worker the one with
        // three; both workers are fully busy either way.
        let mut m = Model::new(&[1.0, 1.0], &[&[(0, CPU), (2, CPU), (4, CPU)], &[(1, CPU), (3, CPU)]]);
        m.noise = 0.1;
        assert!(m.run(&mut Balancer::new(2), 100).is_empty());
    }

    #[test]
    fn streams_that_end_leave_counts_that_are_evened_out() {
        // -P 6 on 2 workers; streams 1 and 3 (worker 1's) end: 3 against 1, then 3 against 0.
        let mut m = Model::new(&[1.0, 1.0], &[&[(0, CPU), (2, CPU), (4, CPU)], &[(1, CPU), (3, CPU), (5, CPU)]]);
        let mut b = Balancer::new(2);
        assert!(m.run(&mut b, 5).is_empty());
        m.end(1);
        m.end(3);
        let moves = m.run(&mut b, 20);
        assert_eq!(moves.len(), 1, "{moves:?}");
        assert_eq!((moves[0].from, moves[0].to), (0, 1));
        assert_eq!(m.counts(), [2, 2]);
        m.end(5);
        m.end(moves[0].stream);
        assert_eq!(m.counts(), [2, 0]);
        let moves = m.run(&mut b, 20);
        assert_eq!(moves.len(), 1, "{moves:?}");
        assert_eq!(m.counts(), [1, 1]);
        assert!(m.run(&mut b, 100).is_empty(), "and then it stays");
    }

    #[test]
    fn a_starved_worker_gives_streams_to_one_that_has_its_cpu() {
        // Worker 0 gets half a CPU (something else runs there): its streams move half as fast.
        let mut m = Model::new(&[0.5, 1.0], &[&[(0, CPU), (2, CPU)], &[(1, CPU), (3, CPU)]]);
        let mut b = Balancer::new(2);
        let moves = m.run(&mut b, 100);
        assert_eq!(moves.len(), 1, "{moves:?}");
        assert_eq!((moves[0].from, moves[0].to), (0, 1));
        assert_eq!(m.counts(), [1, 3], "a stream on the half CPU gets C/2, three on the full one C/3");
        // With 8 streams the same starvation moves more, one per decision at most.
        let mut m = Model::new(
            &[0.5, 1.0],
            &[&[(0, CPU), (2, CPU), (4, CPU), (6, CPU)], &[(1, CPU), (3, CPU), (5, CPU), (7, CPU)]],
        );
        let mut b = Balancer::new(2);
        let mut counts = Vec::new();
        for _ in 0..100 {
            let moves = b.decide(&m.observe());
            assert!(moves.len() <= 1);
            m.apply(&moves);
            counts.push(m.counts());
        }
        assert_eq!(m.counts(), [3, 5]);
        assert_eq!(counts[60..].iter().filter(|c| **c != [3, 5]).count(), 0, "settled");
    }

    #[test]
    fn a_saturated_worker_gives_a_fast_stream_to_one_whose_streams_are_slow() {
        // Worker 1's two streams are held elsewhere (a shaped path, 10 MB/s each); worker 0's
        // two are CPU-bound and share its time.
        let mut m = Model::new(&[1.0, 1.0], &[&[(0, CPU), (2, CPU)], &[(1, 10e6), (3, 10e6)]]);
        let mut b = Balancer::new(2);
        let moves = m.run(&mut b, 100);
        assert_eq!(moves.len(), 1, "{moves:?}");
        assert_eq!((moves[0].from, moves[0].to), (0, 1));
        assert!([0, 2].contains(&moves[0].stream));
        assert_eq!(m.counts(), [1, 3]);
    }

    #[test]
    fn a_lone_stream_is_not_given_away_to_make_others_slower() {
        // Worker 0 has one stream on a CPU shared with something else; worker 1's three
        // streams would each lose a quarter of their time.
        let mut m = Model::new(&[0.6, 1.0], &[&[(0, CPU)], &[(1, CPU), (3, CPU), (5, CPU)]]);
        assert!(m.run(&mut Balancer::new(2), 100).is_empty());
        // Nor a lone stream on a healthy worker to an idle one: it gains nothing.
        let mut m = Model::new(&[1.0, 1.0], &[&[(0, CPU)], &[]]);
        assert!(m.run(&mut Balancer::new(2), 100).is_empty());
        // But it does go where nothing is slowed: an idle worker while its own CPU is taken.
        let mut m = Model::new(&[0.3, 1.0], &[&[(0, CPU)], &[]]);
        let moves = m.run(&mut Balancer::new(2), 100);
        assert_eq!(moves, [Move { stream: 0, from: 0, to: 1 }]);
    }

    #[test]
    fn workers_that_wait_are_never_sources() {
        // Every stream held elsewhere: the workers idle, whatever the counts.
        let mut m = Model::new(&[1.0, 1.0], &[&[(0, 5e6), (2, 5e6), (4, 5e6)], &[]]);
        assert!(m.run(&mut Balancer::new(2), 100).is_empty());
    }

    #[test]
    fn no_oscillation_over_many_periods() {
        // Mixed speeds, noise, a starved worker and streams ending: every stream moves a few
        // times at most, and never straight back to the worker it just left.
        let mut m = Model::new(
            &[1.0, 0.5, 1.0],
            &[
                &[(0, CPU), (3, CPU), (6, 20e6), (9, CPU)],
                &[(1, CPU), (4, 50e6), (7, CPU), (10, CPU)],
                &[(2, CPU), (5, CPU), (8, CPU), (11, 1e9)],
            ],
        );
        m.noise = 0.2;
        let mut b = Balancer::new(3);
        let mut history: Vec<(usize, Move)> = Vec::new();
        for period in 0..600 {
            // Worker 0's CPU-bound streams end one by one.
            if let Some(&(_, id)) = [(50, 0), (150, 3), (250, 9)].iter().find(|(t, _)| *t == period) {
                m.end(id);
            }
            let moves = b.decide(&m.observe());
            assert!(moves.len() <= 1, "at most one move per pair of workers: {moves:?}");
            m.apply(&moves);
            history.extend(moves.into_iter().map(|mv| (period, mv)));
        }
        assert!(!history.is_empty(), "the starved worker and the ending streams call for moves");
        assert!(history.len() <= 12, "{history:?}");
        for (i, (t, mv)) in history.iter().enumerate() {
            let back = history[i + 1..].iter().find(|(_, x)| x.stream == mv.stream);
            if let Some((t2, x)) = back {
                assert!(t2 - t > PIN as usize, "stream {} moved again within its pin: {history:?}", mv.stream);
                assert!(!(x.to == mv.from && t2 - t < 50), "stream {} went straight back: {history:?}", mv.stream);
            }
        }
        let last: Vec<_> = history.iter().filter(|(t, _)| *t >= 350).collect();
        assert!(last.is_empty(), "settled after the last end: {history:?}");
    }

    #[test]
    fn a_move_must_be_wanted_twice_and_is_followed_by_a_pause() {
        let uneven = || {
            let mut m = Model::new(&[1.0, 1.0], &[&[(0, CPU), (2, CPU), (4, CPU)], &[]]);
            m.observe()
        };
        let mut b = Balancer::new(2);
        assert!(b.decide(&uneven()).is_empty(), "seen once");
        let first = b.decide(&uneven());
        assert_eq!(first.len(), 1, "seen twice");
        for i in 0..COOL {
            assert!(b.decide(&uneven()).is_empty(), "cooling ({i})");
        }
        assert!(b.decide(&uneven()).is_empty(), "wanted once more after the pause");
        let next = b.decide(&uneven());
        assert_eq!(next.len(), 1);
        assert_ne!(next[0].stream, first[0].stream, "the moved stream is pinned: {next:?}");
    }

    #[test]
    fn missing_or_empty_figures_move_nothing() {
        let mut b = Balancer::new(3);
        assert!(b.decide(&[None, None, None]).is_empty());
        assert!(b.decide(&[]).is_empty());
        let zero = Observation::default();
        assert!(b.decide(&[Some(zero.clone()), Some(zero.clone())]).is_empty());
        assert!(b.decide(&[Some(zero.clone()), Some(zero)]).is_empty());
        // A worker without figures is neither source nor target.
        let mut m = Model::new(&[1.0, 1.0], &[&[(0, CPU), (2, CPU), (4, CPU)], &[]]);
        let mut b = Balancer::new(2);
        for _ in 0..10 {
            let mut o = m.observe();
            o[1] = None;
            assert!(b.decide(&o).is_empty());
        }
    }

    #[test]
    fn merged_observations_add_up_and_forget_streams_that_left() {
        let mut a = Observation {
            period: PERIOD,
            waited: Duration::from_millis(10),
            cpu: Duration::from_millis(80),
            streams: vec![(1, 100), (2, 50)],
        };
        a.merge(Observation {
            period: PERIOD,
            waited: Duration::from_millis(20),
            cpu: Duration::from_millis(70),
            streams: vec![(1, 10), (7, 5)],
        });
        assert_eq!(a.period, PERIOD * 2);
        assert_eq!(a.waited, Duration::from_millis(30));
        assert_eq!(a.cpu, Duration::from_millis(150));
        assert_eq!(a.streams, [(1, 110), (7, 5)]);
    }

    #[test]
    fn a_flickering_cpu_share_does_not_swap_streams_to_and_fro() {
        // Something else takes half of worker 0's CPU, then of worker 1's, every 8 decisions.
        let mut m = Model::new(
            &[0.5, 1.0],
            &[&[(0, CPU), (2, CPU), (4, CPU), (6, CPU)], &[(1, CPU), (3, CPU), (5, CPU), (7, CPU)]],
        );
        let mut b = Balancer::new(2);
        let mut history: Vec<(usize, Move)> = Vec::new();
        for period in 0..200 {
            if period % 8 == 0 {
                m.available = if (period / 8) % 2 == 0 { vec![0.5, 1.0] } else { vec![1.0, 0.5] };
            }
            let moves = b.decide(&m.observe());
            m.apply(&moves);
            history.extend(moves.into_iter().map(|mv| (period, mv)));
        }
        for pair in history.windows(2) {
            let ((t1, a), (t2, b)) = (pair[0], pair[1]);
            if (a.from, a.to) == (b.to, b.from) {
                assert!(t2 - t1 > NO_RETURN as usize, "back within {} decisions: {history:?}", t2 - t1);
            }
        }
        // Each way between the two, at most two moves (a cool-down apart) per closed spell.
        assert!(history.len() <= 2 * (200 / NO_RETURN as usize + 1), "{history:?}");
        assert!(!history.is_empty(), "starvation that lasts 8 decisions is answered");
    }
}
