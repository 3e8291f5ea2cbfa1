//! Model providers' request shapes (issue 45): `tools/prompt` and `tools/schemas` with a
//! `format`, what each shape weakened, automatic deferral, and results as tool-result blocks.

use crate::{AgentId, JsonValue, PromptSection};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// A model provider's request shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "kebab-case")]
pub enum ProviderFormat {
    /// Anthropic Messages: `{ name, description, input_schema }`, `tool_result` blocks.
    Anthropic,
    /// OpenAI Responses: `{ type: "function", name, description, parameters, strict }`.
    OpenaiResponses,
    /// OpenAI Chat Completions: `{ type: "function", function: { ... } }`.
    OpenaiChat,
    /// Gemini: one `{ functionDeclarations: [...] }` tool, OpenAPI-subset parameters.
    Gemini,
    /// MCP `tools/list` entries and `CallToolResult`.
    Mcp,
}

/// Anthropic's own tool search tool, which `anthropic` can use for deferred tools.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "lowercase")]
pub enum NativeToolSearch {
    /// `tool_search_tool_bm25_20251119`: natural-language queries.
    Bm25,
    /// `tool_search_tool_regex_20251119`: regular expressions.
    Regex,
}

/// `tools/prompt` params.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct PromptParams {
    /// The viewing agent (global when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub agent: Option<AgentId>,
    /// The provider shape of `tools` (absent: `PromptAssembly`, the host's own shape).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub format: Option<ProviderFormat>,
    /// With `anthropic` only: list deferred tools with `defer_loading: true` and this tool
    /// search tool instead of `search_tools`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub native_tool_search: Option<NativeToolSearch>,
}

/// `tools/schemas` params.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct SchemasParams {
    /// The viewing agent (global when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub agent: Option<AgentId>,
    /// The provider shape (absent: `ToolSchema[]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub format: Option<ProviderFormat>,
}

/// One thing a provider shape could not keep.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
pub struct SchemaChange {
    /// Where, as a JSON pointer into the tool's input schema (`""`: the tool itself).
    pub path: String,
    /// What was weakened and what the provider now accepts.
    pub change: String,
}

/// A tool whose provider shape is weaker than its schema.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct WeakenedTool {
    /// The tool.
    pub name: String,
    /// Left out of `tools`: the provider would refuse the request with it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub omitted: bool,
    /// Each weakening, in schema order.
    pub changes: Vec<SchemaChange>,
}

/// `tools/prompt` with a `format`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct ProviderPrompt {
    /// The shape of `tools`.
    pub format: ProviderFormat,
    /// Prompt sections, as in `PromptAssembly`.
    pub sections: Vec<PromptSection>,
    /// The tool list exactly as the provider's request takes it.
    pub tools: Vec<JsonValue>,
    /// Tools whose shape is weaker than their schema (none: every shape is lossless).
    pub weakened: Vec<WeakenedTool>,
    /// The Anthropic tool search tool that `tools` includes (with `nativeToolSearch` and
    /// at least one deferred tool).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub tool_search: Option<JsonValue>,
    /// What `tools.autoDefer` deferred in this scope, and why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub auto_deferred: Option<AutoDeferral>,
}

/// `tools/schemas` with a `format`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
pub struct ProviderTools {
    /// The shape of `tools`.
    pub format: ProviderFormat,
    /// The catalog as the provider's request takes it.
    pub tools: Vec<JsonValue>,
    /// Tools whose shape is weaker than their schema.
    pub weakened: Vec<WeakenedTool>,
}

/// `tools.autoDefer`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AutoDeferConfig {
    /// Past this many tokens (o200k_base) of tool definitions, whole MCP servers are
    /// deferred, largest first, until the rest fits.
    pub above_tokens: u64,
}

/// What automatic deferral did in one scope.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct AutoDeferral {
    /// The budget (`tools.autoDefer.aboveTokens`).
    pub above_tokens: u64,
    /// The tokenizer that measured (`o200k_base`).
    pub tokenizer: String,
    /// Tokens of the definitions that would be loaded without automatic deferral.
    pub tokens_before: u64,
    /// Tokens of the definitions still loaded.
    pub tokens_after: u64,
    /// The servers deferred, in the order chosen (largest first).
    pub servers: Vec<DeferredServer>,
}

/// One MCP server that automatic deferral deferred.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
pub struct DeferredServer {
    /// The `mcpServers` key.
    pub name: String,
    /// How many of its tools were deferred.
    pub tools: u64,
    /// Their tokens.
    pub tokens: u64,
}
