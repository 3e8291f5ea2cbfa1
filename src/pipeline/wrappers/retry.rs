//! `pipeline.retry`: repeats failed calls of tools that declared `idempotent: true`, with
//! bounded attempts and doubling backoff; never after an abort, a denial or a timeout.

use crate::pipeline::Next;
use crate::pipeline::hooks::{Dispatch, DispatchOutcome, ExecuteWrapper};
use crate::tool::HarnessCode;
use futures::future::BoxFuture;
use std::time::Duration;

/// Retries idempotent tools.
pub struct RetryWrapper {
    /// Attempts in all (1 = no retry).
    pub max_attempts: u32,
    /// First backoff; doubled per attempt.
    pub backoff_ms: u64,
}

impl ExecuteWrapper for RetryWrapper {
    fn wrap(&self, dispatch: Dispatch, next: Next) -> BoxFuture<'static, DispatchOutcome> {
        if !dispatch.idempotent || self.max_attempts <= 1 {
            return next.run(dispatch);
        }
        let (attempts, backoff_ms) = (self.max_attempts, self.backoff_ms);
        Box::pin(async move {
            let mut delay = Duration::from_millis(backoff_ms);
            let mut attempt = 1;
            loop {
                let outcome = next.clone().run(dispatch.clone()).await;
                let retryable = match &outcome {
                    Ok(_) => false,
                    Err(error) => !matches!(
                        error.code,
                        Some(
                            HarnessCode::Aborted
                                | HarnessCode::AbortedBeforeDispatch
                                | HarnessCode::ToolTimeout
                        )
                    ),
                };
                if !retryable || attempt >= attempts || dispatch.signal.is_aborted() {
                    return outcome;
                }
                attempt += 1;
                tokio::select! {
                    () = tokio::time::sleep(delay) => {}
                    () = dispatch.signal.aborted() => return outcome,
                }
                delay = delay.saturating_mul(2);
            }
        })
    }
}
