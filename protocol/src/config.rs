//! `HostConfig`: every field optional; unknown fields are errors naming them.

use crate::network::NetworkPolicy;
use crate::sandbox::SandboxConfig;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use ts_rs::TS;

/// A string-keyed map (sorted, so generated output is stable).
pub type Map<V> = BTreeMap<String, V>;

/// Host configuration (`initialize.config`, `--config FILE`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct HostConfig {
    /// Presentation and scheduling of tools.
    #[serde(default)]
    pub tools: ToolsConfig,
    /// Code Mode runtime budgets.
    #[serde(default)]
    pub code_runtime: CodeRuntimeConfig,
    /// Built-in pipeline wrappers.
    #[serde(default)]
    pub pipeline: PipelineConfig,
    /// Claude-Code-style permission rules.
    #[serde(default)]
    pub permissions: PermissionsConfig,
    /// MCP servers to ingest, by name.
    #[serde(default)]
    pub mcp_servers: Map<McpServerConfig>,
    /// Built-in tools (off unless configured).
    #[serde(default)]
    pub builtins: BuiltinsConfig,
    /// Wire limits.
    #[serde(default)]
    pub transport: TransportConfig,
    /// Large results saved to files, with a preview and a locator in their place.
    #[serde(default)]
    pub spill: SpillConfig,
    /// The OS sandbox of `bash`, Python Code Mode and MCP servers (each may override it).
    #[serde(default)]
    pub sandbox: SandboxConfig,
    /// Bounds of `bash` commands that outlive their call.
    #[serde(default)]
    pub exec: crate::ExecConfig,
}

/// How tools are presented to the model.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "lowercase")]
pub enum PresentationMode {
    /// Every visible tool as a function definition.
    #[default]
    Native,
    /// Only `run_code` plus the generated SDK.
    Code,
    /// Both forms.
    Both,
}

/// `tools` section.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(deny_unknown_fields, rename_all = "camelCase", default)]
pub struct ToolsConfig {
    /// Default presentation (`native`).
    pub mode: PresentationMode,
    /// Bound on overlapping Code Mode binding calls and batch calls (default 10, at least 1).
    pub max_parallel_sub_calls: u32,
    /// Order of native tools in prompt assembly (names not listed follow, lexicographic).
    pub tool_order: Vec<String>,
    /// Globs (`*`, `?`, `[...]`) of tool names whose descriptions stay out of the prompt
    /// until `search_tools` loads them (e.g. `["mcp__*"]`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub deferred: Vec<String>,
    /// Globs of tool names never deferred, whatever their spec, `deferred` or their MCP
    /// server's `deferTools` say.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub always_loaded: Vec<String>,
    /// Defer whole MCP servers, largest first, while the tool definitions exceed a token
    /// budget (off by default).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub auto_defer: Option<crate::AutoDeferConfig>,
    /// `search_tools` ranks by BM25 fused with the similarity of static word embeddings,
    /// which finds paraphrases (default true); false ranks by BM25 alone.
    pub semantic_search: bool,
}

impl Default for ToolsConfig {
    fn default() -> Self {
        ToolsConfig {
            mode: PresentationMode::Native,
            max_parallel_sub_calls: 10,
            tool_order: Vec::new(),
            deferred: Vec::new(),
            always_loaded: Vec::new(),
            auto_defer: None,
            semantic_search: true,
        }
    }
}

/// Code Mode language.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS,
)]
#[serde(rename_all = "lowercase")]
pub enum CodeLanguage {
    /// TypeScript in a deno_core isolate.
    #[default]
    Typescript,
    /// Python in a CPython child process.
    Python,
}

/// `codeRuntime` section.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(deny_unknown_fields, rename_all = "camelCase", default)]
pub struct CodeRuntimeConfig {
    /// The default SDK and runtime language (agents without a `presentAs` language).
    pub language: CodeLanguage,
    /// Runtimes this host loads; `language` is always among them (default: just it).
    pub languages: Vec<CodeLanguage>,
    /// The Python interpreter (default `python3`, found on `PATH`).
    #[ts(optional = nullable)]
    pub python: Option<String>,
    /// Busy-time budget of one run (ms, > 0).
    pub compute_ms: u64,
    /// Wall-clock ceiling of one run (ms, > 0).
    pub max_wall_ms: u64,
    /// Cap on the serialized logs + completion of one run (bytes, >= 4).
    pub max_output_bytes: u64,
    /// Heap cap of one isolate, or address-space cap of one Python process (MiB, > 0).
    pub max_heap_mb: u64,
    /// Fresh isolates (and fresh Python interpreters) kept ready (>= 1); a run that finds
    /// none ready gets a fresh one made at once.
    pub pool_size: u32,
    /// Runs (both languages together) alive at once (>= 1); a run past it fails at once.
    pub max_concurrent_runs: u32,
    /// The sandbox of Python interpreters, over the top-level `sandbox`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub sandbox: Option<SandboxConfig>,
}

