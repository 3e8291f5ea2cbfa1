//! Host → client requests: tool execution, classification, rendering, approval,
//! elicitation, hooks.

use crate::{
    AgentId, CodeDispatchNotification, ContentBlock, ContextMessage, ExecutionView, JsonValue,
    ToolExecutionResult,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// `client/executeTool` params.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct ExecuteToolParams {
    /// Which registration (a shadowing agent tool and a global one share a name).
    pub registration: String,
    /// Opaque execution token.
    pub token: String,
    /// The call id.
    pub call_id: String,
    /// Tool name.
    pub name: String,
    /// Frozen, validated arguments.
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

/// `client/executeTool` result.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, TS)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ExecuteToolResult {
    /// The canonical value (validated against the output declaration).
    pub value: JsonValue,
    /// Content to use instead of the default rendering.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub content: Option<Vec<ContentBlock>>,
    /// Presentation metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub meta: Option<JsonValue>,
    /// Contexts deferred until after the result.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[ts(as = "Option<Vec<ContextMessage>>", optional)]
    pub additional_contexts: Vec<ContextMessage>,
}

/// `client/classify` params.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, TS)]
pub struct ClassifyParams {
    /// Which registration.
    pub registration: String,
    /// Tool name.
    pub name: String,
    /// Arguments.
    pub arguments: JsonValue,
}

/// `client/render` params.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, TS)]
pub struct RenderParams {
    /// Which registration.
    pub registration: String,
    /// Tool name.
    pub name: String,
    /// Arguments.
    pub arguments: JsonValue,
    /// The canonical value.
    pub value: JsonValue,
}

/// `client/approve` params.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct ApproveParams {
    /// The call awaiting approval.
    pub execution: ExecutionView,
    /// Why approval is asked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub reason: Option<String>,
    /// The allow rule an `allowed-for-session` or `allowed-always` answer would add ("don't
    /// ask again for `npm run test:*`"); absent when no one rule covers the call (a shell
    /// command needing several), and then a session answer covers this exact call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub suggested_rule: Option<String>,
    /// How the permission rules decided the call (what asked), as `permissions/explain`
    /// tells it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub decision: Option<crate::PermissionDecision>,
}

/// `client/approve` result.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, TS)]
#[serde(deny_unknown_fields)]
#[serde(rename_all = "camelCase")]
pub struct ApproveResult {
    /// The user's answer.
    pub outcome: ApprovalOutcome,
    /// With `allowed-for-session`: the grant covers only the asking agent's calls.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub agent_only: bool,
    /// With `allowed-for-session` or `allowed-always`: the rule to add, when the client
    /// edited the suggested one (else `suggestedRule`, else this exact call).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub rule: Option<String>,
}

/// The user's answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "kebab-case")]
pub enum ApprovalOutcome {
    /// Run this call.
    AllowedOnce,
    /// Run it, and calls of the same shape (the rule) for the rest of this host's life.
    AllowedForSession,
    /// Run it, and add the rule to `permissions.persistTo` for every later host.
    AllowedAlways,
    /// Do not run it.
    Rejected,
    /// The dialog was dismissed.
    Cancelled,
}

/// `client/elicit` params: an ingested MCP server's `elicitation/create`, put to the user.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct ElicitParams {
    /// The `mcpServers` name of the server that asks.
    pub server: String,
    /// The call it asks during (its most recent call in flight); absent when none was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub execution: Option<ExecutionView>,
    /// `form`: fill in `requestedSchema`; `url`: open `url`.
    pub mode: ElicitMode,
    /// What the server tells the user.
    pub message: String,
    /// Form mode: a flat object schema of primitive fields (with their `default`s), as the
    /// server sent it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub requested_schema: Option<JsonValue>,
    /// URL mode: the page to open.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub url: Option<String>,
    /// URL mode: the server's id of this elicitation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub elicitation_id: Option<String>,
}

/// How the server wants the user's input.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "lowercase")]
pub enum ElicitMode {
    /// A form the client renders.
    Form,
    /// A page the user opens (credentials, payment, OAuth with a third party).
    Url,
}

/// `client/elicit` result, passed to the server as its `elicitation/create` result.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, TS)]
#[serde(deny_unknown_fields)]
pub struct ElicitResult {
    /// The user's answer.
    pub action: ElicitAction,
    /// With `accept` in form mode: the form's values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub content: Option<JsonValue>,
}

/// The user's answer to an elicitation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "lowercase")]
pub enum ElicitAction {
    /// Submitted (form) or agreed to open the page (URL).
    Accept,
    /// Explicitly refused.
    Decline,
    /// Dismissed without a choice.
    Cancel,
}

