//! Turns: overlapping calls take their policy and result phases in submission order, so
//! only dispatch and bodies overlap (approval prompts and results keep model order).

use parking_lot::Mutex;
use std::collections::BTreeSet;
use std::sync::Arc;
use tokio::sync::watch;

/// Hands out turns 0, 1, 2, ... in order; a turn may be finished out of order, but waiting
/// for turn `i` resolves only once every turn below `i` is finished.
pub(crate) struct Sequencer {
    finished: Mutex<(usize, BTreeSet<usize>)>,
    lowest_open: watch::Sender<usize>,
}

impl Sequencer {
    pub fn new() -> Arc<Self> {
        Arc::new(Sequencer {
            finished: Mutex::new((0, BTreeSet::new())),
            lowest_open: watch::Sender::new(0),
        })
    }

    async fn wait(&self, turn: usize) {
        let mut receiver = self.lowest_open.subscribe();
        // An error means the sender is gone, which cannot happen while `self` lives.
        let _ = receiver.wait_for(|lowest| *lowest >= turn).await;
    }

    fn finish(&self, turn: usize) {
        let mut guard = self.finished.lock();
        let (lowest, done) = &mut *guard;
        if turn < *lowest {
            return;
        }
        done.insert(turn);
        while done.remove(lowest) {
            *lowest += 1;
        }
        let lowest = *lowest;
        self.lowest_open
            .send_if_modified(|value| std::mem::replace(value, lowest) != lowest);
    }
}

/// One call's place in a sequence. Dropping it finishes the turn.
struct Turn {
    sequencer: Arc<Sequencer>,
    index: usize,
    finished: bool,
}

impl Turn {
    fn finish(&mut self) {
        if !self.finished {
            self.finished = true;
            self.sequencer.finish(self.index);
        }
    }
}

impl Drop for Turn {
    fn drop(&mut self) {
        self.finish();
    }
}

/// Frees a call's place in its scheduler's pool.
type Release = Box<dyn FnOnce() + Send + Sync>;

/// A call's policy and result turns (both absent for a lone call), and the release of its
/// pool slot, which happens once dispatch is over so the pool keeps rolling while the call
/// waits for its result turn.
#[derive(Default)]
pub(crate) struct Turns {
    policy: Option<Turn>,
    results: Option<Turn>,
    release: Option<Release>,
}

impl Drop for Turns {
    fn drop(&mut self) {
        self.dispatch_done();
    }
}

impl Turns {
    /// Turns at `index` in the given sequences.
    pub fn at(
        index: usize,
        policy: Option<&Arc<Sequencer>>,
        results: Option<&Arc<Sequencer>>,
    ) -> Self {
        let turn = |sequencer: &Arc<Sequencer>| Turn {
            sequencer: sequencer.clone(),
            index,
            finished: false,
        };
        Turns {
            policy: policy.map(turn),
            results: results.map(turn),
            release: None,
        }
    }

    /// The same turns, running `release` once dispatch is over (or the call ends early).
    pub fn releasing(mut self, release: impl FnOnce() + Send + Sync + 'static) -> Self {
        self.release = Some(Box::new(release));
        self
    }

    /// Ends the dispatch phase: frees the pool slot (once).
    fn dispatch_done(&mut self) {
        if let Some(release) = self.release.take() {
            release();
        }
    }

    /// Waits until every earlier call finished its policy phase.
    pub async fn policy(&self) {
        if let Some(turn) = &self.policy {
            turn.sequencer.wait(turn.index).await;
        }
    }

    /// Ends this call's policy phase.
    pub fn policy_done(&mut self) {
        if let Some(turn) = &mut self.policy {
            turn.finish();
        }
    }

    /// Ends the policy and dispatch phases (if still open), then waits until every earlier
    /// call published.
    pub async fn results(&mut self) {
        self.policy_done();
        self.dispatch_done();
        if let Some(turn) = &self.results {
            turn.sequencer.wait(turn.index).await;
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_turn_waits_for_every_earlier_turn_even_when_they_finish_out_of_order() {
        let sequencer = Sequencer::new();
        let mut first = Turns::at(0, Some(&sequencer), None);
        let mut second = Turns::at(1, Some(&sequencer), None);
        let third = Turns::at(2, Some(&sequencer), None);
        second.policy_done();
        let waiting = tokio::spawn(async move { third.policy().await });
        tokio::task::yield_now().await;
        assert!(!waiting.is_finished());
        first.policy_done();
        waiting.await.unwrap();
        second.policy_done();
    }

    #[tokio::test]
    async fn dropping_a_turn_finishes_it() {
        let sequencer = Sequencer::new();
        drop(Turns::at(0, Some(&sequencer), None));
        let second = Turns::at(1, Some(&sequencer), None);
        second.policy().await;
        assert_eq!(*sequencer.lowest_open.borrow(), 1);
        drop(second);
        assert_eq!(*sequencer.lowest_open.borrow(), 2);
    }
}
