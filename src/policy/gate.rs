//! The permission gate: a pre-execute listener that decides each call with the host's rule
//! book. A denial carries its decision record in the result's `meta.permission`, so a UI can
//! say which rule, from which file, refused which part.

use super::book::{Book, wire_decision};
use super::permissions::Verdict;
use crate::pipeline::hooks::{PreDecision, PreExecuteHook};
use crate::tool::{ToolError, ToolExecution};
use futures::future::BoxFuture;
use std::sync::Arc;

/// The rule book as a pre-execute listener.
pub struct PermissionGate(pub Arc<Book>);

impl PreExecuteHook for PermissionGate {
    fn name(&self) -> &str {
        "permissions"
    }

    fn decide(
        &self,
        execution: &Arc<ToolExecution>,
    ) -> BoxFuture<'static, Result<PreDecision, ToolError>> {
        let decision = self.0.decide(execution);
        let name = &execution.name;
        let verdict = match decision.decision {
            Verdict::Allow => PreDecision::Allow,
            Verdict::Ask => PreDecision::Ask(decision.ask_reason(name)),
            Verdict::Deny => PreDecision::Refuse {
                reason: decision
                    .denial(name)
                    .unwrap_or_else(|| format!("tool \"{name}\" is denied")),
                meta: serde_json::json!({ "permission": wire_decision(&decision) }),
            },
        };
        Box::pin(std::future::ready(Ok(verdict)))
    }
}
