//! Who is running and who is waiting: the server's admission decisions.
//!
//! Running tests are keyed by their cookie, so a data connection finds its own test and two
//! concurrent tests never share a stream. Admission is pure bookkeeping (no sockets), so the
//! rules — global slots, per-client slots, queue length — are unit-tested here.

use std::collections::{HashMap, VecDeque};
use std::net::IpAddr;
use wireperf_protocol::cookie::COOKIE_SIZE;

/// Why a new client cannot start now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Full {
    /// `--max-tests` tests are running.
    Slots(usize),
    /// This address already runs `--max-tests-per-client` tests.
    PerClient(usize),
}

impl Full {
    /// The limit's flag, for the record.
    pub(super) fn limit(&self) -> super::Limit {
        match self {
            Full::Slots(_) => super::Limit::MaxTests,
            Full::PerClient(_) => super::Limit::MaxTestsPerClient,
        }
    }

    pub(super) fn describe(&self) -> String {
        match self {
            Full::Slots(n) => format!("the server is busy running {n} test(s) (--max-tests {n})"),
            Full::PerClient(n) => format!("this address already runs {n} test(s) (--max-tests-per-client {n})"),
        }
    }
}

/// The running tests and the waiting clients, generic over what is stored for each.
pub(super) struct Registry<R, W> {
    max_tests: usize,
    per_client: Option<usize>,
    queue_max: usize,
    running: HashMap<[u8; COOKIE_SIZE], (u64, IpAddr, R)>,
    waiting: VecDeque<(IpAddr, W)>,
}

/// The canonical form of an address for per-client counting (`::ffff:a.b.c.d` = `a.b.c.d`).
pub(super) fn client_ip(ip: IpAddr) -> IpAddr {
    ip.to_canonical()
}

impl<R, W> Registry<R, W> {
    pub(super) fn new(max_tests: usize, per_client: Option<usize>, queue_max: usize) -> Self {
        Self { max_tests: max_tests.max(1), per_client, queue_max, running: HashMap::new(), waiting: VecDeque::new() }
    }

    /// Whether a client at `ip` may start a test now.
    pub(super) fn admit(&self, ip: IpAddr) -> Result<(), Full> {
        if self.running.len() >= self.max_tests {
            return Err(Full::Slots(self.max_tests));
        }
        if let Some(n) = self.per_client {
            let ip = client_ip(ip);
            if self.running.values().filter(|(_, i, _)| *i == ip).count() >= n {
                return Err(Full::PerClient(n));
            }
        }
        Ok(())
    }

    pub(super) fn insert(&mut self, cookie: [u8; COOKIE_SIZE], test_no: u64, ip: IpAddr, r: R) {
        self.running.insert(cookie, (test_no, client_ip(ip), r));
    }

    /// The running test with this exact cookie (all 37 bytes).
    pub(super) fn by_cookie(&self, cookie: &[u8; COOKIE_SIZE]) -> Option<&R> {
        self.running.get(cookie).map(|(_, _, r)| r)
    }

    pub(super) fn remove_test(&mut self, test_no: u64) -> Option<R> {
        let key = self.running.iter().find(|(_, (n, _, _))| *n == test_no).map(|(k, _)| *k)?;
        self.running.remove(&key).map(|(_, _, r)| r)
    }

    pub(super) fn running(&self) -> impl Iterator<Item = &R> {
        self.running.values().map(|(_, _, r)| r)
    }

    pub(super) fn running_count(&self) -> usize {
        self.running.len()
    }

    pub(super) fn drain_running(&mut self) -> Vec<R> {
        self.running.drain().map(|(_, (_, _, r))| r).collect()
    }

    /// Queues a client; gives it back when the queue is full.
    pub(super) fn enqueue(&mut self, ip: IpAddr, w: W) -> Result<(), W> {
        if self.waiting.len() >= self.queue_max {
            return Err(w);
        }
        self.waiting.push_back((client_ip(ip), w));
        Ok(())
    }

    pub(super) fn waiting_count(&self) -> usize {
        self.waiting.len()
    }

    /// The first waiting client (in arrival order) that may start now.
    pub(super) fn next_admissible(&mut self) -> Option<W> {
        let i = self.waiting.iter().position(|(ip, _)| self.admit(*ip).is_ok())?;
        self.waiting.remove(i).map(|(_, w)| w)
    }

    /// Removes the waiting clients `keep` says no to, and returns them.
    pub(super) fn evict_waiting(&mut self, mut keep: impl FnMut(&mut W) -> bool) -> Vec<W> {
        let mut gone = Vec::new();
        let mut kept = VecDeque::with_capacity(self.waiting.len());
        for (ip, mut w) in self.waiting.drain(..) {
            if keep(&mut w) {
                kept.push_back((ip, w));
            } else {
                gone.push(w);
            }
        }
        self.waiting = kept;
        gone
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;

    const A: IpAddr = IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1));
    const B: IpAddr = IpAddr::V4(Ipv4Addr::new(10, 0, 0, 2));

    fn cookie(n: u8) -> [u8; COOKIE_SIZE] {
        [n; COOKIE_SIZE]
    }

    #[test]
    fn global_and_per_client_slots() {
        let mut r: Registry<u64, u64> = Registry::new(3, Some(2), 4);
        r.insert(cookie(1), 1, A, 1);
        r.insert(cookie(2), 2, A, 2);
        assert_eq!(r.admit(A), Err(Full::PerClient(2)));
        assert_eq!(r.admit(B), Ok(()));
        r.insert(cookie(3), 3, B, 3);
        assert_eq!(r.admit(B), Err(Full::Slots(3)));
        assert_eq!(r.by_cookie(&cookie(2)), Some(&2));
        assert_eq!(r.by_cookie(&cookie(9)), None);
        assert_eq!(r.remove_test(2), Some(2));
        assert_eq!(r.admit(A), Ok(()));
    }

    #[test]
    fn mapped_ipv6_counts_as_the_ipv4_client() {
        let mut r: Registry<u8, u8> = Registry::new(4, Some(1), 4);
        r.insert(cookie(1), 1, "::ffff:10.0.0.1".parse().unwrap(), 0);
        assert_eq!(r.admit(A), Err(Full::PerClient(1)));
    }

    #[test]
    fn queue_is_fifo_among_admissible_and_bounded() {
        let mut r: Registry<u8, &str> = Registry::new(1, Some(1), 2);
        r.insert(cookie(1), 1, A, 0);
        assert!(r.enqueue(A, "a2").is_ok());
        assert!(r.enqueue(B, "b1").is_ok());
        assert_eq!(r.enqueue(B, "b2"), Err("b2"));
        assert_eq!(r.next_admissible(), None, "no slot free");
        r.remove_test(1);
        assert_eq!(r.next_admissible(), Some("a2"));
        r.insert(cookie(2), 2, A, 0);
        assert_eq!(r.next_admissible(), None);
        assert_eq!(r.evict_waiting(|w| *w != "b1"), vec!["b1"]);
        assert_eq!(r.waiting_count(), 0);
    }
}
