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

    /// A token that is cancelled when this signal fires, for code that only knows
    /// `CancellationToken`, while the returned value lives. Spawns nothing when no wrapper
    /// added a token; otherwise a task forwards the added tokens to it until it is dropped.
    pub fn to_token(&self) -> SignalToken {
        if self.added.is_empty() {
            return SignalToken {
                token: self.caller.clone(),
                forward: None,
            };
        }
        let fused = self.caller.child_token();
        let (signal, watch) = (self.clone(), fused.clone());
        let forward = tokio::spawn(async move {
            tokio::select! {
                () = signal.aborted() => watch.cancel(),
                () = watch.cancelled() => {}
            }
        });
        SignalToken {
            token: fused,
            forward: Some(forward),
        }
    }
}

/// [`Signal::to_token`]'s token. Keep it for as long as the token (or a child of it) is
/// watched: dropping it ends the task that forwards the signal, which would otherwise live
/// as long as the caller's token (a task per call, for good, on a call that finished).
#[must_use = "the token follows the signal only while this lives"]
pub struct SignalToken {
    token: CancellationToken,
    forward: Option<tokio::task::JoinHandle<()>>,
}

impl std::ops::Deref for SignalToken {
    type Target = CancellationToken;

    fn deref(&self) -> &CancellationToken {
        &self.token
    }
}

impl Drop for SignalToken {
    fn drop(&mut self) {
        if let Some(forward) = &self.forward {
            forward.abort();
        }
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

    #[tokio::test]
    async fn a_token_follows_an_added_token_while_it_lives() {
        let added = CancellationToken::new();
        let signal = Signal::never().replaced_by(added.clone());
        let token = signal.to_token();
        let child = token.child_token();
        added.cancel();
        child.cancelled().await;
        assert!(token.is_cancelled());
    }

    #[tokio::test]
    async fn a_dropped_token_leaves_no_task_behind() {
        let metrics = tokio::runtime::Handle::current().metrics();
        let signal = Signal::never().replaced_by(CancellationToken::new());
        let before = metrics.num_alive_tasks();
        for _ in 0..100 {
            drop(signal.to_token());
        }
        // Aborted tasks end when the scheduler next gets to them.
        for _ in 0..1000 {
            if metrics.num_alive_tasks() == before {
                break;
            }
            tokio::task::yield_now().await;
        }
        assert_eq!(metrics.num_alive_tasks(), before);
        // The signal still works, and a token taken now still follows it.
        let token = signal.to_token();
        assert!(!token.is_cancelled());
    }
}