impl Default for CodeRuntimeConfig {
    fn default() -> Self {
        CodeRuntimeConfig {
            language: CodeLanguage::Typescript,
            languages: Vec::new(),
            python: None,
            compute_ms: 60_000,
            max_wall_ms: 600_000,
            max_output_bytes: 64 * 1024 * 1024,
            max_heap_mb: 512,
            pool_size: 2,
            max_concurrent_runs: 64,
            sandbox: None,
        }
    }
}

impl CodeRuntimeConfig {
    /// Whether this host loads a runtime for `language`.
    pub fn loads(&self, language: CodeLanguage) -> bool {
        language == self.language || self.languages.contains(&language)
    }
}

/// `pipeline` section.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(deny_unknown_fields, rename_all = "camelCase", default)]
pub struct PipelineConfig {
    /// Deadline enforcement.
    pub timeout: TimeoutConfig,
    /// Retries of idempotent tools.
    pub retry: RetryConfig,
    /// How long a client hook may take before the call fails closed (ms, > 0).
    pub hook_timeout_ms: u64,
    /// How long a cancelled call still waits for the answer to a request it sent the client
    /// (hook, approval, client tool) after `$/cancelRequest` (ms; never past that request's
    /// own hook or tool timeout; 0 does not wait).
    pub cancel_grace_ms: u64,
}

impl Default for PipelineConfig {
    fn default() -> Self {
        PipelineConfig {
            timeout: TimeoutConfig::default(),
            retry: RetryConfig::default(),
            hook_timeout_ms: 30_000,
            cancel_grace_ms: 2_000,
        }
    }
}

/// `pipeline.timeout`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(deny_unknown_fields, rename_all = "camelCase", default)]
pub struct TimeoutConfig {
    /// Make `timeoutMs` real (`TOOL_TIMEOUT`).
    pub enforce: bool,
    /// Deadline for tools that declare none (ms, > 0), or none.
    #[ts(optional = nullable)]
    pub default_ms: Option<u64>,
}

impl Default for TimeoutConfig {
    fn default() -> Self {
        TimeoutConfig {
            enforce: true,
            default_ms: None,
        }
    }
}

/// `pipeline.retry`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(deny_unknown_fields, rename_all = "camelCase", default)]
pub struct RetryConfig {
    /// Attempts in all for idempotent tools (1 = no retry).
    pub max_attempts: u32,
    /// First backoff (ms), doubled per attempt.
    pub backoff_ms: u64,
}

impl Default for RetryConfig {
    fn default() -> Self {
        RetryConfig {
            max_attempts: 1,
            backoff_ms: 100,
        }
    }
}

/// `permissions` (Claude Code rule syntax).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(deny_unknown_fields, rename_all = "camelCase", default)]
pub struct PermissionsConfig {
    /// Rules that allow.
    pub allow: Vec<String>,
    /// Rules that deny (win over ask and allow).
    pub deny: Vec<String>,
    /// Rules that ask (win over allow).
    pub ask: Vec<String>,
    /// What a call matching no rule gets (`allow` unless set).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub default: Option<PermissionDefault>,
    /// A settings file (`{ "permissions": { "allow": [...] } }`, Claude Code's shape) whose
    /// rules are loaded with these, and where an `allowed-always` answer adds its rule.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub persist_to: Option<String>,
    /// Where each list was written (`--config`'s path, `initialize.config`), for
    /// `permissions/explain`; set by the host, never read from the wire.
    #[serde(skip)]
    #[schemars(skip)]
    #[ts(skip)]
    pub origins: RuleOrigins,
}

/// Where each permission list was written.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RuleOrigins {
    /// The `allow` list's origin.
    pub allow: Option<String>,
    /// The `ask` list's origin.
    pub ask: Option<String>,
    /// The `deny` list's origin.
    pub deny: Option<String>,
}

/// Fallback for calls that match no rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "lowercase")]
pub enum PermissionDefault {
    /// Allow.
    Allow,
    /// Ask.
    Ask,
    /// Deny.
    Deny,
}

