//! The permission matcher as a pre-execute listener.

use super::{Permissions, Verdict};
use crate::pipeline::hooks::{PreDecision, PreExecuteHook};
use crate::tool::{ToolError, ToolExecution};
use futures::future::BoxFuture;
use std::sync::Arc;

/// Decides each call before it runs: deny with the part no rule allows, ask with why.
pub struct PermissionHook(pub Arc<Permissions>);

impl PreExecuteHook for PermissionHook {
    fn name(&self) -> &str {
        "permissions"
    }

    fn decide(
        &self,
        execution: &Arc<ToolExecution>,
    ) -> BoxFuture<'static, Result<PreDecision, ToolError>> {
        let name = &execution.name;
        let decision = self.0.decide(name, &execution.arguments);
        let answer =
            match decision.decision {
                Verdict::Allow => PreDecision::Allow,
                Verdict::Deny => PreDecision::Deny(decision.denial(name).unwrap_or_else(|| {
                    format!("tool \"{name}\" is denied by the default permission")
                })),
                Verdict::Ask => PreDecision::Ask(decision.ask_reason(name)),
            };
        Box::pin(std::future::ready(Ok(answer)))
    }
}
