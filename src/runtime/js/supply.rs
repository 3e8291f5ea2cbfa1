//! The pool's ready isolates, counted, and the pacing of what follows a run.
//!
//! Ending a run leaves work that can wait: dropping the used isolate (QuickJS frees every
//! object it made) and building the next one (restoring the startup snapshot). Done at once,
//! on a 2-core machine they take the core the run's answer needs on its way out (the
//! worker writing it, the client reading it). So while another isolate is ready for the next
//! run, a slot waits a moment before its teardown and refill; the moment a run takes the
//! last ready isolate (demand), or the pool closes, the waiting slots go on at once. A run
//! never waits for this: pacing happens only while an isolate is ready for it.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

/// Ready isolates and the slots pacing their refill.
#[derive(Default)]
pub(crate) struct Supply {
    ready: AtomicUsize,
    /// Isolates warmed up for an anticipated run, ever.
    warm_ups: AtomicUsize,
    closed: AtomicBool,
    lock: Mutex<()>,
    changed: Condvar,
}

impl Supply {
    /// Isolates waiting for a run.
    pub(crate) fn ready(&self) -> usize {
        self.ready.load(Ordering::Acquire)
    }

    /// Isolates warmed up for an anticipated run since the pool started.
    pub(crate) fn warm_ups(&self) -> usize {
        self.warm_ups.load(Ordering::Acquire)
    }

    /// A ready isolate warmed up.
    pub(crate) fn warmed_up(&self) {
        self.warm_ups.fetch_add(1, Ordering::AcqRel);
    }

    /// A slot offers an isolate.
    pub(crate) fn offered(&self) {
        self.ready.fetch_add(1, Ordering::AcqRel);
    }

    /// An offer went away unused (the pool closed, or the offer could not be made).
    pub(crate) fn withdrawn(&self) {
        self.ready.fetch_sub(1, Ordering::AcqRel);
    }

    /// A run took an isolate: if that was the last ready one, pacing slots go on now.
    pub(crate) fn taken(&self) {
        if self.ready.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.wake();
        }
    }

    /// The pool is closing: nothing waits any more.
    pub(crate) fn close(&self) {
        self.closed.store(true, Ordering::Release);
        self.wake();
    }

    /// Waits up to `pace` while another isolate is ready for the next run.
    pub(crate) fn pace(&self, pace: Duration) {
        let deadline = Instant::now() + pace;
        let mut guard = self.lock.lock();
        while self.ready() > 0 && !self.closed.load(Ordering::Acquire) {
            if self.changed.wait_until(&mut guard, deadline).timed_out() {
                return;
            }
        }
    }

    fn wake(&self) {
        // Taken under the lock: a slot between its check and its wait cannot miss this.
        let _guard = self.lock.lock();
        self.changed.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::thread::JoinHandle;

    /// A slot pacing for up to a minute on its own thread; joins with how long it waited.
    fn pace_on_another_thread(supply: &Arc<Supply>) -> JoinHandle<Duration> {
        let supply = supply.clone();
        std::thread::spawn(move || {
            let started = Instant::now();
            supply.pace(Duration::from_secs(60));
            started.elapsed()
        })
    }

    #[test]
    fn nothing_ready_means_no_wait() {
        let supply = Supply::default();
        let started = Instant::now();
        supply.pace(Duration::from_secs(60));
        assert!(started.elapsed() < Duration::from_secs(30));
    }

    #[test]
    fn a_ready_isolate_holds_the_slot_until_the_pace_runs_out() {
        let supply = Supply::default();
        supply.offered();
        let started = Instant::now();
        supply.pace(Duration::from_millis(20));
        assert!(started.elapsed() >= Duration::from_millis(20));
    }

    #[test]
    fn taking_the_last_ready_isolate_releases_pacing_slots() {
        let supply = Arc::new(Supply::default());
        supply.offered();
        let pacing = pace_on_another_thread(&supply);
        // Whenever the slot starts waiting, the take ends its wait (or it never waits).
        supply.taken();
        let waited = pacing.join().unwrap_or(Duration::MAX);
        assert!(waited < Duration::from_secs(30), "waited {waited:?}");
        assert_eq!(supply.ready(), 0);
    }

    #[test]
    fn closing_releases_pacing_slots() {
        let supply = Arc::new(Supply::default());
        supply.offered();
        let pacing = pace_on_another_thread(&supply);
        supply.close();
        let waited = pacing.join().unwrap_or(Duration::MAX);
        assert!(waited < Duration::from_secs(30), "waited {waited:?}");
    }
}