/// One MCP server to ingest: a program spawned over stdio (`command`) or a remote server
/// reached over Streamable HTTP (`url`); exactly one of the two.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct McpServerConfig {
    /// Claude Code's `type` (`stdio`, `http`, `sse`), read so a `.mcp.json` loads as
    /// written: `stdio` needs `command`, `http` needs `url`. `sse` (the deprecated HTTP+SSE
    /// transport) is not supported: such a server fails to start, saying so.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub kind: Option<McpServerKind>,
    /// Program to run (stdio servers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub command: Option<String>,
    /// Streamable HTTP endpoint (`http://` or `https://`) of a remote server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub url: Option<String>,
    /// HTTP headers sent with every request to `url`; `${VAR}` in a value is replaced by
    /// the host's environment variable `VAR`. Values are secrets: never logged or echoed.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub headers: Map<String>,
    /// Environment variable holding a bearer token for `url` (`Authorization: Bearer …`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub bearer_token_env: Option<String>,
    /// Its arguments.
    #[serde(default)]
    pub args: Vec<String>,
    /// Its environment, over the few variables the official MCP SDKs pass on (`HOME`,
    /// `LOGNAME`, `PATH`, `SHELL`, `TERM`, `USER`); nothing else of the host's is inherited.
    #[serde(default)]
    pub env: Map<String>,
    /// Working directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub cwd: Option<String>,
    /// Off switch.
    #[serde(default = "enabled_by_default")]
    pub enabled: bool,
    /// Per-call deadline (ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub timeout_ms: Option<u64>,
    /// Deadline of the handshake and first listing (ms, > 0); default `timeoutMs` but at
    /// least 10 s, or 30 s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub startup_timeout_ms: Option<u64>,
    /// Which of its tools to ingest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub tools: Option<NameFilter>,
    /// Its sandbox, over the top-level `sandbox`; without it the server is not sandboxed
    /// (so existing setups keep working).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub sandbox: Option<SandboxConfig>,
    /// Defer every tool of this server (descriptions out of the prompt until `search_tools`
    /// loads them); `tools.alwaysLoaded` exempts names.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub defer_tools: bool,
    /// OAuth settings of a `url` server configured without a token: which client to be
    /// (without them the client registers itself dynamically) and which scopes to ask for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub oauth: Option<McpOAuthConfig>,
}

/// How the host authorizes with a remote server's authorization server.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct McpOAuthConfig {
    /// A client ID registered with the authorization server beforehand (no dynamic
    /// registration then).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub client_id: Option<String>,
    /// Its secret, for a confidential client; `${VAR}` is expanded from the environment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub client_secret: Option<String>,
    /// The HTTPS URL of a client ID metadata document describing this client, used as its
    /// client ID where the authorization server supports such documents.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub client_metadata_url: Option<String>,
    /// Scopes to request (default: the server's `WWW-Authenticate` scope, else its
    /// protected resource metadata's `scopes_supported`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scopes: Vec<String>,
}

/// An MCP server's transport as Claude Code's `.mcp.json` names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "lowercase")]
pub enum McpServerKind {
    /// A program spawned on stdio (`command`).
    Stdio,
    /// Streamable HTTP (`url`).
    Http,
    /// The deprecated HTTP+SSE transport (not supported).
    Sse,
}

fn enabled_by_default() -> bool {
    true
}

/// An allow or deny list of names.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(deny_unknown_fields)]
pub struct NameFilter {
    /// Only these.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub allow: Option<Vec<String>>,
    /// All but these.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub deny: Option<Vec<String>>,
}

/// `builtins` section: each tool family is off unless present.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(deny_unknown_fields, rename_all = "camelCase", default)]
pub struct BuiltinsConfig {
    /// File tools confined to `root`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub fs: Option<FsConfig>,
    /// The bash tool.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub bash: Option<BashConfig>,
    /// `web_fetch`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub web: Option<WebConfig>,
}

