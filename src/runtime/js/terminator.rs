//! Ending a stopped run's JavaScript for certain.
//!
//! One termination request is not enough: deno_core cancels the engine's terminating state
//! once the uncatchable exception reaches it, and QuickJS checks for termination only at
//! back-edges and calls, never between the jobs of its microtask drain nor inside a built-in
//! (`sort`, `fill`, `JSON.stringify`). A program that loops over slow built-ins runs on after
//! the first request (a microtask flood does not: the first job the request ends ends the
//! drain and drops the queue, v8x patch 0015). So a stopped run gets a terminator
//! thread that re-requests termination, each time also zeroing the engine's countdown to its
//! next check (`interrupt`), until the isolate thread reports it has left JavaScript: a loop
//! of built-ins ends once the built-in in progress returns. If that takes longer than
//! [`ABANDON_AFTER`] (one built-in call that long), the slot is told to give the thread up and
//! build a fresh isolate, while the terminator keeps trying until the slot has parked the
//! thread (a parked thread never reaches a check: trying on would only spin).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use deno_core::v8;
use parking_lot::Mutex;

use super::interrupt::EngineContext;
use super::timing::{ABANDON_AFTER, TERMINATE_EVERY, TERMINATE_GIVE_UP};

/// Set by the isolate thread when the run's JavaScript is over; whether its slot has parked
/// the thread for good (then termination requests would never be seen); and the engine
/// context termination requests nudge, attached while the isolate is alive.
#[derive(Clone, Default)]
pub(crate) struct LeftEngine(Arc<Flags>);

#[derive(Default)]
struct Flags {
    left: Arc<AtomicBool>,
    parked: AtomicBool,
    engine: Mutex<Option<Engine>>,
}

/// What termination requests reach while the isolate is alive.
struct Engine {
    isolate: v8::IsolateHandle,
    context: Option<EngineContext>,
}

impl LeftEngine {
    /// The run's JavaScript is over: requests stop, and the context is detached before the
    /// isolate can be dropped.
    pub(crate) fn set(&self) {
        // The flag first: the parking handler reads only it, and must see it before this
        // thread takes the lock below.
        self.0.left.store(true, Ordering::Release);
        self.0.engine.lock().take();
    }

    pub(crate) fn is_set(&self) -> bool {
        self.0.left.load(Ordering::Acquire)
    }

    /// Marks the thread parked: its terminator stops.
    pub(crate) fn set_parked(&self) {
        self.0.parked.store(true, Ordering::Release);
    }

    fn is_parked(&self) -> bool {
        self.0.parked.load(Ordering::Acquire)
    }

    /// The flag itself, for the parking signal handler.
    pub(crate) fn flag(&self) -> Arc<AtomicBool> {
        self.0.left.clone()
    }

    /// Lets termination requests reach `isolate` and nudge `context` until the returned guard
    /// drops (declare it after the isolate, so it drops first) or the run's JavaScript is over.
    pub(crate) fn attach(
        &self,
        isolate: v8::IsolateHandle,
        context: Option<EngineContext>,
    ) -> Attached<'_> {
        *self.0.engine.lock() = Some(Engine { isolate, context });
        Attached(self)
    }

    /// Requests termination and makes the engine check for it at its next call or back-edge.
    pub(crate) fn request(&self) {
        if let Some(engine) = self.0.engine.lock().as_ref() {
            engine.isolate.terminate_execution();
            if let Some(context) = &engine.context {
                // SAFETY: an attached context's isolate is alive: it is detached, under this
                // lock, before the isolate is dropped.
                unsafe { context.trigger() };
            }
        }
    }
}

/// Marks the run's JavaScript over and detaches the engine when dropped: also when the
/// isolate thread unwinds (deno_core unwraps values the engine refuses to create while it
/// terminates), so no terminator or parked-thread slice waits for a flag nobody will set.
pub(crate) struct Attached<'a>(&'a LeftEngine);

impl Drop for Attached<'_> {
    fn drop(&mut self) {
        self.0.set();
    }
}

/// Starts re-requesting termination of `left`'s isolate until `left` is set; `abandon` runs
/// once if that takes longer than [`ABANDON_AFTER`].
pub(crate) fn keep_terminating(left: LeftEngine, abandon: impl FnOnce() + Send + 'static) {
    left.request();
    if left.is_set() {
        return;
    }
    let spawned = std::thread::Builder::new()
        .name("dsh-terminator".to_owned())
        .stack_size(64 * 1024)
        .spawn(move || {
            let started = Instant::now();
            let mut abandon = Some(abandon);
            while !left.is_set() && !left.is_parked() && started.elapsed() < TERMINATE_GIVE_UP {
                left.request();
                if started.elapsed() >= ABANDON_AFTER
                    && let Some(abandon) = abandon.take()
                {
                    abandon();
                }
                std::thread::sleep(TERMINATE_EVERY);
            }
        });
    if let Err(error) = spawned {
        tracing::error!(%error, "could not start a terminator thread");
    }
}
