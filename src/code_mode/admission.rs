//! The host's one cap on runs alive at once (`codeRuntime.maxConcurrentRuns`, both languages
//! together). Past it a run fails at once, before it copies its program or takes an
//! isolate: a run never waits for another, since the one it waited for may be waiting for it
//! (through the bindings both call).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::tool::ToolError;

/// Runs alive now.
#[derive(Default)]
pub(super) struct Admission {
    alive: Arc<AtomicUsize>,
}

/// One admitted run; the count goes down when it drops.
pub(super) struct Admitted(Arc<AtomicUsize>);

impl Drop for Admitted {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

impl Admission {
    /// Admits a run if fewer than `cap` are alive; otherwise the error the caller answers.
    pub(super) fn admit(&self, cap: u32) -> Result<Admitted, ToolError> {
        let cap = usize::try_from(cap).unwrap_or(usize::MAX);
        let admitted = self
            .alive
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |alive| {
                (alive < cap).then_some(alive + 1)
            });
        match admitted {
            Ok(_) => Ok(Admitted(self.alive.clone())),
            Err(_) => Err(ToolError::new(refusal(cap))),
        }
    }

    /// Runs alive now.
    #[cfg(test)]
    fn alive(&self) -> usize {
        self.alive.load(Ordering::Acquire)
    }
}

/// The message of a run refused at the cap.
pub(super) fn refusal(cap: usize) -> String {
    format!(
        "run_code refused: {cap} runs are already in progress, the most \
         codeRuntime.maxConcurrentRuns allows; try again when one has finished"
    )
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn runs_past_the_cap_are_refused_until_one_ends() {
        let admission = Admission::default();
        let first = admission.admit(2).unwrap();
        let _second = admission.admit(2).unwrap();
        let refused = admission.admit(2).err().unwrap();
        assert_eq!(refused.message, refusal(2));
        assert_eq!(admission.alive(), 2);
        drop(first);
        assert_eq!(admission.alive(), 1);
        let _third = admission.admit(2).unwrap();
        assert_eq!(admission.alive(), 2);
    }
}
