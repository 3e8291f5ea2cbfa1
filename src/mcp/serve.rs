//! `dsh-tools mcp`: the registry served to MCP clients over MCP's stdio transport (rmcp
//! server). `native` lists every visible tool, `code` lists only `run_code` (its
//! description carries the generated SDK), `both` lists both. Every call runs the full
//! pipeline through [`ToolRuntime::execute`], with the client's `notifications/cancelled`
//! as its abort signal.

use crate::code_mode::CodeMode;
use crate::codegen::{run_code_description_in, run_code_input_schema_in};
use crate::pipeline::ToolRuntime;
use crate::registry::RUN_CODE;
use crate::tool::{Signal, ToolDefinition, ToolExecutionInput};
use dsh_tools_protocol::{CodeLanguage, PresentationMode};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    InitializeResult, JsonObject, ListToolsResult, PaginatedRequestParams, ServerCapabilities,
    ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RoleServer, serve_server};
use rmcp::{ErrorData, ServerHandler};
use serde_json::Value;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

/// The registry as an MCP server.
pub struct McpFront {
    runtime: Arc<ToolRuntime>,
    mode: PresentationMode,
    /// The Code Mode language of `run_code`'s description and SDK.
    language: CodeLanguage,
    calls: AtomicU64,
}

impl McpFront {
    /// Serves `runtime` in `mode` (the registry's own presentation must match it, so that
    /// direct calls are admitted exactly when the tool is listed).
    pub fn new(runtime: Arc<ToolRuntime>, mode: PresentationMode) -> Self {
        McpFront {
            runtime,
            mode,
            language: CodeLanguage::Typescript,
            calls: AtomicU64::new(0),
        }
    }

    /// The same front with `run_code` described (and its SDK rendered) in `language`.
    pub fn with_language(mut self, language: CodeLanguage) -> Self {
        self.language = language;
        self
    }

    /// The tools an MCP client sees, in registry order (`run_code` last).
    pub fn tools(&self) -> Vec<Tool> {
        let mut tools = Vec::new();
        if self.mode != PresentationMode::Code {
            for tool in self.runtime.registry().visible(None) {
                tools.push(mcp_tool(
                    &tool.definition,
                    tool.definition.description.clone(),
                ));
            }
        }
        if self.mode != PresentationMode::Native
            && let Some(run_code) = self.runtime.registry().resolve(RUN_CODE, None)
        {
            let sdk = CodeMode::sdk_in(&self.runtime, None, self.language);
            let mut tool = mcp_tool(
                &run_code.definition,
                run_code_description_in(self.language, &sdk),
            );
            tool.input_schema =
                Arc::new(mcp_input_schema(&run_code_input_schema_in(self.language)));
            tools.push(tool);
        }
        tools
    }

    async fn call(&self, request: CallToolRequestParams, signal: Signal) -> CallToolResult {
        let number = self.calls.fetch_add(1, Ordering::Relaxed) + 1;
        let arguments = request
            .arguments
            .map(Value::Object)
            .unwrap_or_else(|| Value::Object(Default::default()));
        let name: Arc<str> = Arc::from(request.name.as_ref());
        let input = ToolExecutionInput::new(format!("mcp-{number}"), name.clone(), arguments)
            .with_signal(signal);
        let result = self.runtime.execute(input).await;
        let content: Vec<ContentBlock> = result
            .content
            .iter()
            .map(|block| {
                serde_json::to_value(block)
                    .ok()
                    .and_then(|raw| serde_json::from_value(raw).ok())
                    .unwrap_or_else(|| {
                        ContentBlock::text(serde_json::to_string(block).unwrap_or_default())
                    })
            })
            .collect();
        if result.is_error() {
            return CallToolResult::error(content);
        }
        let mut answer = CallToolResult::success(content);
        let structured = self
            .runtime
            .registry()
            .resolve(&name, None)
            .is_some_and(|tool| object_schema(&tool.definition.output.json_schema).is_some());
        if structured {
            answer.structured_content = result.value().cloned();
        }
        answer
    }
}

/// One definition as an MCP tool; `outputSchema` only when the output is an object schema
/// (MCP's requirement), in which case calls also return `structuredContent`.
fn mcp_tool(definition: &ToolDefinition, description: String) -> Tool {
    let input = mcp_input_schema(definition.input.json_schema());
    let mut tool = Tool::new(definition.name.to_string(), description, Arc::new(input));
    tool.output_schema = object_schema(&definition.output.json_schema).map(Arc::new);
    tool
}

