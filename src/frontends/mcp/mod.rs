//! `dsh-tools mcp`: the registry served to MCP clients over MCP's stdio transport (rmcp
//! server). `native` lists every visible tool, `code` lists only `run_code` (its
//! description carries the generated SDK), `both` lists both. Every call runs the full
//! pipeline through [`ToolRuntime::execute`], with the client's `notifications/cancelled`
//! as its abort signal. The pipeline's metrics (`tools/metrics` on the wire protocol) are
//! the resource [`METRICS_URI`], so an MCP client can read them too. Over Streamable HTTP
//! ([`http`]) every MCP session is a front of its own in an agent scope of its own. A call
//! whose request carries `_meta.progressToken` has its live output and progress sent as
//! `notifications/progress` ([`progress`]). An ingested server's elicitation during a call
//! goes to the calling scope's client ([`ForwardingElicitor`]), and so does the browser step
//! of a server's OAuth, as a URL elicitation ([`browser`]).

mod admission;
mod approvals;
mod browser;
mod elicit;
mod exits;
pub mod gate;
pub mod http;
mod progress;
mod replay;
mod session;

use crate::builtins::bash::session::ExecSessions;
use crate::code_mode::CodeMode;
use crate::codegen::{run_code_description_in, run_code_input_schema_in};
use crate::pipeline::ToolRuntime;
use crate::pipeline::wrappers::Metrics;
use crate::tool::{AgentId, Signal, ToolDefinition, ToolExecutionInput};
use dsh_tools_protocol::{CodeLanguage, PresentationMode};
pub use elicit::ForwardingElicitor;
use exits::ExitForwarder;
use progress::ProgressForwarder;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    InitializeResult, JsonObject, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ProgressToken, ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult,
    RequestParamsMeta, Resource, ResourceContents, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{NotificationContext, Peer, RequestContext, RoleServer, serve_server};
use rmcp::{ErrorData, ServerHandler};
use serde_json::Value;
use session::SessionScope;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::{Notify, broadcast};
use tokio_util::sync::CancellationToken;

/// The resource holding the per-tool metrics table, as JSON in the shape of the wire
/// protocol's `tools/metrics` result.
pub const METRICS_URI: &str = "dsh-tools://metrics";

/// Registry changes a slow session's announcer may fall behind by (then it announces once).
const CHANGES_BUFFERED: usize = 64;

/// The registry as an MCP server.
pub struct McpFront {
    runtime: Arc<ToolRuntime>,
    mode: PresentationMode,
    metrics: Arc<Metrics>,
    /// The Code Mode language of `run_code`'s description and SDK.
    language: CodeLanguage,
    calls: Arc<AtomicU64>,
    /// The agent scope it lists and calls in (`None`: the host's own, over stdio).
    scope: Option<AgentId>,
    /// Closes `scope` when the last clone of the session's front is dropped.
    session: Option<Arc<SessionScope>>,
    /// Registry changes (the scope they concern), for the sessions' announcers.
    changes: Option<broadcast::Sender<Option<AgentId>>>,
    /// The runtime's progress sink: calls whose client asked for progress.
    progress: Arc<ProgressForwarder>,
    /// Each scope's client, told when its exec sessions end.
    exits: Arc<ExitForwarder>,
}

impl McpFront {
    /// Serves `runtime` in `mode` (the registry's own presentation must match it, so that
    /// direct calls are admitted exactly when the tool is listed), and `metrics` (the table
    /// the runtime's metrics wrapper records into) as [`METRICS_URI`].
    pub fn new(runtime: Arc<ToolRuntime>, mode: PresentationMode, metrics: Arc<Metrics>) -> Self {
        let progress = Arc::new(ProgressForwarder::default());
        if runtime.set_progress_sink(progress.clone()).is_err() {
            tracing::warn!(target: "mcp", "the runtime already reports progress elsewhere: MCP clients get none");
        }
        let exits: Arc<ExitForwarder> = Arc::default();
        runtime.set_approver(Some(Arc::new(approvals::ElicitingApprover(exits.clone()))));
        McpFront {
            runtime,
            mode,
            metrics,
            language: CodeLanguage::Typescript,
            calls: Arc::new(AtomicU64::new(0)),
            scope: None,
            session: None,
            changes: None,
            progress,
            exits,
        }
    }

    /// The same front, telling each scope's client when its exec sessions end.
    pub fn forwarding_exits(self, exec: &ExecSessions) -> Self {
        exec.set_events(Some(Arc::new(self.exits.clone())));
        let exits = self.exits.clone();
        self.runtime.on_scopes_closed(Arc::new(move |scopes| {
            for scope in scopes {
                exits.disconnect(&Some(scope.clone()));
            }
        }));
        self
    }

