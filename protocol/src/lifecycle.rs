//! `initialize` / `shutdown` shapes (LSP-style lifecycle).

use crate::{HostConfig, SandboxReport};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// `initialize` params.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct InitializeParams {
    /// Must be `"1"`.
    pub protocol_version: String,
    /// Who the client is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub client_info: Option<PeerInfo>,
    /// What the client can answer when the host asks.
    #[serde(default)]
    pub capabilities: ClientCapabilities,
    /// Host configuration, merged over `--config FILE`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub config: Option<serde_json::Value>,
}

/// Name and version of a peer.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema, TS)]
pub struct PeerInfo {
    /// Program name.
    pub name: String,
    /// Program version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub version: Option<String>,
}

/// What the client answers when the host asks (protocol section 6).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct ClientCapabilities {
    /// The client executes the tools it registers (`client/executeTool`).
    #[serde(default)]
    pub execute_tools: bool,
    /// The client answers `client/approve`.
    #[serde(default)]
    pub approval: bool,
    /// The client answers `client/elicit` (ingested MCP servers' elicitations) in these
    /// modes; absent, the host declares no elicitation to the servers and declines theirs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub elicitation: Option<ElicitationCapability>,
    /// The client answers `client/openUrl`: it shows a URL to its user (a remote MCP
    /// server's OAuth authorization page) to open in a browser.
    #[serde(default)]
    pub open_url: bool,
    /// The client answers `hooks/*` for its subscriptions.
    #[serde(default)]
    pub hooks: bool,
    /// How much of each Code Mode sub-call the client is sent (default `full`).
    #[serde(default)]
    pub code_dispatch_events: CodeDispatchEvents,
    /// The client wants `tools/progress`: live output and progress of running calls.
    #[serde(default)]
    pub progress: bool,
    /// Every `tools/result` also carries the result as this provider's tool-result block.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub result_format: Option<crate::ProviderFormat>,
}

/// The elicitation modes a client answers (`{}` is form mode alone, as in MCP).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(deny_unknown_fields)]
pub struct ElicitationCapability {
    /// Forms (`requestedSchema`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "{ [key in string]?: JsonValue }")]
    #[schemars(with = "Option<serde_json::Map<String, serde_json::Value>>")]
    pub form: Option<Present>,
    /// Pages to open (`url`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "{ [key in string]?: JsonValue }")]
    #[schemars(with = "Option<serde_json::Map<String, serde_json::Value>>")]
    pub url: Option<Present>,
}

impl ElicitationCapability {
    /// Whether forms are answered (also when neither mode is named).
    pub fn answers_forms(&self) -> bool {
        self.form.is_some() || self.url.is_none()
    }

    /// Whether URLs are answered.
    pub fn answers_urls(&self) -> bool {
        self.url.is_some()
    }
}

/// An empty object that marks a mode as supported (its keys, reserved for settings, are
/// ignored).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Present {}

/// What a client is sent of Code Mode sub-calls: a front end that does not render them
/// need not pay to parse them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "lowercase")]
pub enum CodeDispatchEvents {
    /// `tools/codeDispatchStart`, `tools/codeDispatch` and each sub-call's `tools/result`,
    /// with arguments and content.
    #[default]
    Full,
    /// `tools/codeDispatchStart` and `tools/codeDispatch` with ids, tool, timing and
    /// `isError` only; no `tools/result` for sub-calls.
    Summary,
    /// Nothing per sub-call: the `run_code` result and `code/log` only.
    None,
}

/// `initialize` result.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct InitializeResult {
    /// Always `"1"`.
    pub protocol_version: String,
    /// The host's name and version.
    pub server_info: PeerInfo,
    /// What the host offers.
    pub capabilities: HostCapabilities,
}

/// What the host offers.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct HostCapabilities {
    /// Presentation modes the host can assemble.
    pub modes: Vec<String>,
    /// Languages with a Code Mode runtime in this host.
    pub code_languages: Vec<String>,
    /// Framing the host speaks on this connection.
    pub framing: String,
    /// Largest accepted message in bytes.
    pub max_message_bytes: u64,
    /// The effective configuration after merging.
    pub config: HostConfig,
    /// The kernel's sandbox support and the effective sandbox of each family.
    pub sandbox: SandboxReport,
    /// What `tools.autoDefer` deferred in the global scope once the MCP servers listed
    /// their tools (present when `tools.autoDefer` is set).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub auto_deferred: Option<crate::AutoDeferral>,
}

/// `$/cancelRequest` params (both directions).
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, TS)]
pub struct CancelParams {
    /// The id of the request to cancel.
    #[ts(type = "number | string")]
    pub id: serde_json::Value,
}
