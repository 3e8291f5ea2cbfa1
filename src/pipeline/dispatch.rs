//! The around-dispatch chain: wrappers in order, then the body with the caller's signal fused.

use super::hooks::{Dispatch, DispatchOutcome, ExecuteWrapper, Listener};
use crate::tool::{ContextMessage, ToolBody, ToolError, ToolRunContext};
use futures::FutureExt;
use futures::future::BoxFuture;
use parking_lot::Mutex;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

/// The rest of the chain. Cloneable so a retry wrapper can run it again.
#[derive(Clone)]
pub struct Next {
    wrappers: Arc<[Listener<dyn ExecuteWrapper>]>,
    index: usize,
    body: Arc<dyn ToolBody>,
    registration: Arc<str>,
    deferred: Arc<Mutex<Vec<ContextMessage>>>,
}

impl Next {
    pub(crate) fn new(
        wrappers: Arc<[Listener<dyn ExecuteWrapper>]>,
        body: Arc<dyn ToolBody>,
        registration: Arc<str>,
        deferred: Arc<Mutex<Vec<ContextMessage>>>,
    ) -> Self {
        Next {
            wrappers,
            index: 0,
            body,
            registration,
            deferred,
        }
    }

    /// Runs the next wrapper, or the body when none is left.
    pub fn run(self, dispatch: Dispatch) -> BoxFuture<'static, DispatchOutcome> {
        match self.wrappers.get(self.index).map(|l| l.hook.clone()) {
            Some(wrapper) => {
                let next = Next {
                    index: self.index + 1,
                    ..self
                };
                wrapper.wrap(dispatch, next)
            }
            None => {
                // Re-fuse: whatever signal a wrapper installed, the caller's token is part of it.
                let signal = dispatch.signal.clone();
                let ctx = ToolRunContext::new(
                    dispatch.execution.clone(),
                    signal,
                    self.registration,
                    self.deferred,
                );
                let name = dispatch.execution.name.clone();
                let body = self.body.call(ctx);
                Box::pin(
                    AssertUnwindSafe(body)
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