    /// The same front, passing ingested servers' elicitations to its clients through
    /// `elicitor` (the one the host's MCP servers were started with).
    pub fn forwarding_elicitation(self, elicitor: &ForwardingElicitor) -> Self {
        elicitor.connect(self.exits.clone());
        self
    }

    /// The same front, its sessions announcing registry changes that concern their scope
    /// with `notifications/tools/list_changed` (the stdio [`serve`] announces its own).
    pub fn announcing(mut self) -> Self {
        let (changes, _) = broadcast::channel(CHANGES_BUFFERED);
        let sender = changes.clone();
        self.runtime.registry().on_change(Arc::new(move |scope| {
            let _ = sender.send(scope);
        }));
        self.changes = Some(changes);
        self
    }

    /// A front for one MCP session: the same runtime, mode and language in a fresh agent
    /// scope `agent` (a child of the host's own), closed once the front is dropped.
    pub fn session(&self, agent: AgentId) -> Result<McpFront, crate::registry::RegistryError> {
        let scope = SessionScope::open(&self.runtime, agent.clone())?;
        Ok(McpFront {
            runtime: self.runtime.clone(),
            mode: self.mode,
            metrics: self.metrics.clone(),
            language: self.language,
            calls: self.calls.clone(),
            scope: Some(agent),
            session: Some(Arc::new(scope)),
            changes: self.changes.clone(),
            progress: self.progress.clone(),
            exits: self.exits.clone(),
        })
    }

    /// The metrics table as [`METRICS_URI`]'s JSON text (numbers in canonical form, as
    /// the wire protocol prints them).
    fn metrics_json(&self) -> String {
        serde_json::to_value(self.metrics.snapshot())
            .map(|table| crate::json::render_compact(&table))
            .unwrap_or_else(|_| "[]".to_owned())
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
            // Deferred tools are listed once a `search_tools` call loaded them.
            let scope = self.scope.as_ref();
            for tool in self.runtime.registry().presented(scope).listed() {
                tools.push(mcp_tool(
                    &tool.definition,
                    tool.definition.description.clone(),
                ));
            }
        }
        if self.mode != PresentationMode::Native
            && let Some(run_code) = self.runtime.registry().code_entry(self.scope.as_ref())
        {
            let sdk = CodeMode::sdk_in(&self.runtime, self.scope.as_ref(), self.language);
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

    /// Runs one call; with `listener`, its progress goes to that client's token meanwhile.
    async fn call(
        &self,
        request: CallToolRequestParams,
        signal: Signal,
        listener: Option<(ProgressToken, Peer<RoleServer>)>,
    ) -> CallToolResult {
        let number = self.calls.fetch_add(1, Ordering::Relaxed) + 1;
        let call_id = format!("mcp-{number}");
        let arguments = request
            .arguments
            .map(Value::Object)
            .unwrap_or_else(|| Value::Object(Default::default()));
        let name: Arc<str> = Arc::from(request.name.as_ref());
        let forwarding =
            listener.map(|(token, peer)| self.progress.open(call_id.clone(), token, peer));
        let input = ToolExecutionInput::new(call_id, name.clone(), arguments)
            .with_signal(signal)
            .with_agent(self.scope.clone());
        let result = self.runtime.execute(input).await;
        if let Some(forwarding) = forwarding {
            forwarding.finish().await;
        }
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
        // The server's structuredContent as it sent it; else, for a tool listed with an
        // `outputSchema`, its value (which MCP then requires).
        answer.structured_content = result.structured_content.clone().or_else(|| {
            self.runtime
                .registry()
                .resolve(&name, self.scope.as_ref())
                .filter(|tool| object_schema(tool.definition.output.presented_schema()).is_some())
                .and_then(|_| result.value().cloned())
        });
        answer
    }
}

/// One definition as an MCP tool; `outputSchema` only when the output is an object schema
/// (MCP's requirement), in which case calls also return `structuredContent`.
fn mcp_tool(definition: &ToolDefinition, description: String) -> Tool {
    let input = mcp_input_schema(definition.input.json_schema());
    let mut tool = Tool::new(definition.name.to_string(), description, Arc::new(input));
    tool.output_schema = object_schema(definition.output.presented_schema()).map(Arc::new);
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
    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        if self.session.is_some() {
            self.exits.connect(self.scope.clone(), context.peer.clone());
        }
        let (Some(changes), Some(session)) = (&self.changes, &self.session) else {
            return;
        };
        let (mut changes, closed) = (changes.subscribe(), session.closed.clone());
        let (scope, peer) = (self.scope.clone(), context.peer);
        tokio::spawn(async move {
            loop {
                let change = tokio::select! {
                    () = closed.cancelled() => return,
                    change = changes.recv() => change,
                };
                let mut concerns = match change {
                    Ok(changed) => changed.is_none() || changed == scope,
                    Err(broadcast::error::RecvError::Lagged(_)) => true,
                    Err(broadcast::error::RecvError::Closed) => return,
                };
                // A burst (a server re-listed, many registrations) is announced once.
                loop {
                    match changes.try_recv() {
                        Ok(changed) => concerns |= changed.is_none() || changed == scope,
                        Err(broadcast::error::TryRecvError::Lagged(_)) => concerns = true,
                        Err(_) => break,
                    }
                }
                if concerns && peer.notify_tool_list_changed().await.is_err() {
                    return;
                }
            }
        });
    }

