//! Approvals over MCP: an `ask` is put to the MCP client of the calling scope as a form
//! elicitation (`elicitation/create`) with one choice, `decision`: allow once, allow for
//! this session, allow always, or reject. A session answer is a grant narrowed to that MCP
//! session's scope (over HTTP every session has its own), so it ends with the session. A
//! client that did not declare form elicitation cannot be asked: the call is refused
//! saying so, as a host without an approver refuses it.

use super::exits::ExitForwarder;
use crate::pipeline::hooks::{Approval, ApprovalOutcome, ApprovalRequest, Approver};
use crate::tool::ToolExecution;
use futures::future::BoxFuture;
use rmcp::model::{ElicitRequestParams, ElicitationAction, ElicitationSchema, EnumSchema};
use rmcp::service::ElicitationMode;
use std::sync::Arc;

/// The choices, as the form offers them (value, title).
const CHOICES: [(&str, &str, ApprovalOutcome); 4] = [
    ("allow-once", "Allow once", ApprovalOutcome::AllowedOnce),
    (
        "allow-for-session",
        "Allow for this session",
        ApprovalOutcome::AllowedForSession,
    ),
    (
        "allow-always",
        "Always allow",
        ApprovalOutcome::AllowedAlways,
    ),
    ("reject", "Reject", ApprovalOutcome::Rejected),
];

/// Asks each scope's MCP client.
pub struct ElicitingApprover(pub Arc<ExitForwarder>);

impl Approver for ElicitingApprover {
    fn approve(
        &self,
        execution: &Arc<ToolExecution>,
        request: ApprovalRequest,
    ) -> BoxFuture<'static, Approval> {
        let peer = self.0.peer(&execution.agent);
        let signal = execution.signal.clone();
        let scoped = execution.agent.is_some();
        let message = message(execution, &request);
        Box::pin(async move {
            let Some(peer) = peer else {
                return unavailable("no MCP client is connected for this call's session");
            };
            if !peer
                .supported_elicitation_modes()
                .contains(&ElicitationMode::Form)
            {
                return unavailable("the MCP client did not declare form elicitation");
            }
            let Some(schema) = form() else {
                return unavailable("the approval form could not be built");
            };
            let params = ElicitRequestParams::FormElicitationParams {
                meta: None,
                message,
                requested_schema: schema,
            };
            let answer = tokio::select! {
                answer = peer.create_elicitation(params) => answer,
                () = signal.aborted() => return ApprovalOutcome::Cancelled.into(),
            };
            let outcome = match answer {
                Ok(result) => match result.action {
                    ElicitationAction::Accept => chosen(result.content.as_ref()),
                    ElicitationAction::Decline => ApprovalOutcome::Rejected,
                    // Cancel, and any action a later revision adds: not an answer.
                    _ => ApprovalOutcome::Cancelled,
                },
                Err(error) => {
                    tracing::warn!(target: "mcp", "approval by elicitation failed: {error}");
                    ApprovalOutcome::Cancelled
                }
            };
            Approval {
                outcome,
                // Over HTTP a session is a scope: its grants end with it.
                agent_only: scoped,
                rule: None,
                unavailable: None,
            }
        })
    }
}

fn unavailable(why: &str) -> Approval {
    Approval {
        unavailable: Some(why.to_owned()),
        ..ApprovalOutcome::Cancelled.into()
    }
}

/// What the user reads: why, the call, and what a "for this session" answer would cover.
fn message(execution: &ToolExecution, request: &ApprovalRequest) -> String {
    let name = &execution.name;
    let mut text = request
        .reason
        .clone()
        .unwrap_or_else(|| format!("tool \"{name}\" requires approval"));
    let arguments = crate::json::render_compact(&execution.arguments);
    text.push_str(&format!("\n\nCall: {name} {arguments}"));
    match &request.suggested_rule {
        Some(rule) => text.push_str(&format!("\nA session or always answer allows: {rule}")),
        None => text.push_str("\nA session or always answer allows this exact call."),
    }
    text
}

fn form() -> Option<ElicitationSchema> {
    let values = CHOICES.iter().map(|(v, _, _)| v.to_string()).collect();
    let titles = CHOICES.iter().map(|(_, t, _)| t.to_string()).collect();
    let choice = EnumSchema::builder(values)
        .enum_titles(titles)
        .ok()?
        .build();
    ElicitationSchema::builder()
        .required_enum_schema("decision", choice)
        .build()
        .ok()
}

fn chosen(content: Option<&serde_json::Value>) -> ApprovalOutcome {
    let decision = content
        .and_then(|c| c.get("decision"))
        .and_then(|d| d.as_str());
    CHOICES
        .iter()
        .find(|(value, _, _)| Some(*value) == decision)
        .map_or(ApprovalOutcome::Cancelled, |(_, _, outcome)| *outcome)
}
