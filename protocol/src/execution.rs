//! Execution methods and the results and events they produce.

use crate::{AgentId, ContentBlock, ContextMessage, JsonValue};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// `tools/execute` params.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct ExecuteParams {
    /// The model's call id.
    pub call_id: String,
    /// Tool name.
    pub name: String,
    /// Arguments (lossless JSON; an object for DSL tools).
    #[serde(default = "empty_object")]
    pub arguments: JsonValue,
    /// The calling agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub agent: Option<AgentId>,
    /// Also render the result as this provider's tool-result block (`providerResult`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub format: Option<crate::ProviderFormat>,
}

fn empty_object() -> JsonValue {
    JsonValue::Object(serde_json::Map::new())
}

/// One call of `tools/executeBatch`.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct BatchCall {
    /// The model's call id.
    pub call_id: String,
    /// Tool name.
    pub name: String,
    /// Arguments.
    #[serde(default = "empty_object")]
    pub arguments: JsonValue,
}

/// `tools/executeBatch` params.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct ExecuteBatchParams {
    /// Calls in model order.
    pub calls: Vec<BatchCall>,
    /// The calling agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub agent: Option<AgentId>,
    /// Bound of the rolling pool (default `tools.maxParallelSubCalls`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub max_parallel: Option<u32>,
    /// Each result also carries this provider's tool-result block (`providerResult`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub format: Option<crate::ProviderFormat>,
}

/// `tools/executionMode` params.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, TS)]
pub struct ExecutionModeParams {
    /// Tool name.
    pub name: String,
    /// Arguments.
    #[serde(default = "empty_object")]
    pub arguments: JsonValue,
    /// The viewing agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub agent: Option<AgentId>,
}

/// `parallel` or `exclusive`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "lowercase")]
pub enum ExecutionMode {
    /// May overlap other parallel calls.
    Parallel,
    /// Runs alone, as an ordering barrier.
    Exclusive,
}

/// The outcome of one execution.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct ToolExecutionResult {
    /// Failure flag.
    pub is_error: bool,
    /// The canonical value (successes only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub value: Option<JsonValue>,
    /// The failure (failures only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub error: Option<ToolFailure>,
    /// Model-facing content.
    pub content: Vec<ContentBlock>,
    /// Presentation metadata persisted with the result; a spilled result's carries
    /// `spill: SpillMeta`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub meta: Option<JsonValue>,
    /// Contexts for the loop to append after the result.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[ts(as = "Option<Vec<ContextMessage>>", optional)]
    pub additional_contexts: Vec<ContextMessage>,
    /// An MCP tool's `structuredContent`, whenever its server sent one (successes only;
    /// for a tool with an `outputSchema` it equals `value`). It describes `content`: a
    /// post-execute rewrite of the content or value drops it unless it sets its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub structured_content: Option<JsonValue>,
    /// The final content as the provider's tool-result block (with a `format`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub provider_result: Option<JsonValue>,
}

/// `meta.spill` of a result whose model-facing text was saved to a file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
pub struct SpillMeta {
    /// Absolute path of the file holding the whole text (`read` and `grep` accept it).
    pub path: String,
    /// Its size in bytes.
    pub bytes: u64,
}

/// A failure: the message the model reads and, for harness errors, their code.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
pub struct ToolFailure {
    /// Human-readable message (`content` is `Error: <message>`).
    pub message: String,
    /// Internal `{ name, code }` of a harness error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub info: Option<ErrorInfo>,
}

/// Error class and harness code (`UNKNOWN_TOOL`, `INVALID_ARGS`, ...).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
pub struct ErrorInfo {
    /// Error class name.
    pub name: String,
    /// Harness code.
    pub code: String,
}

/// Identity of one execution, as observers see it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct ExecutionRef {
    /// Opaque host token of this execution.
    pub token: String,
    /// The call id.
    pub call_id: String,
    /// Tool name.
    pub name: String,
    /// The calling agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub agent: Option<AgentId>,
    /// Token of the enclosing execution (Code Mode sub-calls).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub parent: Option<String>,
}

/// The full execution view sent to hooks and approvers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct ExecutionView {
    /// Opaque host token.
    pub token: String,
    /// The call id.
    pub call_id: String,
    /// Tool name.
    pub name: String,
    /// Frozen arguments.
    pub arguments: JsonValue,
    /// The calling agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub agent: Option<AgentId>,
    /// Token of the enclosing execution.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub parent: Option<String>,
}

/// `tools/result` notification: the observe-only final outcome.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, TS)]
pub struct ResultNotification {
    /// Which execution.
    pub execution: ExecutionRef,
    /// Its final result.
    pub result: ToolExecutionResult,
}

/// `tools/codeDispatchStart` notification.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, TS)]
pub struct CodeDispatchStartNotification {
    /// `<parentCallId>:code:<n>`.
    pub id: String,
    /// The outer call id.
    pub parent: String,
    /// Tool name.
    pub name: String,
    /// Arguments.
    pub arguments: JsonValue,
    /// Start time (ms since the Unix epoch).
    pub time: f64,
}

/// Start and end of a sub-call (ms since the Unix epoch).
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, TS)]
pub struct DispatchTime {
    /// Start.
    pub start: f64,
    /// End.
    pub end: f64,
}

