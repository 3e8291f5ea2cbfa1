//! The around-dispatch chain: wrappers in order, then the body with the caller's signal fused.

use super::hooks::{Dispatch, DispatchOutcome, ExecuteWrapper, Listener};
use crate::tool::{ContextMessage, Progress, Signal, ToolBody, ToolError, ToolRunContext};
use futures::FutureExt;
use futures::future::BoxFuture;
use parking_lot::Mutex;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

/// The rest of the chain. Cloneable so a retry wrapper can run it again.
///
/// Wrappers may replace only the signal: every step is handed the original call, timeout
/// and idempotence whatever `Dispatch` the previous wrapper built, and the body receives the
/// caller's signal re-fused with the signal the last wrapper installed.
#[derive(Clone)]
pub struct Next {
    wrappers: Arc<[Listener<dyn ExecuteWrapper>]>,
    index: usize,
    body: Arc<dyn ToolBody>,
    original: Arc<Dispatch>,
    registration: Arc<str>,
    progress: Progress,
    deferred: Arc<Mutex<Vec<ContextMessage>>>,
}

impl Next {
    pub(crate) fn new(
        wrappers: Arc<[Listener<dyn ExecuteWrapper>]>,
        body: Arc<dyn ToolBody>,
        original: Dispatch,
        registration: Arc<str>,
        progress: Progress,
        deferred: Arc<Mutex<Vec<ContextMessage>>>,
    ) -> Self {
        Next {
            wrappers,
            index: 0,
            body,
            original: Arc::new(original),
            registration,
            progress,
            deferred,
        }
    }

    /// Runs the next wrapper, or the body when none is left. Of `dispatch`, only the signal
    /// is taken.
    pub fn run(self, dispatch: Dispatch) -> BoxFuture<'static, DispatchOutcome> {
        let dispatch = Dispatch {
            signal: dispatch.signal,
            ..Dispatch::clone(&self.original)
        };
        match self.wrappers.get(self.index).map(|l| l.hook.clone()) {
            Some(wrapper) => {
                let next = Next {
                    index: self.index + 1,
                    ..self
                };
                Box::pin(
                    AssertUnwindSafe(async move { wrapper.wrap(dispatch, next).await })
                        .catch_unwind()
                        .map(|outcome| match outcome {
                            Ok(outcome) => outcome,
                            Err(panic) => Err(ToolError::new(format!(
                                "tools/execute wrapper panicked: {}",
                                panic_message(&panic)
                            ))),
                        }),
                )
            }
            None => {
                let signal = Signal::refused(&self.original.signal, &dispatch.signal);
                let execution = dispatch.execution;
                let name = execution.name.clone();
                let ctx = ToolRunContext::new(
                    execution,
                    signal,
                    self.registration,
                    self.progress,
                    self.deferred,
                );
                let body = self.body;
                Box::pin(
                    AssertUnwindSafe(async move { body.call(ctx).await })
                        .catch_unwind()
                        .map(move |outcome| match outcome {
                            Ok(outcome) => outcome,
                            Err(panic) => Err(ToolError::new(format!(
                                "tool \"{name}\" panicked: {}",
                                panic_message(&panic)
                            ))),
                        }),
                )
            }
        }
    }
}

/// Runs a listener's future, turning a panic into an error so the caller can fail closed
/// and name the listener (`panicked: <message>`).
pub(crate) async fn contained<T>(
    work: impl Future<Output = Result<T, ToolError>>,
) -> Result<T, ToolError> {
    match AssertUnwindSafe(work).catch_unwind().await {
        Ok(outcome) => outcome,
        Err(panic) => Err(ToolError::new(format!(
            "panicked: {}",
            panic_message(&panic)
        ))),
    }
}

/// The text of a panic payload.
pub(crate) fn panic_message(panic: &Box<dyn std::any::Any + Send>) -> String {
    if let Some(text) = panic.downcast_ref::<&str>() {
        (*text).to_string()
    } else if let Some(text) = panic.downcast_ref::<String>() {
        text.clone()
    } else {
        "unknown panic".to_string()
    }
}