    // `logging` carries `bash/exited` (see `exits`), deprecated by SEP-2577 but still shown.
    #[allow(deprecated)]
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .enable_resources()
            .enable_logging()
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

    async fn list_resources(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let metrics = Resource::new(METRICS_URI, "metrics")
            .with_description(
                "Per-tool calls, errors and latency percentiles (ms) of this host's pipeline.",
            )
            .with_mime_type("application/json");
        Ok(ListResourcesResult::with_all_items(vec![metrics]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        if request.uri != METRICS_URI {
            let message = format!("unknown resource \"{}\"", request.uri);
            return Err(ErrorData::resource_not_found(message, None));
        }
        let contents = ResourceContents::text(self.metrics_json(), METRICS_URI)
            .with_mime_type("application/json");
        Ok(ReadResourceResult::new(vec![contents]).into())
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
            .resolve(&request.name, self.scope.as_ref())
            .is_none()
        {
            let message = format!("unknown tool \"{}\"", request.name);
            return Err(ErrorData::invalid_params(message, None));
        }
        let signal = Signal::new(context.ct.clone());
        // rmcp moves a request's `_meta` into its context; either place is honoured.
        let token = request
            .progress_token()
            .or_else(|| context.meta.get_progress_token());
        let listener = token.map(|token| (token, context.peer.clone()));
        Ok(CallToolResponse::Complete(
            self.call(request, signal, listener).await,
        ))
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
    let exits = front.exits.clone();
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
    exits.connect(None, peer.clone());
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
    use crate::policy::PolicySet;
    use crate::tool::{BodyOutput, ToolError, ToolRunContext};
    use dsh_tools_protocol::HostConfig;
    use serde_json::json;

    /// The metrics resource reports what the runtime's metrics wrapper recorded for calls
    /// made through the front's runtime (it used to be unreachable from an MCP client).
    #[tokio::test]
    async fn the_metrics_resource_reports_the_pipeline_metrics() {
        let config = HostConfig::default();
        let runtime = ToolRuntime::new(&config);
        let policy = PolicySet::install(&runtime, &config).unwrap();
        let front = McpFront::new(
            runtime.clone(),
            PresentationMode::Native,
            policy.metrics.clone(),
        );
        assert_eq!(front.metrics_json(), "[]");
        for (name, fails) in [("ok", false), ("broken", true)] {
            let tool = ToolDefinition::builder(name)
                .output(json!({ "type": "null" }))
                .body(move |_: ToolRunContext| async move {
                    match fails {
                        true => Err(ToolError::new("broken on purpose")),
                        false => Ok(BodyOutput::from(json!(null))),
                    }
                })
                .unwrap();
            runtime.register(tool, None).unwrap();
        }
        for name in ["ok", "ok", "broken", "missing"] {
            let input = ToolExecutionInput::new("c", name, json!({}));
            runtime.execute(input).await;
        }
        let table: Value = serde_json::from_str(&front.metrics_json()).unwrap();
        let counts: Vec<Value> = table
            .as_array()
            .unwrap()
            .iter()
            .map(|row| json!([row["name"], row["calls"], row["errors"]]))
            .collect();
        assert_eq!(counts, [json!(["broken", 1, 1]), json!(["ok", 2, 0])]);
    }

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
                "Execute a TypeScript program",
                "```ts\n",
            ),
            (CodeLanguage::Python, "Execute a Python program", "```py\n"),
        ] {
            let metrics = Arc::new(Metrics::default());
            let tools = McpFront::new(runtime.clone(), PresentationMode::Code, metrics)
                .with_language(language)
                .tools();
            let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
            let entry = runtime.registry().code_entry(None).unwrap();
            assert_eq!(names, [entry.definition.name.as_ref()]);
            let description = tools[0].description.as_deref().unwrap_or_default();
            assert!(
                description.starts_with(summary) && description.contains(fence),
                "{description}"
            );
        }
    }
}
