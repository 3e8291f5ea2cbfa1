//! Ending a stopped run's JavaScript for certain.
//!
//! One termination request is not enough: deno_core cancels the engine's terminating state
//! once the uncatchable exception reaches it, and QuickJS checks for termination only at
//! back-edges and calls, never between the jobs of its microtask drain nor inside a built-in
//! (`sort`, `fill`, `JSON.stringify`). A program that keeps re-queueing microtasks, or loops
//! over slow built-ins, runs on after the first request. So a stopped run gets a terminator
//! thread that re-requests termination until the isolate thread reports it has left
//! JavaScript; if that takes longer than [`ABANDON_AFTER`], the slot is told to give the
//! thread up and build a fresh isolate, while the terminator keeps trying until the slot has
//! parked the thread (a parked thread never reaches a check: trying on would only spin).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use deno_core::v8;

/// How long a stopped isolate may take to leave JavaScript before its slot is replaced.
pub(crate) const ABANDON_AFTER: Duration = Duration::from_millis(200);
/// Pause between termination requests: short, so a re-armed drain runs only briefly.
const INTERVAL: Duration = Duration::from_millis(1);
/// After this long the isolate is considered wedged outside JavaScript; requests stop.
const GIVE_UP: Duration = Duration::from_secs(600);

/// Set by the isolate thread when the run's JavaScript is over; and whether its slot has
/// parked the thread for good (then termination requests would never be seen).
#[derive(Clone, Default)]
pub(crate) struct LeftEngine(Arc<AtomicBool>, Arc<AtomicBool>);

impl LeftEngine {
    pub(crate) fn set(&self) {
        self.0.store(true, Ordering::Release);
    }

    fn is_set(&self) -> bool {
        self.0.load(Ordering::Acquire)
    }

    /// Marks the thread parked: its terminator stops.
    pub(crate) fn set_parked(&self) {
        self.1.store(true, Ordering::Release);
    }

    fn is_parked(&self) -> bool {
        self.1.load(Ordering::Acquire)
    }

    /// The flag itself, for the parking signal handler.
    pub(crate) fn flag(&self) -> Arc<AtomicBool> {
        self.0.clone()
    }
}

/// Starts re-requesting termination of `isolate` until `left` is set; `abandon` runs once
/// if that takes longer than [`ABANDON_AFTER`].
pub(crate) fn keep_terminating(
    isolate: v8::IsolateHandle,
    left: LeftEngine,
    abandon: impl FnOnce() + Send + 'static,
) {
    isolate.terminate_execution();
    if left.is_set() {
        return;
    }
    let spawned = std::thread::Builder::new()
        .name("dsh-terminator".to_owned())
        .stack_size(64 * 1024)
        .spawn(move || {
            let started = Instant::now();
            let mut abandon = Some(abandon);
            while !left.is_set() && !left.is_parked() && started.elapsed() < GIVE_UP {
                isolate.terminate_execution();
                if started.elapsed() >= ABANDON_AFTER
                    && let Some(abandon) = abandon.take()
                {
                    abandon();
                }
                std::thread::sleep(INTERVAL);
            }
        });
    if let Err(error) = spawned {
        tracing::error!(%error, "could not start a terminator thread");
    }
}
