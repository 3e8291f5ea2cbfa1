//! Cooperative cancellation: the caller's token, plus any tokens `tools/execute` wrappers
//! added; the signal fires when any of them is cancelled.

use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// An abort signal: the caller's token and the tokens wrappers added (a deadline, a retry
/// budget). Cheap to clone.
#[derive(Clone, Debug, Default)]
pub struct Signal {
    caller: CancellationToken,
    added: Arc<[CancellationToken]>,
}

impl Signal {
    /// A signal that follows `token`.
    pub fn new(token: CancellationToken) -> Self {
        Signal {
            caller: token,
            added: Arc::new([]),
        }
    }

    /// A signal that never fires unless `caller_token()` is cancelled.
    pub fn never() -> Self {
        Signal::default()
    }

    /// Whether the signal has fired.
    pub fn is_aborted(&self) -> bool {
        self.caller.is_cancelled() || self.added.iter().any(CancellationToken::is_cancelled)
    }

    /// Resolves when the signal fires.
    pub async fn aborted(&self) {
        if self.added.is_empty() {
            return self.caller.cancelled().await;
        }
        let every = std::iter::once(&self.caller).chain(self.added.iter());
        futures::future::select_all(every.map(|token| Box::pin(token.cancelled()))).await;
    }

    /// This signal, also firing when `token` is cancelled (what a wrapper installs to add a
    /// deadline). Nothing this signal already follows is dropped.
    pub fn replaced_by(&self, token: CancellationToken) -> Signal {
        let added: Vec<CancellationToken> = self.added.iter().cloned().chain([token]).collect();
        Signal {
            caller: self.caller.clone(),
            added: added.into(),
        }
    }

    /// `caller` fused with whatever signal a wrapper `installed`: what a body receives, so
    /// the caller's cancellation reaches it even when a wrapper installed a brand-new signal.
    pub fn refused(caller: &Signal, installed: &Signal) -> Signal {
        let tokens = caller.added.iter().chain([&installed.caller]);
        let added: Vec<CancellationToken> = tokens.chain(installed.added.iter()).cloned().collect();
        Signal {
            caller: caller.caller.clone(),
            added: added.into(),
        }
    }

    /// The caller's own token.
    pub fn caller_token(&self) -> &CancellationToken {
        &self.caller
    }

    /// A token that is cancelled when this signal fires (for handing to code that only knows
    /// `CancellationToken`). Spawns nothing when no wrapper added a token.
    pub fn to_token(&self) -> CancellationToken {
        if self.added.is_empty() {
            return self.caller.clone();
        }
        let fused = self.caller.child_token();
        let (signal, watch) = (self.clone(), fused.clone());
        tokio::spawn(async move {
            tokio::select! {
                () = signal.aborted() => watch.cancel(),
                () = watch.cancelled() => {}
            }
        });
        fused
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn fires_when_any_token_fires() {
        let check = |fire: usize| {
            let tokens: Vec<CancellationToken> = (0..3).map(|_| CancellationToken::new()).collect();
            let signal = Signal::new(tokens[0].clone())
                .replaced_by(tokens[1].clone())
                .replaced_by(tokens[2].clone());
            assert!(!signal.is_aborted());
            tokens[fire].cancel();
            assert!(signal.is_aborted(), "token {fire}");
        };
        (0..3).for_each(check);
    }

    #[test]
    fn a_refused_signal_follows_the_caller_and_the_installed_signal() {
        let check = |fire: usize| {
            let tokens: Vec<CancellationToken> = (0..3).map(|_| CancellationToken::new()).collect();
            let caller = Signal::new(tokens[0].clone());
            let installed = Signal::new(tokens[1].clone()).replaced_by(tokens[2].clone());
            let fused = Signal::refused(&caller, &installed);
            assert!(!fused.is_aborted());
            tokens[fire].cancel();
            assert!(fused.is_aborted(), "token {fire}");
        };
        (0..3).for_each(check);
    }

    #[tokio::test]
    async fn aborted_resolves_for_an_added_token() {
        let added = CancellationToken::new();
        let signal = Signal::never().replaced_by(added.clone());
        added.cancel();
        signal.aborted().await;
        assert!(!signal.caller_token().is_cancelled());
    }
}
