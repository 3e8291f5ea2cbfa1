//! Registry methods: register, unregister, reserve, schemas, get, restrict, presentAs, agents.

use crate::{AgentId, CodeLanguage, JsonValue, PresentationMode};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// What `tools/register` takes.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, TS)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ToolSpec {
    /// Unique within its layer.
    pub name: String,
    /// Model-facing description.
    #[serde(default)]
    pub description: String,
    /// DSL parameters (`ParameterSchemaSpec`); the host validates arguments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub parameters: Option<JsonValue>,
    /// Raw JSON Schema; the client owns input validation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub input_schema: Option<JsonValue>,
    /// Mandatory canonical output declaration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub output: Option<OutputSpec>,
    /// Cooperative deadline (ms, > 0, finite).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "number")]
    pub timeout_ms: Option<JsonValue>,
    /// `true`, `false` or `"ask"` (the host asks `client/classify` per call).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub concurrency_safe: Option<ConcurrencySpec>,
    /// The retry policy may repeat it.
    #[serde(default)]
    pub idempotent: bool,
    /// `"default"` or `"client"` (the host asks `client/render`).
    #[serde(default)]
    pub render: RenderSpec,
    /// Keep the description and schema out of the prompt until `search_tools` loads the tool
    /// (it stays visible and callable meanwhile); `tools.alwaysLoaded` overrides it.
    #[serde(default)]
    pub deferred: bool,
}

/// The output declaration: exactly one of `schema` (DSL) or `jsonSchema` (raw subset).
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, TS)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct OutputSpec {
    /// `ValueSchemaSpec`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub schema: Option<JsonValue>,
    /// Raw JSON Schema in the enforced subset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub json_schema: Option<JsonValue>,
}

/// `concurrencySafe`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(untagged)]
pub enum ConcurrencySpec {
    /// Always (`true`) or never (`false`).
    Fixed(bool),
    /// `"ask"`.
    Ask(AskTag),
}

/// The `"ask"` tag.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
pub enum AskTag {
    /// `"ask"`
    #[serde(rename = "ask")]
    Ask,
}

/// `render`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "lowercase")]
pub enum RenderSpec {
    /// Strings raw, other JSON pretty.
    #[default]
    Default,
    /// The client renders (`client/render`).
    Client,
}

/// `tools/register` params.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, TS)]
pub struct RegisterParams {
    /// The tool.
    pub tool: ToolSpec,
    /// Register for this agent alone (shadows a same-named global there).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub agent: Option<AgentId>,
}

/// Result of every method that creates a disposable registration.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, TS)]
pub struct RegistrationResult {
    /// Pass to `tools/unregister` to dispose exactly this registration.
    pub registration: String,
}

/// `tools/unregister` params.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, TS)]
pub struct UnregisterParams {
    /// Any id returned by register, reserve, restrict or presentAs.
    pub registration: String,
}

/// `tools/reserve` params.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, TS)]
pub struct ReserveParams {
    /// The capability name.
    pub name: String,
    /// The layer (global when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub agent: Option<AgentId>,
}

/// Params naming only a viewing scope.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema, TS)]
pub struct ScopeParams {
    /// The viewing agent (global when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub agent: Option<AgentId>,
}

/// Params naming a tool as one scope sees it.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, TS)]
pub struct NameParams {
    /// Tool name.
    pub name: String,
    /// The viewing agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub agent: Option<AgentId>,
}

/// What a scope sees of one tool.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct ToolSchema {
    /// Name.
    pub name: String,
    /// Description.
    pub description: String,
    /// JSON Schema of the arguments.
    pub input_schema: JsonValue,
    /// JSON Schema of the canonical value.
    pub output_schema: JsonValue,
}

/// `tools/restrict` params: exactly one of `allow` / `deny`.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, TS)]
pub struct RestrictParams {
    /// The restricted agent.
    pub agent: AgentId,
    /// Only these globals stay visible.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub allow: Option<Vec<String>>,
    /// These globals are hidden.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub deny: Option<Vec<String>>,
}

/// `tools/presentAs` params.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, TS)]
pub struct PresentAsParams {
    /// The agent.
    pub agent: AgentId,
    /// Its presentation.
    pub mode: PresentationMode,
    /// Its Code Mode language (default: `codeRuntime.language`); needs a loaded runtime.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub language: Option<CodeLanguage>,
}

/// `agents/open` params.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, TS)]
pub struct OpenAgentParams {
    /// New agent scope.
    pub agent: AgentId,
    /// Parent scope (restrictions intersect down the chain).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub parent: Option<AgentId>,
}

/// `agents/close` params.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, TS)]
pub struct CloseAgentParams {
    /// The agent to close, with everything it registered.
    pub agent: AgentId,
}

/// `tools/unload` params: deferred tools to take out of a scope's prompt again.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, TS)]
pub struct UnloadParams {
    /// The scope whose load state changes (global when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub agent: Option<AgentId>,
    /// Names to unload; names that are not loaded are ignored.
    pub names: Vec<String>,
}

/// `tools/listChanged` notification.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, TS)]
pub struct ListChangedNotification {
    /// The scope whose view changed (absent: the global layer, so every scope).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub agent: Option<AgentId>,
}
