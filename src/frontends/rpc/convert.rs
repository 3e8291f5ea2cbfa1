//! Conversions at the wire boundary: internal pipeline types ⇄ `dsh_tools_protocol` types.

use crate::codegen;
use crate::json;
use crate::pipeline::hooks::{BlockFeedback, DispatchLog, PostDecision, PreDecision};
use crate::registry::RegisteredTool;
use crate::tool::{Outcome, ToolDefinition, ToolExecution, ToolExecutionResult};
use dsh_tools_protocol as wire;
use dsh_tools_protocol::CodeLanguage;
use serde_json::Value;
use serde_json::value::RawValue;

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

/// The wire shape of a result as JSON text (the same fields and order as
/// [`wire::ToolExecutionResult`]), with the canonical value and metadata rendered without
/// recursion: a value may nest as deep as the transport admits.
pub fn result_json(result: &ToolExecutionResult) -> Box<RawValue> {
    let mut text = format!("{{\"isError\":{}", result.is_error());
    match &result.outcome {
        Outcome::Success(value) => {
            text.push_str(",\"value\":");
            text.push_str(&json::render_compact(value));
        }
        Outcome::Failure(error) => {
            let info = error.code.map(|code| wire::ErrorInfo {
                name: code.class_name().into(),
                code: code.as_str().into(),
            });
            let failure = wire::ToolFailure {
                message: error.message.clone(),
                info,
            };
            text.push_str(",\"error\":");
            text.push_str(&serialized(&failure));
        }
    }
    text.push_str(",\"content\":");
    text.push_str(&serialized(&result.content));
    if let Some(meta) = &result.meta {
        text.push_str(",\"meta\":");
        text.push_str(&json::render_compact(meta));
    }
    if !result.additional_contexts.is_empty() {
        text.push_str(",\"additionalContexts\":");
        text.push_str(&serialized(&result.additional_contexts));
    }
    text.push('}');
    raw_json(text)
}

/// Compact JSON of a protocol value (`null` if it cannot be serialized, which protocol
/// types always can).
fn serialized(value: &impl serde::Serialize) -> String {
    serde_json::to_string(value).unwrap_or_else(|_| "null".into())
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

/// What a scope sees of one tool (a `ToolSchema`), as JSON text built without recursion:
/// schemas may nest as deep as the transport admits, and `Value`'s own clone, serializer
/// and drop recurse once per level.
pub fn tool_schema(tool: &RegisteredTool) -> Box<RawValue> {
    let definition = &tool.definition;
    schema_of(
        definition,
        &definition.description,
        definition.input.json_schema(),
    )
}

/// [`tool_schema`] of `run_code` with its description and input schema in `language`.
pub fn run_code_schema(tool: &RegisteredTool, language: CodeLanguage) -> Box<RawValue> {
    schema_of(
        &tool.definition,
        &codegen::run_code_description_in(language, ""),
        &codegen::run_code_input_schema_in(language),
    )
}

fn schema_of(definition: &ToolDefinition, description: &str, input: &Value) -> Box<RawValue> {
    let text = format!(
        "{{\"name\":{},\"description\":{},\"inputSchema\":{},\"outputSchema\":{}}}",
        json::render_compact(&Value::String(definition.name.to_string())),
        json::render_compact(&Value::String(description.to_owned())),
        json::render_compact(input),
        json::render_compact(&definition.output.json_schema),
    );
    raw_json(text)
}

/// A JSON array of already rendered elements.
pub fn raw_array(elements: &[Box<RawValue>]) -> Box<RawValue> {
    let parts: Vec<&str> = elements.iter().map(|e| e.get()).collect();
    raw_json(format!("[{}]", parts.join(",")))
}

/// Wraps JSON text rendered by the `json` module. Checking it costs one iterative scan
/// (serde_json skips raw values without recursing); text that somehow fails the check
/// becomes `null` rather than a panic.
pub fn raw_json(text: String) -> Box<RawValue> {
    RawValue::from_string(text).unwrap_or_else(|_| RawValue::NULL.to_owned())
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

/// A sub-call's logged outcome as its `tools/codeDispatch` notification.
pub fn dispatch_notification(log: DispatchLog) -> wire::CodeDispatchNotification {
    let DispatchLog {
        id,
        parent,
        name,
        arguments,
        content,
        is_error,
        time: (start, end),
    } = log;
    wire::CodeDispatchNotification {
        id,
        parent,
        name,
        arguments,
        content,
        is_error,
        time: wire::DispatchTime { start, end },
    }
}