/// `tools/codeDispatch` notification.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct CodeDispatchNotification {
    /// `<parentCallId>:code:<n>`.
    pub id: String,
    /// The outer call id.
    pub parent: String,
    /// Tool name.
    pub name: String,
    /// Arguments.
    pub arguments: JsonValue,
    /// Model-facing content of the sub-call.
    pub content: Vec<ContentBlock>,
    /// Failure flag.
    pub is_error: bool,
    /// Timing.
    pub time: DispatchTime,
}

/// `tools/codeDispatchStart` for a client with `codeDispatchEvents: "summary"`.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, TS)]
pub struct CodeDispatchStartSummary {
    /// `<parentCallId>:code:<n>`.
    pub id: String,
    /// The outer call id.
    pub parent: String,
    /// Tool name.
    pub name: String,
    /// Start time (ms since the Unix epoch).
    pub time: f64,
}

/// `tools/codeDispatch` for a client with `codeDispatchEvents: "summary"`.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct CodeDispatchSummary {
    /// `<parentCallId>:code:<n>`.
    pub id: String,
    /// The outer call id.
    pub parent: String,
    /// Tool name.
    pub name: String,
    /// Failure flag.
    pub is_error: bool,
    /// Timing.
    pub time: DispatchTime,
}

/// `code/log` notification: live program output.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct CodeLogNotification {
    /// The `run_code` call id.
    pub call_id: String,
    /// `log`, `info`, `warn`, `error` or `debug`.
    pub stream: String,
    /// One formatted line.
    pub text: String,
}

/// `tools/progress` notification (host → client, only with `capabilities.progress`): live
/// output or progress of a running call, top-level or Code Mode sub-call. Observe-only: the
/// call's result is what counts, and intermediate reports may be dropped (with a count).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct ProgressNotification {
    /// The top-level call id (the `run_code` call for a sub-call).
    pub call_id: String,
    /// The sub-call's `<callId>:code:<n>` id, when a Code Mode sub-call reports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub dispatch_id: Option<String>,
    /// What is reported.
    #[serde(flatten)]
    pub report: ProgressReport,
}

/// One live report, by `kind`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum ProgressReport {
    /// Output text as it arrived (coalesced), or a count of output reports dropped while the
    /// client was behind.
    Output(OutputReport),
    /// How far the call is.
    Progress(ProgressAmount),
}

/// `kind: "output"`: either `stream` and `text`, or `dropped` (reports left out since the
/// last one this call sent, because the client was reading too slowly) and `droppedBytes`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct OutputReport {
    /// `stdout` or `stderr`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub stream: Option<String>,
    /// The text since the previous report of this stream.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub text: Option<String>,
    /// Output reports of this call dropped since its last one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub dropped: Option<u64>,
    /// The text those dropped reports held, in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub dropped_bytes: Option<u64>,
}

/// `kind: "progress"` (and the `tools/reportProgress` a client tool sends).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct ProgressAmount {
    /// How far the call is (in the tool's own unit).
    pub progress: f64,
    /// The amount at which it is done, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub total: Option<f64>,
    /// What it is doing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub message: Option<String>,
}

/// `tools/reportProgress` notification (client → host): a client tool's progress, for the
/// execution `token` its `client/executeTool` carried. Reports for a finished (or unknown)
/// execution are ignored.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ReportProgressParams {
    /// The `token` of the `client/executeTool` request.
    pub token: String,
    /// How far the call is.
    pub progress: f64,
    /// The amount at which it is done, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub total: Option<f64>,
    /// What it is doing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub message: Option<String>,
}

/// `tools/prompt` result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
pub struct PromptAssembly {
    /// Prompt sections, by order.
    pub sections: Vec<PromptSection>,
    /// Function definitions for the model.
    pub tools: Vec<PromptTool>,
    /// What `tools.autoDefer` deferred in this scope, and why.
    #[serde(
        default,
        rename = "autoDeferred",
        skip_serializing_if = "Option::is_none"
    )]
    #[ts(optional)]
    pub auto_deferred: Option<crate::AutoDeferral>,
}

/// One prompt section.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
pub struct PromptSection {
    /// `tools:sdk`, `tools:code-only`, ...
    pub name: String,
    /// Sort key.
    pub order: i32,
    /// Text.
    pub text: String,
}

/// One function definition.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct PromptTool {
    /// Name.
    pub name: String,
    /// Description.
    pub description: String,
    /// JSON Schema of the arguments.
    pub input_schema: JsonValue,
}

/// `tools/presentCall` params.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, TS)]
pub struct PresentCallParams {
    /// Tool name.
    pub name: String,
    /// The call's arguments (as logged; malformed ones fall back to `null`).
    #[serde(default)]
    pub arguments: JsonValue,
    /// The viewing agent (so the card matches what executed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub agent: Option<AgentId>,
}

/// `tools/presentResult` params.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, TS)]
pub struct PresentResultParams {
    /// Tool name.
    pub name: String,
    /// The call's arguments.
    #[serde(default)]
    pub arguments: JsonValue,
    /// The durable result (`isError`, `content`; the value is not needed).
    pub result: ToolExecutionResult,
    /// `presentationMeta` persisted with the result (overrides `result.meta`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub meta: Option<JsonValue>,
    /// The viewing agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub agent: Option<AgentId>,
}
