//! Handing a run to a ready isolate's thread without waiting for it to wake up.
//!
//! A ready isolate's thread sleeps until a run takes it, and waking a sleeping thread is slow
//! next to a trivial run (on a small virtual machine, the largest single wait on its path;
//! `docs/performance.md`). So the pool tells the thread it was taken ([`Giver::wake`]) as soon as it holds the
//! ticket, then strips the program's types and sets up the run while the thread wakes; the
//! thread waits for the job awake for up to [`AWAKE_FOR`], yielding its core to anyone who
//! needs it, and only then goes back to sleep. The job itself ([`Giver::give`]) then meets an
//! awake thread.
//!
//! Earlier still, when a run is only announced (its request was just read), the pool may ask
//! the thread to get ready ([`Giver::warm`]): it does its warm-up (`FreshIsolate::warm`) on its
//! own core while the request is parsed and staged on another, then waits awake as after a
//! wake-up.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TryRecvError, sync_channel};
use std::time::Instant;

use super::timing::AWAKE_FOR;

enum Message<T> {
    Warm,
    Wake,
    Job(T),
}

/// The pool's end: may ask the thread to warm up, wakes it, then gives it its job.
pub(crate) struct Giver<T> {
    sender: SyncSender<Message<T>>,
    /// Set once a warm-up was asked for: one per hand-off, so the job always fits.
    warmed: AtomicBool,
}

/// The isolate thread's end.
pub(crate) struct Taker<T>(Receiver<Message<T>>);

/// One hand-off: a warm-up, a wake-up and a job at most.
pub(crate) fn handoff<T>() -> (Giver<T>, Taker<T>) {
    let (sender, receiver) = sync_channel(3);
    let giver = Giver {
        sender,
        warmed: AtomicBool::new(false),
    };
    (giver, Taker(receiver))
}

impl<T> Giver<T> {
    /// Asks the thread to warm up for a job that may follow (the first time only), after which
    /// it waits awake for it. Never blocks.
    pub(crate) fn warm(&self) {
        if !self.warmed.swap(true, Ordering::AcqRel) {
            let _ = self.sender.try_send(Message::Warm);
        }
    }

    /// Wakes the thread, which then waits awake for the job. Never blocks.
    pub(crate) fn wake(&self) {
        let _ = self.sender.try_send(Message::Wake);
    }

    /// Gives the thread its job; `Err` gives it back when the thread is gone.
    pub(crate) fn give(self, job: T) -> Result<(), T> {
        self.sender
            .try_send(Message::Job(job))
            .map_err(|error| match error {
                std::sync::mpsc::TrySendError::Full(Message::Job(job))
                | std::sync::mpsc::TrySendError::Disconnected(Message::Job(job)) => job,
                // Only a job is sent here, and one job fits beside one warm-up and one wake-up.
                _ => unreachable!("give sends a job"),
            })
    }
}

impl<T> Taker<T> {
    /// Blocks until the job arrives, calling `warm` if asked to; `None` when the giver was
    /// dropped without giving one.
    pub(crate) fn wait(self, mut warm: impl FnMut()) -> Option<T> {
        loop {
            match self.0.recv().ok()? {
                Message::Job(job) => return Some(job),
                Message::Warm => warm(),
                Message::Wake => {}
            }
            if let Some(job) = self.wait_awake()? {
                return Some(job);
            }
        }
    }

    /// Polls for the job for [`AWAKE_FOR`]: `Some(None)` when it did not come in time.
    fn wait_awake(&self) -> Option<Option<T>> {
        let until = Instant::now() + AWAKE_FOR;
        while Instant::now() < until {
            match self.0.try_recv() {
                Ok(Message::Job(job)) => return Some(Some(job)),
                // A warm-up asked for while awake is skipped: the job is about to come.
                Ok(Message::Warm | Message::Wake) | Err(TryRecvError::Empty) => {
                    std::thread::yield_now();
                }
                Err(TryRecvError::Disconnected) => return None,
            }
        }
        Some(None)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_job_given_after_a_wake_up_arrives_whether_or_not_the_thread_still_waits_awake() {
        for delay in [Duration::ZERO, AWAKE_FOR * 4] {
            let (giver, taker) = handoff();
            let waiting = std::thread::spawn(move || taker.wait(|| {}));
            giver.wake();
            // The second case gives the job after the thread went back to sleep.
            let gave = Instant::now();
            while gave.elapsed() < delay {
                std::thread::yield_now();
            }
            giver.give(7).unwrap();
            assert_eq!(waiting.join().unwrap(), Some(7));
        }
    }

    #[test]
    fn a_giver_dropped_without_a_job_ends_the_wait_awake_or_asleep() {
        let (giver, taker) = handoff::<u8>();
        giver.wake();
        drop(giver);
        assert_eq!(taker.wait(|| {}), None);
        let (giver, taker) = handoff::<u8>();
        drop(giver);
        assert_eq!(taker.wait(|| {}), None);
    }

    #[test]
    fn a_job_for_a_thread_that_is_gone_comes_back() {
        let (giver, taker) = handoff();
        drop(taker);
        assert_eq!(giver.give(3), Err(3));
    }

    #[test]
    fn a_job_given_without_a_wake_up_arrives() {
        let (giver, taker) = handoff();
        giver.give("job").unwrap();
        assert_eq!(taker.wait(|| {}), Some("job"));
    }

    #[test]
    fn a_warm_up_runs_once_on_the_thread_and_the_job_still_fits_behind_it_and_a_wake_up() {
        let (giver, taker) = handoff();
        giver.warm();
        giver.warm();
        giver.wake();
        giver.give("job").unwrap();
        let mut warm_ups = 0;
        assert_eq!(taker.wait(|| warm_ups += 1), Some("job"));
        assert_eq!(warm_ups, 1);
    }

    #[test]
    fn a_thread_that_warmed_up_and_went_back_to_sleep_still_takes_its_job() {
        let (giver, taker) = handoff();
        let (warmed, warm_ups) = std::sync::mpsc::channel();
        let waiting = std::thread::spawn(move || taker.wait(|| warmed.send(()).unwrap()));
        giver.warm();
        warm_ups.recv().unwrap();
        // Given well after the thread stopped waiting awake.
        let gave = Instant::now();
        while gave.elapsed() < AWAKE_FOR * 4 {
            std::thread::yield_now();
        }
        giver.wake();
        giver.give(9).unwrap();
        assert_eq!(waiting.join().unwrap(), Some(9));
    }
}
