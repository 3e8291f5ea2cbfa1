//! `pipeline.timeout`: makes `timeoutMs` real. The wrapper replaces the signal with one that
//! also fires at the deadline, waits for the body to settle, and reports `TOOL_TIMEOUT`.

use crate::pipeline::Next;
use crate::pipeline::hooks::{Dispatch, DispatchOutcome, ExecuteWrapper};
use crate::tool::{HarnessCode, ToolError};
use futures::future::BoxFuture;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// Enforces each tool's `timeoutMs` (or `default_ms` for tools that declare none).
pub struct TimeoutWrapper {
    /// Deadline for tools without their own.
    pub default_ms: Option<u64>,
}

impl ExecuteWrapper for TimeoutWrapper {
    fn wrap(&self, dispatch: Dispatch, next: Next) -> BoxFuture<'static, DispatchOutcome> {
        let Some(ms) = dispatch.timeout_ms.or(self.default_ms) else {
            return next.run(dispatch);
        };
        Box::pin(async move {
            let deadline = CancellationToken::new();
            let name = dispatch.execution.name.clone();
            let signal = dispatch.signal.replaced_by(deadline.clone());
            let body = next.run(Dispatch { signal, ..dispatch });
            tokio::pin!(body);
            tokio::select! {
                outcome = &mut body => outcome,
                () = tokio::time::sleep(Duration::from_millis(ms)) => {
                    deadline.cancel();
                    // Cooperative: the body observes its signal and settles; we never race away.
                    let _ = body.await;
                    Err(timed_out(&name, ms))
                }
            }
        })
    }
}

/// The `TOOL_TIMEOUT` failure.
pub fn timed_out(name: &str, ms: u64) -> ToolError {
    ToolError::harness(
        HarnessCode::ToolTimeout,
        format!("tool \"{name}\" timed out after {ms} ms"),
    )
}
