//! Conversions at the wire boundary: internal pipeline types ⇄ `dsh_tools_protocol` types.

use crate::pipeline::hooks::{BlockFeedback, PostDecision, PreDecision};
use crate::registry::RegisteredTool;
use crate::tool::{Outcome, ToolExecution, ToolExecutionResult};
use dsh_tools_protocol as wire;

/// The wire shape of a result.
pub fn result(result: &ToolExecutionResult) -> wire::ToolExecutionResult {
    let (value, error) = match &result.outcome {
        Outcome::Success(value) => (Some(serde_json::Value::clone(value)), None),
        Outcome::Failure(error) => {
            let info = error.code.map(|code| wire::ErrorInfo {
                name: code.class_name().into(),
                code: code.as_str().into(),
            });
            (
                None,
                Some(wire::ToolFailure {
                    message: error.message.clone(),
                    info,
                }),
            )
        }
    };
    wire::ToolExecutionResult {
        is_error: result.is_error(),
        value,
        error,
        content: result.content.clone(),
        meta: result.meta.clone(),
        additional_contexts: result.additional_contexts.clone(),
    }
}

/// The identity observers see.
pub fn execution_ref(execution: &ToolExecution) -> wire::ExecutionRef {
    wire::ExecutionRef {
        token: execution.token.to_string(),
        call_id: execution.call_id.to_string(),
        name: execution.name.to_string(),
        agent: execution.agent.as_ref().map(ToString::to_string),
        parent: execution.parent.map(|p| p.to_string()),
    }
}

/// What a scope sees of one tool.
pub fn tool_schema(tool: &RegisteredTool) -> wire::ToolSchema {
    let definition = &tool.definition;
    wire::ToolSchema {
        name: definition.name.to_string(),
        description: definition.description.clone(),
        input_schema: definition.input.json_schema().clone(),
        output_schema: definition.output.json_schema.clone(),
    }
}

/// The full view hooks and approvers see.
pub fn execution_view(execution: &ToolExecution) -> wire::ExecutionView {
    wire::ExecutionView {
        token: execution.token.to_string(),
        call_id: execution.call_id.to_string(),
        name: execution.name.to_string(),
        arguments: serde_json::Value::clone(&execution.arguments),
        agent: execution.agent.as_ref().map(ToString::to_string),
        parent: execution.parent.map(|p| p.to_string()),
    }
}

/// A client's pre-execute decision.
pub fn pre_decision(decision: wire::PreToolDecision) -> PreDecision {
    match decision {
        wire::PreToolDecision::Allow => PreDecision::Allow,
        wire::PreToolDecision::Deny { reason } => PreDecision::Deny(reason),
        wire::PreToolDecision::Ask { reason } => PreDecision::Ask(reason),
    }
}

/// A client's post-execute decision.
pub fn post_decision(decision: wire::PostToolDecision) -> PostDecision {
    match decision {
        wire::PostToolDecision::Accept {
            content,
            value,
            additional_contexts,
        } => PostDecision::Accept {
            content,
            value,
            additional_contexts,
        },
        wire::PostToolDecision::Block {
            feedback,
            additional_contexts,
        } => PostDecision::Block {
            feedback: match feedback {
                wire::BlockFeedback::Text(text) => BlockFeedback::Text(text),
                wire::BlockFeedback::Blocks(blocks) => BlockFeedback::Blocks(blocks),
            },
            additional_contexts,
        },
    }
}
