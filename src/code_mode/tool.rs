//! The reserved `run_code` tool: validates the description, runs the program in a fresh
//! isolate with a [`Bridge`], drains the bridge, and shapes `{ logs, result? }` or the
//! `code run failed (<kind>): <message>` failure.

use super::CodeMode;
use super::bridge::Bridge;
use crate::codegen;
use crate::json;
use crate::pipeline::ToolRuntime;
use crate::runtime::{RunFailure, RunRequest};
use crate::tool::{
    BodyOutput, ContentBlock, DefinitionError, HarnessCode, HostRole, Presence, Render, Renderer,
    ToolDefinition, ToolError, ToolExecution, ToolRole, ToolRunContext,
};
use dsh_tools_protocol::CodeLanguage;
use futures::future::BoxFuture;
use serde_json::{Value, json};
use std::sync::{Arc, Weak};
use tokio_util::sync::CancellationToken;

/// The Code Mode entry's name: the one place it is spelled.
pub const RUN_CODE: &str = "run_code";

/// `run_code`'s role: reserved, present under a code presentation, the one tool callable
/// directly there, and never a binding.
const ROLE: ToolRole = ToolRole::Host(HostRole {
    purpose: "Code Mode",
    presence: Presence::CodePresentation,
    code_entry: true,
});

/// Content of a run with neither output nor result.
pub const EMPTY_RUN: &str = "(run_code completed with no output)";

/// The `run_code` definition over `runtime` (held weakly: the runtime owns the definition).
pub fn definition(
    runtime: Weak<ToolRuntime>,
    code: Arc<CodeMode>,
) -> Result<ToolDefinition, DefinitionError> {
    ToolDefinition::builder(RUN_CODE)
        .role(ROLE)
        .description(codegen::run_code_description(""))
        .validated_input_schema(codegen::run_code_input_schema())
        .output_json_schema(json!({
            "type": "object",
            "properties": {
                "logs": { "type": "array", "items": { "type": "string" } },
                "result": {}
            },
            "required": ["logs"],
            "additionalProperties": false
        }))
        .render(Render::Custom(Arc::new(RunRenderer)))
        .body(move |ctx: ToolRunContext| {
            let (runtime, code) = (runtime.upgrade(), code.clone());
            async move {
                let runtime =
                    runtime.ok_or_else(|| ToolError::new("the tool runtime is shutting down"))?;
                run(runtime, code, ctx).await
            }
        })
}

async fn run(
    runtime: Arc<ToolRuntime>,
    code: Arc<CodeMode>,
    ctx: ToolRunContext,
) -> Result<BodyOutput, ToolError> {
    // First, so a refused run copies nothing and never waits.
    let cap = code.config.read().max_concurrent_runs;
    let _admitted = code.admission.admit(cap)?;
    let arguments = ctx.arguments();
    let source = arguments
        .get("code")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let described = arguments
        .get("description")
        .and_then(Value::as_str)
        .is_some_and(|d| !d.trim().is_empty());
    if !described {
        return Err(ToolError::new(
            "invalid description: expected a non-empty string",
        ));
    }
    let config = code.config.read().clone();
    let language = super::language_of(&runtime, ctx.execution.agent.as_ref(), &config);
    if !config.loads(language) {
        return Err(ToolError::new(format!(
            "Code Mode language \"{}\" has no runtime loaded in this host (codeRuntime.language / codeRuntime.languages)",
            super::language_name(language)
        )));
    }
    // The outer signal ends the run first; sub-calls are aborted only once it settled, so a
    // cancelled run reports `abort` rather than whatever its aborted sub-call made it throw.
    // `outer` forwards the signal to `abort` until this function returns.
    let outer = ctx.signal.to_token();
    let abort = outer.child_token();
    let settled = CancellationToken::new();
    // Should this future be dropped mid-run, its sub-calls are still aborted.
    let _abort_sub_calls_if_dropped = settled.clone().drop_guard();
    // The program binds what its scope sees as the run starts, and the host tools that are
    // bindings while their presence holds.
    let agent = ctx.execution.agent.as_ref();
    let mut tools: Vec<String> = runtime
        .registry()
        .view(agent)
        .tools()
        .iter()
        .map(|tool| tool.definition.name.to_string())
        .collect();
    let host = runtime.registry().host_bindings(agent);
    tools.extend(host.iter().map(|tool| tool.definition.name.to_string()));
    let bridge = Bridge::new(runtime, ctx.execution.clone(), settled, code.events());
    let request = RunRequest {
        code: source,
        limits: code.limits(),
        tools,
        host: Arc::new(bridge.clone()),
        abort,
    };
    let outcome = match language {
        CodeLanguage::Typescript => code.pool()?.run(request).await,
        CodeLanguage::Python => code.started_python_pool().await?.run(request).await,
    };
    for context in bridge.drain().await {
        ctx.defer_context(context);
    }
    match outcome.result {
        Ok(result) => {
            // The lines are moved into the value, not copied: a run's logs may be 64 MiB.
            let logs = outcome.logs.into_iter().map(Value::String).collect();
            let mut object = serde_json::Map::new();
            object.insert("logs".into(), Value::Array(logs));
            if let Some(result) = result {
                object.insert("result".into(), result);
            }
            Ok(BodyOutput::from(Value::Object(object)))
        }
        Err(failure) => Err(failed(&failure, outcome.logs)),
    }
}

/// `code run failed (<kind>): <message>` plus the captured lines, written into one buffer
/// of its final size (a run capped at many megabytes of output holds them once here).
fn failed(failure: &RunFailure, logs: Vec<String>) -> ToolError {
    let head = format!("code run failed ({}): {}", failure.kind, failure.message);
    if logs.is_empty() {
        return ToolError::harness(HarnessCode::CodeRunFailed, head);
    }
    const CAPTURED: &str = "\nCaptured output:\n";
    let lines: usize = logs.iter().map(|line| line.len() + 1).sum();
    let mut message = String::with_capacity(head.len() + CAPTURED.len() + lines);
    message.push_str(&head);
    message.push_str(CAPTURED);
    for (i, line) in logs.into_iter().enumerate() {
        if i > 0 {
            message.push('\n');
        }
        message.push_str(&line);
    }
    ToolError::harness(HarnessCode::CodeRunFailed, message)
}

/// Printed lines, then the rendered result (strings raw, other JSON pretty, `null` explicit).
struct RunRenderer;

impl Renderer for RunRenderer {
    fn render(
        &self,
        _: &ToolExecution,
        _: &str,
        value: &Value,
    ) -> BoxFuture<'static, Result<Vec<ContentBlock>, ToolError>> {
        let text = render_run(value);
        Box::pin(async move { Ok(vec![ContentBlock::text(text)]) })
    }
}

/// The model-facing text of a completed run.
pub fn render_run(value: &Value) -> String {
    let lines: Vec<&str> = value
        .get("logs")
        .and_then(Value::as_array)
        .map(|lines| lines.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let rendered;
    let result = match value.get("result") {
        None => None,
        Some(Value::String(text)) => Some(text.as_str()),
        Some(other) => {
            rendered = json::render_pretty(other);
            Some(rendered.as_str())
        }
    };
    let parts = || lines.iter().copied().chain(result);
    if parts().next().is_none() {
        return EMPTY_RUN.to_string();
    }
    // One buffer of the final size: a large run is not held once per line and once joined.
    let mut text = String::with_capacity(parts().map(|part| part.len() + 1).sum());
    for (i, part) in parts().enumerate() {
        if i > 0 {
            text.push('\n');
        }
        text.push_str(part);
    }
    text
}
