//! Conversions at the wire boundary: internal pipeline types ⇄ `dsh_tools_protocol` types.

use crate::codegen;
use crate::json;
use crate::pipeline::hooks::{BlockFeedback, DispatchLog, PostDecision, PreDecision};
use crate::providers::{self, ProviderFormat};
use crate::registry::RegisteredTool;
use crate::tool::{Outcome, ToolDefinition, ToolExecution, ToolExecutionResult};
use dsh_tools_protocol as wire;
use dsh_tools_protocol::{CodeLanguage, ContentBlock};
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
        structured_content: result.structured_content.clone(),
        provider_result: None,
    }
}

/// Which provider's tool-result block a written result also carries, and for which call.
#[derive(Clone, Copy, Debug)]
pub struct ResultShape<'a> {
    pub format: ProviderFormat,
    pub call_id: &'a str,
    pub name: &'a str,
}

/// The wire shape of a result as JSON text appended to `out` (the same fields and order as
/// [`wire::ToolExecutionResult`]), the canonical value and metadata rendered without
/// recursion (a value may nest as deep as the transport admits), so a result of many
/// megabytes is written once, into the buffer that leaves the host.
pub fn write_result_json(out: &mut String, result: &ToolExecutionResult) {
    write_shaped_result_json(out, result, None);
}

/// [`write_result_json`] with `providerResult`, the final content as `shape`'s provider
/// takes a tool result, after the other fields.
pub fn write_shaped_result_json(
    out: &mut String,
    result: &ToolExecutionResult,
    shape: Option<ResultShape<'_>>,
) {
    out.push_str(if result.is_error() {
        "{\"isError\":true"
    } else {
        "{\"isError\":false"
    });
    match &result.outcome {
        Outcome::Success(value) => {
            out.push_str(",\"value\":");
            json::write_compact(out, value);
        }
        Outcome::Failure(error) => {
            out.push_str(",\"error\":{\"message\":");
            json::write_json_string(out, &error.message);
            if let Some(code) = error.code {
                out.push_str(",\"info\":");
                json::append_serialized(
                    out,
                    &wire::ErrorInfo {
                        name: code.class_name().into(),
                        code: code.as_str().into(),
                    },
                );
            }
            out.push('}');
        }
    }
    out.push_str(",\"content\":");
    json::append_serialized(out, &result.content);
    if let Some(meta) = &result.meta {
        out.push_str(",\"meta\":");
        json::write_compact(out, meta);
    }
    if !result.additional_contexts.is_empty() {
        out.push_str(",\"additionalContexts\":");
        json::append_serialized(out, &result.additional_contexts);
    }
    if let Some(structured) = &result.structured_content {
        out.push_str(",\"structuredContent\":");
        json::write_compact(out, structured);
    }
    if let Some(shape) = shape {
        // MCP's block: the server's structuredContent, else the value.
        let structured = match &result.outcome {
            Outcome::Success(value) => result.structured_content.as_ref().or(Some(&**value)),
            Outcome::Failure(_) => None,
        };
        let block = providers::tool_result(
            shape.format,
            shape.call_id,
            shape.name,
            result.is_error(),
            &result.content,
            structured,
        );
        out.push_str(",\"providerResult\":");
        json::write_compact(out, &block);
    }
    out.push('}');
}

/// About the bytes of [`write_result_json`]'s text: its messages and text content (twice
/// for a success, whose value usually holds what its content renders), so a large result
/// is one allocation rather than a chain of doublings.
pub fn result_json_capacity(result: &ToolExecutionResult) -> usize {
    let content: usize = result
        .content
        .iter()
        .map(|block| match block {
            ContentBlock::Text(text) => text.text.len(),
            ContentBlock::Image(image) => image.data.len(),
            ContentBlock::Other(_) => 64,
        })
        .sum();
    let message = result.error().map_or(0, |error| error.message.len());
    let value = if result.is_error() { 0 } else { content };
    256 + message + content + value
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
        json::render_compact(definition.output.presented_schema()),
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
            structured_content,
            additional_contexts,
        } => PostDecision::Accept {
            content,
            value,
            structured_content,
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

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::tool::{HarnessCode, ToolError};
    use serde_json::json;
    use std::sync::Arc;

    /// The text written in place against serde's rendering of the wire type.
    fn check(result: &ToolExecutionResult) {
        let mut text = String::new();
        write_result_json(&mut text, result);
        assert_eq!(text, serde_json::to_string(&super::result(result)).unwrap());
        assert!(text.len() <= result_json_capacity(result) + 256, "{text}");
    }

    /// MCP's tool-result block carries the server's `structuredContent` of a tool whose
    /// value is text, and an object value otherwise.
    #[test]
    fn the_mcp_block_carries_the_servers_structured_content_else_an_object_value() {
        let block = |result: &ToolExecutionResult| {
            let mut text = String::new();
            let shape = ResultShape {
                format: ProviderFormat::Mcp,
                call_id: "c",
                name: "t",
            };
            write_shaped_result_json(&mut text, result, Some(shape));
            let written: Value = serde_json::from_str(&text).unwrap();
            written["providerResult"]["structuredContent"].clone()
        };
        let mut text = ToolExecutionResult {
            outcome: Outcome::Success(Arc::new(json!("sunny"))),
            content: vec![ContentBlock::text("sunny")],
            meta: None,
            additional_contexts: Vec::new(),
            structured_content: None,
        };
        assert_eq!(block(&text), Value::Null);
        text.structured_content = Some(json!({ "sky": "clear" }));
        assert_eq!(block(&text), json!({ "sky": "clear" }));
        text.structured_content = None;
        text.outcome = Outcome::Success(Arc::new(json!({ "n": 1 })));
        assert_eq!(block(&text), json!({ "n": 1 }));
    }

    #[test]
    fn results_written_in_place_match_the_wire_type() {
        let context = serde_json::from_value(json!({
            "role": "user", "content": "note \"quoted\"\n", "source": { "kind": "plugin" }
        }))
        .unwrap();
        check(&ToolExecutionResult {
            outcome: Outcome::Success(Arc::new(json!({ "a": [1, "é\u{1}", null], "b": {} }))),
            content: vec![ContentBlock::text("a\tb")],
            meta: Some(json!({ "card": { "kind": "x" } })),
            additional_contexts: vec![context],
            structured_content: Some(json!({ "n": 1.5, "s": "\"x\"" })),
        });
        check(&ToolExecutionResult::failure(ToolError::new(
            "plain \\ failure",
        )));
        check(&ToolExecutionResult::harness(
            HarnessCode::InvalidArgs,
            "bad \"args\"\n\u{7f}😀",
        ));
    }
}
