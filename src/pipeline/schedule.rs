//! Scheduling like the agent loop: calls start in submission order; consecutive parallel
//! calls share a bounded rolling pool; an exclusive call drains the pool, runs alone and
//! bars later calls. Used by `tools/executeBatch` and by Code Mode's binding bridge.
//!
//! A call holds its pool slot for its dispatch only: once its body settled it gives the
//! slot back, even while it still waits for earlier calls to publish their results.

use super::ToolRuntime;
use super::sequencer::{Sequencer, Turns};
use crate::tool::{ToolExecutionInput, ToolExecutionResult};
use dsh_tools_protocol::ExecutionMode;
use parking_lot::Mutex;
use std::collections::BTreeSet;
use std::sync::Arc;
use tokio::sync::Notify;

/// A place in a [`CallQueue`], taken synchronously at submission so order is the caller's.
pub struct Ticket(usize);

#[derive(Default)]
struct Pool {
    next_to_start: usize,
    abandoned: BTreeSet<usize>,
    running: usize,
    exclusive_running: bool,
    tickets: usize,
}

impl Pool {
    fn skip_abandoned(&mut self) {
        while self.abandoned.remove(&self.next_to_start) {
            self.next_to_start += 1;
        }
    }
}

/// The pool and its wake-ups, shared with the releases running calls hold.
struct Slots {
    max_parallel: usize,
    pool: Mutex<Pool>,
    changed: Notify,
}

impl Slots {
    fn try_start(&self, index: usize, exclusive: bool) -> bool {
        let mut pool = self.pool.lock();
        let free = if exclusive {
            pool.running == 0
        } else {
            !pool.exclusive_running && pool.running < self.max_parallel
        };
        if pool.next_to_start != index || !free {
            return false;
        }
        pool.next_to_start += 1;
        pool.skip_abandoned();
        pool.running += 1;
        pool.exclusive_running = exclusive;
        drop(pool);
        self.changed.notify_waiters();
        true
    }

    fn abandon(&self, index: usize) {
        let mut pool = self.pool.lock();
        pool.abandoned.insert(index);
        pool.skip_abandoned();
        drop(pool);
        self.changed.notify_waiters();
    }

    fn finish(&self, exclusive: bool) {
        let mut pool = self.pool.lock();
        pool.running -= 1;
        if exclusive {
            pool.exclusive_running = false;
        }
        drop(pool);
        self.changed.notify_waiters();
    }
}

/// A streaming scheduler over one runtime.
pub struct CallQueue {
    runtime: Arc<ToolRuntime>,
    slots: Arc<Slots>,
    policy: Arc<Sequencer>,
    results: Option<Arc<Sequencer>>,
}

impl CallQueue {
    /// A queue overlapping at most `max_parallel` parallel calls. With `ordered_results`,
    /// results are also published in submission order (batches); Code Mode leaves it off so
    /// a program awaiting a later call is not held up by an earlier slow one.
    pub fn new(runtime: Arc<ToolRuntime>, max_parallel: usize, ordered_results: bool) -> Arc<Self> {
        Arc::new(CallQueue {
            runtime,
            slots: Arc::new(Slots {
                max_parallel: max_parallel.max(1),
                pool: Mutex::new(Pool::default()),
                changed: Notify::new(),
            }),
            policy: Sequencer::new(),
            results: ordered_results.then(Sequencer::new),
        })
    }

    /// Takes the next place in line.
    pub fn ticket(&self) -> Ticket {
        let mut pool = self.slots.pool.lock();
        pool.tickets += 1;
        Ticket(pool.tickets - 1)
    }

    /// Classifies, waits for the call's turn to start, calls `on_start`, and runs it. With
    /// `abandon_on_abort`, a call still queued when its signal fires never starts and yields
    /// `None`.
    pub async fn run(
        &self,
        ticket: Ticket,
        input: ToolExecutionInput,
        abandon_on_abort: bool,
        on_start: impl FnOnce(),
    ) -> Option<ToolExecutionResult> {
        let Ticket(index) = ticket;
        let turns = Turns::at(index, Some(&self.policy), self.results.as_ref());
        // An aborted call is not held up by its classification: it will not dispatch.
        let mode = tokio::select! {
            mode = self.runtime.classify(
                &input.name,
                &input.arguments,
                input.agent.as_ref(),
                input.parent.is_some(),
            ) => mode,
            () = input.signal.aborted() => ExecutionMode::Exclusive,
        };
        let exclusive = mode == ExecutionMode::Exclusive;
        loop {
            // A call whose signal fired while it waited is abandoned even if a place freed
            // at the same moment (the place usually frees *because* of that abort).
            if abandon_on_abort && input.signal.is_aborted() {
                self.slots.abandon(index);
                return None;
            }
            let changed = self.slots.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            if self.slots.try_start(index, exclusive) {
                break;
            }
            if abandon_on_abort {
                tokio::select! {
                    () = &mut changed => {}
                    () = input.signal.aborted() => {
                        self.slots.abandon(index);
                        return None;
                    }
                }
            } else {
                changed.await;
            }
        }
        on_start();
        let slots = self.slots.clone();
        let turns = turns.releasing(move || slots.finish(exclusive));
        Some(self.runtime.execute_in_turn(input, turns).await)
    }
}
