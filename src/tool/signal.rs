//! Cooperative cancellation: a signal fused from the caller's token and a wrapper's own.

use tokio_util::sync::CancellationToken;

/// An abort signal. It fires when any of its (at most two) tokens is cancelled: the caller's
/// token and, after a wrapper replaced the signal, the wrapper's. Cheap to clone.
#[derive(Clone, Debug, Default)]
pub struct Signal {
    caller: CancellationToken,
    replacement: Option<CancellationToken>,
}

impl Signal {
    /// A signal that follows `token`.
    pub fn new(token: CancellationToken) -> Self {
        Signal {
            caller: token,
            replacement: None,
        }
    }

    /// A signal that never fires unless `abort_handle()` is cancelled.
    pub fn never() -> Self {
        Signal::default()
    }

    /// Whether the signal has fired.
    pub fn is_aborted(&self) -> bool {
        self.caller.is_cancelled() || self.replacement.as_ref().is_some_and(|t| t.is_cancelled())
    }

    /// Resolves when the signal fires.
    pub async fn aborted(&self) {
        match &self.replacement {
            None => self.caller.cancelled().await,
            Some(other) => {
                tokio::select! {
                    () = self.caller.cancelled() => {}
                    () = other.cancelled() => {}
                }
            }
        }
    }

    /// The same caller token with `token` as the wrapper's replacement signal.
    pub fn replaced_by(&self, token: CancellationToken) -> Signal {
        Signal {
            caller: self.caller.clone(),
            replacement: Some(token),
        }
    }

    /// The caller's own token (what the registry re-fuses before the body).
    pub fn caller_token(&self) -> &CancellationToken {
        &self.caller
    }

    /// A token that is cancelled when this signal fires (for handing to code that only knows
    /// `CancellationToken`). Spawns nothing when there is no replacement.
    pub fn to_token(&self) -> CancellationToken {
        match &self.replacement {
            None => self.caller.clone(),
            Some(other) => {
                let fused = self.caller.child_token();
                let (other, watch) = (other.clone(), fused.clone());
                tokio::spawn(async move {
                    tokio::select! {
                        () = other.cancelled() => watch.cancel(),
                        () = watch.cancelled() => {}
                    }
                });
                fused
            }
        }
    }
}
