//! `Limit`: the per-provider concurrency limit (`--max-concurrency`), with
//! priority. When calls wait for a slot, the one of the latest phase goes
//! first (adjudication before rebuttal before evaluation before attack), in
//! arrival order within a phase. In a single run the phases never overlap,
//! so this changes nothing there; in `gauntlet review`, where specs share
//! the limit, a spec that is further along finishes instead of queueing
//! behind the attacks of every other spec, which keeps each spec's critical
//! path short.

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::sync::{Arc, Mutex};
use tokio::sync::oneshot;

/// How urgent a call is: later phases first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Priority {
    Attack = 0,
    Evaluation = 1,
    Rebuttal = 2,
    Adjudication = 3,
    FinalBoss = 4,
}

pub struct Limit {
    state: Mutex<State>,
}

struct State {
    free: usize,
    seq: u64,
    waiting: BinaryHeap<Waiter>,
}

struct Waiter {
    priority: Priority,
    seq: u64,
    tx: oneshot::Sender<Permit>,
}

impl PartialEq for Waiter {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}
impl Eq for Waiter {}
impl PartialOrd for Waiter {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Waiter {
    /// The max-heap pops the highest priority, then the earliest arrival.
    fn cmp(&self, o: &Self) -> Ordering {
        self.priority
            .cmp(&o.priority)
            .then_with(|| o.seq.cmp(&self.seq))
    }
}

/// A slot; dropping it hands the slot to the most urgent waiter.
pub struct Permit {
    limit: Option<Arc<Limit>>,
}

impl Limit {
    pub fn new(slots: usize) -> Arc<Limit> {
        Arc::new(Limit {
            state: Mutex::new(State {
                free: slots.max(1),
                seq: 0,
                waiting: BinaryHeap::new(),
            }),
        })
    }

    /// Waits for a slot. Cancel-safe: a permit handed to a waiter that has
    /// gone away is passed on to the next one.
    pub async fn acquire(self: &Arc<Self>, priority: Priority) -> Permit {
        let rx = {
            let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
            if s.free > 0 {
                s.free -= 1;
                return Permit {
                    limit: Some(self.clone()),
                };
            }
            let (tx, rx) = oneshot::channel();
            s.seq += 1;
            let seq = s.seq;
            s.waiting.push(Waiter { priority, seq, tx });
            rx
        };
        // The sender lives in the heap until a permit is sent on it, and the
        // heap lives as long as `self`: the channel cannot close unanswered.
        rx.await.unwrap_or(Permit { limit: None })
    }
}

impl Drop for Permit {
    fn drop(&mut self) {
        let Some(limit) = self.limit.take() else {
            return;
        };
        let mut s = limit.state.lock().unwrap_or_else(|e| e.into_inner());
        while let Some(w) = s.waiting.pop() {
            let permit = Permit {
                limit: Some(limit.clone()),
            };
            match w.tx.send(permit) {
                Ok(()) => return,
                // The waiter was cancelled: disarm and try the next one.
                Err(mut p) => p.limit = None,
            }
        }
        s.free += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn later_phases_go_first_then_arrival_order() {
        let limit = Limit::new(1);
        let held = limit.acquire(Priority::Attack).await;
        let order = Arc::new(Mutex::new(Vec::new()));
        let mut tasks = Vec::new();
        for (name, p) in [
            ("attack", Priority::Attack),
            ("rebuttal-1", Priority::Rebuttal),
            ("eval", Priority::Evaluation),
            ("rebuttal-2", Priority::Rebuttal),
        ] {
            let (limit, order) = (limit.clone(), order.clone());
            tasks.push(tokio::spawn(async move {
                let _p = limit.acquire(p).await;
                order.lock().unwrap().push(name);
            }));
            // Let each one queue before the next.
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        drop(held);
        for t in tasks {
            t.await.unwrap();
        }
        assert_eq!(
            *order.lock().unwrap(),
            vec!["rebuttal-1", "rebuttal-2", "eval", "attack"]
        );
    }

    #[tokio::test]
    async fn a_cancelled_waiter_does_not_lose_the_slot() {
        let limit = Limit::new(1);
        let held = limit.acquire(Priority::Attack).await;
        let waiting = {
            let limit = limit.clone();
            tokio::spawn(async move { limit.acquire(Priority::FinalBoss).await })
        };
        tokio::time::sleep(Duration::from_millis(5)).await;
        waiting.abort();
        let _ = waiting.await;
        drop(held);
        // The slot is free again, not leaked to the cancelled waiter.
        let got =
            tokio::time::timeout(Duration::from_secs(2), limit.acquire(Priority::Attack)).await;
        assert!(got.is_ok());
    }
}
