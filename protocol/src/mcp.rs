//! MCP ingestion status (`mcp/status`): one entry per configured server.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Where one configured MCP server is in its lifecycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "lowercase")]
pub enum McpServerState {
    /// `enabled: false`: never spawned.
    Disabled,
    /// Spawning, handshaking or listing for the first time.
    Starting,
    /// Connected; its tools are registered and callable.
    Running,
    /// It exited or failed to start; waiting out the backoff before the next attempt.
    Restarting,
    /// Gave up after the bounded number of attempts; its tools fail naming the server.
    Failed,
    /// The host stopped it (shutdown).
    Stopped,
}

/// How the host reaches an ingested MCP server.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "lowercase")]
pub enum McpTransport {
    /// A child process spoken to over stdin/stdout (`command`).
    #[default]
    Stdio,
    /// A remote server spoken to over Streamable HTTP (`url`).
    Http,
}

/// One entry of `mcp/status`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct McpServerStatus {
    /// The server's name (its key in `mcpServers`).
    pub server: String,
    /// How it is reached.
    pub transport: McpTransport,
    /// Lifecycle state.
    pub state: McpServerState,
    /// The registered (callable) names of its tools, lexicographic.
    pub tools: Vec<String>,
    /// Per-tool problems of the last listing (degraded schemas, skipped tools).
    pub warnings: Vec<String>,
    /// Why it last failed (spawn, handshake, listing or exit), if it ever did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub last_error: Option<String>,
}