/// `hooks/subscribe` params.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, TS)]
pub struct SubscribeParams {
    /// `tools/pre-execute`, `tools/guard`, `tools/post-execute` or `tools/code-dispatch-log`.
    pub event: HookEvent,
    /// Only this agent's calls.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub agent: Option<AgentId>,
    /// Lower runs first (default 0).
    #[serde(default)]
    pub order: i32,
}

/// Hookable pipeline events.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
pub enum HookEvent {
    /// The allow/deny/ask gate.
    #[serde(rename = "tools/pre-execute")]
    PreExecute,
    /// Monotonic guards.
    #[serde(rename = "tools/guard")]
    Guard,
    /// Result inspection and replacement.
    #[serde(rename = "tools/post-execute")]
    PostExecute,
    /// The logged copy of each Code Mode sub-call (`tools/codeDispatch`).
    #[serde(rename = "tools/code-dispatch-log")]
    CodeDispatchLog,
}

/// `hooks/subscribe` result.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, TS)]
pub struct SubscribeResult {
    /// Pass to `hooks/unsubscribe`.
    pub subscription: String,
}

/// `hooks/unsubscribe` params.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, TS)]
pub struct UnsubscribeParams {
    /// The subscription.
    pub subscription: String,
}

/// `hooks/preExecute` and `hooks/guard` params.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, TS)]
pub struct HookParams {
    /// Which subscription.
    pub subscription: String,
    /// The call.
    pub execution: ExecutionView,
}

/// `hooks/postExecute` params.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, TS)]
pub struct PostHookParams {
    /// Which subscription.
    pub subscription: String,
    /// The call.
    pub execution: ExecutionView,
    /// Its result so far.
    pub result: ToolExecutionResult,
}

/// `hooks/codeDispatchLog` params: the `tools/codeDispatch` notification about to be sent.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, TS)]
pub struct CodeDispatchLogParams {
    /// Which subscription.
    pub subscription: String,
    /// The notification as the earlier stages left it.
    pub dispatch: CodeDispatchNotification,
}

/// `hooks/codeDispatchLog` answer: `{}` keeps the logged content, `{ content }` replaces
/// it (the program's value is never affected).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(deny_unknown_fields)]
pub struct CodeDispatchLogResult {
    /// Replacement content of the logged copy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub content: Option<Vec<ContentBlock>>,
}

/// Pre-execute decision.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum PreToolDecision {
    /// Continue.
    Allow,
    /// Refuse with a reason the model reads.
    Deny {
        /// Why.
        reason: String,
    },
    /// Ask the user (degrades to deny without an approver).
    Ask {
        /// Why.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        reason: Option<String>,
    },
}

/// Guard answer: `{}` abstains, `{ deny }` denies.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(deny_unknown_fields)]
pub struct GuardDecision {
    /// Final denial reason.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub deny: Option<String>,
}

/// Post-execute decision.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum PostToolDecision {
    /// Keep the result, optionally replacing content or value (never both).
    #[serde(rename_all = "camelCase")]
    Accept {
        /// Replacement content.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        content: Option<Vec<ContentBlock>>,
        /// Replacement value (revalidated and re-rendered).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        value: Option<JsonValue>,
        /// The success's `structuredContent` from now on. Without it, replacing the content
        /// or the value drops the MCP server's, which described the content replaced.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        structured_content: Option<JsonValue>,
        /// Contexts appended after tool-deferred ones.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        #[ts(as = "Option<Vec<ContextMessage>>", optional)]
        additional_contexts: Vec<ContextMessage>,
    },
    /// Turn the result into a valueless failure.
    #[serde(rename_all = "camelCase")]
    Block {
        /// What the model reads.
        feedback: BlockFeedback,
        /// The only contexts kept.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        #[ts(as = "Option<Vec<ContextMessage>>", optional)]
        additional_contexts: Vec<ContextMessage>,
    },
}

/// Block feedback: text or content blocks.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(untagged)]
pub enum BlockFeedback {
    /// Text.
    Text(String),
    /// Blocks.
    Blocks(Vec<ContentBlock>),
}

/// `client/openUrl` params: a page the user must open in a browser, such as a remote MCP
/// server's OAuth authorization page (the host waits for its redirect on loopback).
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct OpenUrlParams {
    /// The URL to open.
    pub url: String,
    /// Why, in words for the user.
    pub reason: String,
    /// The configured MCP server it is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub server: Option<String>,
}

/// `client/openUrl` result.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct OpenUrlResult {
    /// Whether the URL was shown or opened; `false` gives the authorization up at once.
    pub opened: bool,
}
