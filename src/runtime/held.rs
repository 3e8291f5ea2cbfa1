//! Output that runs in progress hold, counted for the whole process. A run's console lines
//! stay in memory until its answer is written; with runs never queued behind runs, forty
//! programs printing 16 MiB each would hold 640 MiB before any answer could be sent. So a
//! line waits while the runs that started *before* its run, together with what the process
//! has queued for clients and not yet written (answers made of earlier runs' lines, see
//! [`unsent_in_process`]), hold [`HELD_HIGH_WATER`] or more. The oldest run waits only on
//! what is unsent, which a reading client drains, so every run still ends, while the output
//! held at once stays near the bound plus one line per run.
//!
//! Process-wide on purpose: the bound is on the memory of the process, whatever host or
//! session the runs belong to.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use crate::transport::unsent_in_process;
use parking_lot::{Condvar, Mutex};

/// Bytes of output the earlier runs may hold before a later run's next line waits.
pub(crate) const HELD_HIGH_WATER: u64 = 8 << 20;

/// How long a waiting line sleeps before it looks again (a missed wake-up costs no more).
pub(crate) const RECHECK: Duration = Duration::from_millis(50);

/// Bytes held per run, by the order the runs started in.
static HELD: Mutex<BTreeMap<u64, u64>> = Mutex::new(BTreeMap::new());
static RELEASED: Condvar = Condvar::new();
static NEXT: AtomicU64 = AtomicU64::new(0);

/// One run's share of the ledger; dropping it (or [`Holding::release`]) gives the share back.
pub(crate) struct Holding {
    order: u64,
    /// Bytes queued for clients that count with the held output ([`unsent_in_process`];
    /// the unit tests give their own, so other tests' connections cannot move them).
    unsent: fn() -> usize,
}

impl Holding {
    /// A run's entry, after every run that started before it.
    pub(crate) fn new() -> Self {
        Self::counting(unsent_in_process)
    }

    fn counting(unsent: fn() -> usize) -> Self {
        let order = NEXT.fetch_add(1, Ordering::Relaxed);
        HELD.lock().insert(order, 0);
        Holding { order, unsent }
    }

    /// Waits while earlier runs and unsent answers hold [`HELD_HIGH_WATER`] or more, or until
    /// `stopped` says the run is over (its lines are refused then anyway).
    pub(crate) fn wait_turn(&self, stopped: impl Fn() -> bool) {
        let mut held = HELD.lock();
        while held_before(&held, self.order, (self.unsent)()) >= HELD_HIGH_WATER && !stopped() {
            RELEASED.wait_for(&mut held, RECHECK);
        }
    }

    /// Whether earlier runs hold [`HELD_HIGH_WATER`] or more now: a run on the host's own
    /// workers (Python's) leaves its child's output unread meanwhile, instead of blocking.
    pub(crate) fn must_wait(&self) -> bool {
        held_before(&HELD.lock(), self.order, (self.unsent)()) >= HELD_HIGH_WATER
    }

    /// Counts `bytes` more output held by this run.
    pub(crate) fn add(&self, bytes: u64) {
        if let Some(share) = HELD.lock().get_mut(&self.order) {
            *share += bytes;
        }
    }

    /// The run's output left its keeping (taken for the answer): later runs may go on.
    pub(crate) fn release(&self) {
        if HELD.lock().remove(&self.order).is_some() {
            RELEASED.notify_all();
        }
    }
}

impl Drop for Holding {
    fn drop(&mut self) {
        self.release();
    }
}

/// What earlier runs hold plus what waits to be written to clients.
fn held_before(held: &BTreeMap<u64, u64>, order: u64, unsent: usize) -> u64 {
    let unsent = u64::try_from(unsent).unwrap_or(u64::MAX);
    held.range(..order)
        .map(|(_, bytes)| bytes)
        .sum::<u64>()
        .saturating_add(unsent)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::AtomicBool;

    /// The ledger is the process's: these tests take turns (other tests hold only a little).
    static SERIAL: Mutex<()> = Mutex::new(());

    /// No bytes queued for clients (other tests' connections do not count here).
    fn nothing() -> usize {
        0
    }

    #[test]
    fn a_later_run_waits_while_earlier_ones_hold_the_bound_and_goes_on_when_they_release() {
        let _turn = SERIAL.lock();
        let earlier = Holding::counting(nothing);
        let later = Arc::new(Holding::counting(nothing));
        // The earliest run never waits on the runs after it.
        later.add(HELD_HIGH_WATER);
        earlier.wait_turn(|| false);
        earlier.add(HELD_HIGH_WATER);
        let done = Arc::new(AtomicBool::new(false));
        let waiter = std::thread::spawn({
            let (later, done) = (later.clone(), done.clone());
            move || {
                later.wait_turn(|| false);
                done.store(true, Ordering::SeqCst);
            }
        });
        // Still waiting after several rechecks: the earlier run holds the bound.
        std::thread::sleep(RECHECK * 4);
        assert!(!done.load(Ordering::SeqCst), "the later run did not wait");
        earlier.release();
        waiter
            .join()
            .unwrap_or_else(|_| panic!("the waiter panicked"));
        assert!(done.load(Ordering::SeqCst));
    }

    #[test]
    fn a_stopped_run_does_not_wait() {
        let _turn = SERIAL.lock();
        let earlier = Holding::counting(nothing);
        earlier.add(HELD_HIGH_WATER);
        let later = Holding::counting(nothing);
        assert!(later.must_wait());
        later.wait_turn(|| true);
        drop(earlier);
        assert!(!later.must_wait());
    }

    #[test]
    fn unsent_answers_count_even_for_the_earliest_run() {
        let _turn = SERIAL.lock();
        let behind = Holding::counting(|| usize::try_from(HELD_HIGH_WATER).unwrap_or(usize::MAX));
        assert!(behind.must_wait());
        behind.wait_turn(|| true);
        assert!(!Holding::counting(nothing).must_wait());
    }
}