/// MCP clients require `inputSchema` to be an object schema with `"type": "object"`
/// (the Python SDK rejects the whole listing otherwise): a schema without `type` gets it
/// prepended, a schema of another type becomes a plain object schema.
fn mcp_input_schema(schema: &Value) -> JsonObject {
    let object = || Value::from("object");
    match schema {
        Value::Object(schema) if schema.get("type") == Some(&object()) => schema.clone(),
        Value::Object(schema) if !schema.contains_key("type") => {
            let mut typed = JsonObject::new();
            typed.insert("type".into(), object());
            typed.extend(schema.clone());
            typed
        }
        _ => as_object(serde_json::json!({ "type": "object" })),
    }
}

fn object_schema(schema: &Value) -> Option<JsonObject> {
    match schema {
        Value::Object(object) if object.get("type") == Some(&Value::from("object")) => {
            Some(object.clone())
        }
        _ => None,
    }
}

fn as_object(schema: Value) -> JsonObject {
    match schema {
        Value::Object(object) => object,
        _ => JsonObject::new(),
    }
}

impl ServerHandler for McpFront {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .build();
        InitializeResult::new(capabilities)
            .with_server_info(Implementation::new("dsh-tools", env!("CARGO_PKG_VERSION")))
    }

    async fn list_tools(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        // MCP makes an unknown tool a protocol error; a known tool that this presentation
        // does not admit directly still runs, so the model reads the pipeline's message.
        if self
            .runtime
            .registry()
            .resolve(&request.name, None)
            .is_none()
        {
            let message = format!("unknown tool \"{}\"", request.name);
            return Err(ErrorData::invalid_params(message, None));
        }
        let signal = Signal::new(context.ct.clone());
        Ok(CallToolResponse::Complete(self.call(request, signal).await))
    }
}

/// Why serving ended abnormally.
#[derive(Debug, thiserror::Error)]
#[error("MCP client session failed: {0}")]
pub struct ServeError(String);

/// Serves one MCP client on `input`/`output` until it disconnects or `stop` fires.
/// Registry changes are announced with `notifications/tools/list_changed` (bursts coalesce).
pub async fn serve<R, W>(
    front: McpFront,
    input: R,
    output: W,
    stop: CancellationToken,
) -> Result<(), ServeError>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    let runtime = front.runtime.clone();
    let session = tokio::select! {
        () = stop.cancelled() => return Ok(()),
        session = serve_server(front, (input, output)) => {
            session.map_err(|e| ServeError(e.to_string()))?
        }
    };
    let changed = Arc::new(Notify::new());
    let on_change = changed.clone();
    runtime
        .registry()
        .on_change(Arc::new(move |_| on_change.notify_one()));
    let peer = session.peer().clone();
    let announcer = tokio::spawn(async move {
        loop {
            changed.notified().await;
            if peer.notify_tool_list_changed().await.is_err() {
                break;
            }
        }
    });
    let cancel = session.cancellation_token();
    let ended = tokio::select! {
        () = stop.cancelled() => {
            cancel.cancel();
            Ok(())
        }
        ended = session.waiting() => ended.map(|_| ()).map_err(|e| ServeError(e.to_string())),
    };
    announcer.abort();
    ended
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn input_schemas_become_object_schemas() {
        let cases = [
            (
                json!({ "type": "object", "properties": {} }),
                json!({ "type": "object", "properties": {} }),
            ),
            (json!({}), json!({ "type": "object" })),
            (
                json!({ "allOf": [{ "type": "object" }] }),
                json!({ "type": "object", "allOf": [{ "type": "object" }] }),
            ),
            (json!({ "type": "string" }), json!({ "type": "object" })),
            (json!(true), json!({ "type": "object" })),
        ];
        for (schema, expected) in cases {
            assert_eq!(
                Value::Object(mcp_input_schema(&schema)),
                expected,
                "{schema}"
            );
        }
    }

    #[test]
    fn run_code_is_described_in_the_configured_language() {
        let mut config = dsh_tools_protocol::HostConfig::default();
        config.tools.mode = PresentationMode::Code;
        let runtime = ToolRuntime::new(&config);
        CodeMode::install(&runtime, config.code_runtime.clone()).unwrap();
        for (language, summary, fence) in [
            (
                CodeLanguage::Typescript,
                "Run a TypeScript program",
                "```ts\n",
            ),
            (CodeLanguage::Python, "Run a Python program", "```py\n"),
        ] {
            let tools = McpFront::new(runtime.clone(), PresentationMode::Code)
                .with_language(language)
                .tools();
            let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
            assert_eq!(names, ["run_code"]);
            let description = tools[0].description.as_deref().unwrap_or_default();
            assert!(
                description.starts_with(summary) && description.contains(fence),
                "{description}"
            );
        }
    }
}
