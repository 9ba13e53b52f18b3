//! At most N probes at once, and at most M (default 1) per target.
//!
//! Throughput tests compete for the same links and CPUs: two probes at once from one exporter
//! measure each other, and an iperf3 server refuses a second client while it runs a test. So a
//! probe waits for a slot for its target first (queued probes of one busy target do not hold
//! global slots), then for a global slot, and gives up at its deadline.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;

/// The slots a running probe holds; dropping it frees them.
#[derive(Debug)]
pub struct Permits {
    _target: OwnedSemaphorePermit,
    _global: OwnedSemaphorePermit,
}

/// No slot became free before the probe's deadline.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("{0} probes were already running; no slot became free before the deadline")]
pub struct Busy(pub &'static str);

/// The exporter's probe slots.
#[derive(Debug)]
pub struct Limiter {
    global: Arc<Semaphore>,
    per_target: usize,
    targets: Mutex<HashMap<String, Arc<Semaphore>>>,
}

impl Limiter {
    /// `max` probes at once, `per_target` of them against one target (both at least 1).
    pub fn new(max: usize, per_target: usize) -> Self {
        Self {
            global: Arc::new(Semaphore::new(max.max(1))),
            per_target: per_target.max(1),
            targets: Mutex::new(HashMap::new()),
        }
    }

    fn target_slots(&self, target: &str) -> Arc<Semaphore> {
        let mut map = self.targets.lock().unwrap_or_else(PoisonError::into_inner);
        // Forget targets nobody holds or waits for, so the map stays as small as the set of
        // targets being probed.
        map.retain(|_, s| Arc::strong_count(s) > 1);
        Arc::clone(map.entry(target.to_string()).or_insert_with(|| Arc::new(Semaphore::new(self.per_target))))
    }

    /// Waits for a slot for `target` and a global slot, until `deadline`.
    pub async fn acquire(&self, target: &str, deadline: Instant) -> Result<Permits, Busy> {
        let slots = self.target_slots(target);
        let target_permit = tokio::time::timeout_at(deadline, slots.acquire_owned())
            .await
            .map_err(|_| Busy("same-target"))?
            .map_err(|_| Busy("same-target"))?;
        let global = tokio::time::timeout_at(deadline, Arc::clone(&self.global).acquire_owned())
            .await
            .map_err(|_| Busy("max-concurrent"))?
            .map_err(|_| Busy("max-concurrent"))?;
        Ok(Permits { _target: target_permit, _global: global })
    }

    /// Targets currently held or waited for.
    pub fn tracked_targets(&self) -> usize {
        self.targets.lock().unwrap_or_else(PoisonError::into_inner).len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn rt() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap()
    }

    #[test]
    fn one_at_a_time_per_target_but_others_proceed() {
        rt().block_on(async {
            let l = Limiter::new(2, 1);
            let soon = || Instant::now() + Duration::from_millis(50);
            let a = l.acquire("a", soon()).await.unwrap();
            assert_eq!(l.acquire("a", soon()).await.unwrap_err(), Busy("same-target"));
            let b = l.acquire("b", soon()).await.unwrap();
            assert_eq!(l.acquire("c", soon()).await.unwrap_err(), Busy("max-concurrent"));
            drop(a);
            let _a2 = l.acquire("a", soon()).await.unwrap();
            drop(b);
            let _d = l.acquire("d", soon()).await.unwrap();
            assert_eq!(l.tracked_targets(), 2, "b and c are forgotten once nobody holds them: {l:?}");
        });
    }

    #[test]
    fn a_waiter_gets_the_slot_when_it_frees() {
        rt().block_on(async {
            let l = Arc::new(Limiter::new(1, 1));
            let held = l.acquire("a", Instant::now() + Duration::from_secs(1)).await.unwrap();
            let l2 = Arc::clone(&l);
            let waiter =
                tokio::spawn(async move { l2.acquire("a", Instant::now() + Duration::from_secs(5)).await.is_ok() });
            tokio::time::sleep(Duration::from_millis(20)).await;
            drop(held);
            assert!(waiter.await.unwrap());
        });
    }
}
