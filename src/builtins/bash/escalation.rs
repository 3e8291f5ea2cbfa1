//! `dangerouslyDisableSandbox: true`: a `bash` call that asks to run unsandboxed is always
//! decided `ask`, whatever the allow rules say (a deny still wins), so it reaches the user
//! through `client/approve`, or is denied when no approver is connected.

use crate::pipeline::hooks::{PreDecision, PreExecuteHook};
use crate::tool::{ToolError, ToolExecution};
use futures::future::BoxFuture;
use serde_json::Value;
use std::sync::Arc;

/// Its place among pre-execute listeners: first, so its reason is the one the approver
/// reads (the permission gate follows at `i32::MIN + 1`).
pub const ORDER: i32 = i32::MIN;

/// The argument that asks for escalation.
pub const ARGUMENT: &str = "dangerouslyDisableSandbox";

/// What the approver (or, without one, the model) reads.
pub const REASON: &str = "bash was called with dangerouslyDisableSandbox: true: the command \
     will run unsandboxed, able to write anywhere the host user can and to reach the network";

/// Whether `arguments` ask to run unsandboxed.
pub fn requested(arguments: &Value) -> bool {
    arguments.get(ARGUMENT) == Some(&Value::Bool(true))
}

/// The pre-execute listener registered with `bash` (so the tool never exists without it).
pub struct Escalation;

impl PreExecuteHook for Escalation {
    fn name(&self) -> &str {
        "bash sandbox escalation"
    }

    fn decide(
        &self,
        execution: &Arc<ToolExecution>,
    ) -> BoxFuture<'static, Result<PreDecision, ToolError>> {
        let decision = if &*execution.name == "bash" && requested(&execution.arguments) {
            PreDecision::Ask(Some(REASON.to_owned()))
        } else {
            PreDecision::Allow
        };
        Box::pin(std::future::ready(Ok(decision)))
    }
}