/// `builtins.web`: `web_fetch`, which fetches a URL and returns its text (HTML as Markdown).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct WebConfig {
    /// Register the tool.
    #[serde(default = "enabled_by_default")]
    pub allow: bool,
    /// The hosts it may reach, as `sandbox.network`'s `{ allow, deny }` patterns. Absent: the
    /// top-level `sandbox.network` when that is `{ allow, deny }`, else any host. Either way
    /// no address of this machine or the cloud's metadata service is reached.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub network: Option<NetworkPolicy>,
    /// The most bytes of a response body read (default 10 MiB); a longer page is cut there.
    #[serde(default = "default_web_max_bytes")]
    pub max_bytes: u64,
    /// How long one fetch may take, redirects included (default 30 s).
    #[serde(default = "default_web_timeout_ms")]
    pub timeout_ms: u64,
    /// Redirects followed (default 5), each checked against the same policy.
    #[serde(default = "default_web_max_redirects")]
    pub max_redirects: u32,
}

impl Default for WebConfig {
    fn default() -> Self {
        WebConfig {
            allow: true,
            network: None,
            max_bytes: default_web_max_bytes(),
            timeout_ms: default_web_timeout_ms(),
            max_redirects: default_web_max_redirects(),
        }
    }
}

fn default_web_max_bytes() -> u64 {
    10 * 1024 * 1024
}

fn default_web_timeout_ms() -> u64 {
    30_000
}

fn default_web_max_redirects() -> u32 {
    5
}

/// `builtins.fs`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct FsConfig {
    /// Every path is confined to this directory.
    pub root: String,
    /// Stale-edit protection: `write` and `edit` refuse an existing file the calling agent
    /// scope has not `read` (or written) since it last changed (default on).
    #[serde(default = "enabled_by_default")]
    pub stale_edits: bool,
}

/// `builtins.bash`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct BashConfig {
    /// Working directory of commands.
    pub cwd: String,
    /// Register the tool.
    #[serde(default = "enabled_by_default")]
    pub allow: bool,
    /// The sandbox of commands, over the top-level `sandbox`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub sandbox: Option<SandboxConfig>,
    /// What one command and everything it starts may use together.
    #[serde(default)]
    pub limits: BashLimits,
}

/// `builtins.bash.limits`: budgets of one command's whole process tree (a cgroup leaf, or
/// the polled fallback), every field optional.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(deny_unknown_fields, rename_all = "camelCase", default)]
pub struct BashLimits {
    /// Memory in MiB, shared memory (memfd, `/dev/shm`, SysV) included (default 4096, at
    /// least 16); a command past it is killed with everything it started.
    pub memory_mb: u64,
    /// Processes and threads alive at once (default 4096, at least 8); a fork past it fails
    /// inside the command.
    pub pids: u64,
    /// CPU share in percent of one CPU (200: two CPUs; at least 1); default unlimited.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub cpu_percent: Option<u32>,
}

impl Default for BashLimits {
    fn default() -> Self {
        BashLimits {
            memory_mb: 4096,
            pids: 4096,
            cpu_percent: None,
        }
    }
}

/// `transport` section.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(deny_unknown_fields, rename_all = "camelCase", default)]
pub struct TransportConfig {
    /// Largest accepted message (bytes); larger frames are refused with -32600.
    pub max_message_bytes: u64,
    /// Deepest accepted JSON nesting (32 to 50000).
    pub max_nesting_depth: u32,
}

impl Default for TransportConfig {
    fn default() -> Self {
        TransportConfig {
            max_message_bytes: 64 * 1024 * 1024,
            max_nesting_depth: 20_000,
        }
    }
}

/// `spill` section: model-facing text over `thresholdBytes` is saved to a file and replaced
/// by its head, a marker naming the size and the file, its tail and how to read more.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(deny_unknown_fields, rename_all = "camelCase", default)]
pub struct SpillConfig {
    /// Model-facing text larger than this (UTF-8 bytes) is spilled; 0 turns spilling off,
    /// otherwise at least 1024.
    pub threshold_bytes: u64,
    /// Bytes of the head and, again, of the tail a spilled text keeps inline (> 0).
    pub preview_bytes: u64,
    /// Directory of the spill files (created 0700 if missing); default: a private
    /// directory of this host under the system temp directory.
    #[ts(optional = nullable)]
    pub dir: Option<String>,
    /// Keep the spill files when the host exits (default: removed).
    pub keep: bool,
    /// Bytes all spill files of this host may take together; the oldest are evicted
    /// first (> 0).
    pub max_total_bytes: u64,
}

impl Default for SpillConfig {
    fn default() -> Self {
        SpillConfig {
            threshold_bytes: 40_000,
            preview_bytes: 2_000,
            dir: None,
            keep: false,
            max_total_bytes: 1 << 30,
        }
    }
}
