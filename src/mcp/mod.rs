//! MCP ingestion: every configured stdio MCP server is spawned, handshaken
//! (rmcp client) and listed, and each of its tools registers as `mcp__<server>__<tool>`
//! like any other tool, so the whole pipeline applies to it. (Serving the registry to MCP
//! clients is a front end: `frontends::mcp`.)
//!
//! Decisions:
//! - **Names** are `mcp__<server>__<tool>` byte for byte (no sanitizing): the registry, the
//!   wire, the SDK (a quoted key such as `"mcp__fs__read.file"`) and dispatch all use that
//!   exact string, whatever characters the server chose.
//! - **Input schemas** are registered raw: the server validates arguments. Parts outside
//!   the SDK's schema subset are typed `unknown` by the codegen, with a warning.
//! - **Output**: a tool with an `outputSchema` has its `structuredContent` as canonical
//!   value, validated when the schema is inside the enforced subset, else declared as any
//!   JSON (`{}`) with a warning. A content-only tool's canonical value is a **string**: the
//!   text of its text blocks joined by newlines (what a Code Mode program can use); the
//!   model-facing content is always the MCP content blocks themselves (images included).
//! - **Failures**: `isError` results are tool failures whose message is the result's text;
//!   JSON-RPC errors, transport loss and unreadable answers are failures naming the server.
//!   Aborting a call (caller, deadline) sends `notifications/cancelled`.
//! - **Progress**: rmcp gives every request a `_meta.progressToken` of its own; while a
//!   front end listens to a call (`ctx.progress.is_live()`), the server's
//!   `notifications/progress` for that token become the call's progress reports until the
//!   call ends (later ones are ignored).
//! - **Protocol versions** ([`versions`]): `initialize` offers `2025-11-25`, the newest
//!   revision with a handshake; any revision rmcp speaks is accepted in the answer, another
//!   fails the handshake naming both.
//! - **Elicitation** ([`elicitation`]): a server's `elicitation/create` goes to the host's
//!   elicitor (set with [`McpHost::set_elicitor`] before the servers start, since
//!   `initialize` declares its modes); a decline the host makes itself is noted on the call.
//! - **Deadlines**: a server's `timeoutMs` becomes each of its tools' `timeoutMs` (made real
//!   by `pipeline.timeout`, which aborts the call); its startup (handshake and listing) gets
//!   `timeoutMs` but at least 10 s, or 30 s when unset.
//! - **Serving** lists input schemas as object schemas (`"type": "object"` added where
//!   missing: MCP clients reject the whole listing otherwise) and an `outputSchema`, with
//!   `structuredContent` in results, only for tools whose output is an object schema.
//! - **Annotations** are hints the user trusted by configuring the server: `readOnlyHint`
//!   lets calls overlap, `idempotentHint` lets the retry policy repeat them.
//! - **Lifecycle**: one supervisor task per server. A server that fails to start, crashes
//!   or hangs never takes the host down: its tools stay registered and fail naming the
//!   server until a restart (backoff from 200 ms, doubling, at most 5 consecutive failed
//!   attempts) brings it back. Children run in their own process group with the
//!   environment the official MCP SDKs pass on (`HOME`, `PATH`, ...) plus the configured
//!   `env`; [`McpHost::shutdown`] closes their stdin, then SIGTERMs and SIGKILLs their
//!   group, and reaps them.
//! - **A broken stdio transport**: a message over 16 MiB (rmcp's line limit, which rmcp
//!   enforces by dropping the line silently) fails the call it answers at once, naming its
//!   size (`stdout`); a server whose stdout ends is treated as exited even if its process
//!   runs on: killed, reaped and restarted, `lastError` saying why.
//! - **OAuth** ([`oauth`]): a remote server configured without a token that answers 401 is
//!   authorized with the authorization code flow; its tokens are kept for later runs.

mod call;
mod catalog;
mod client;
mod definition;
pub mod elicitation;
mod envelope;
mod link;
mod names;
pub mod oauth;
mod process;
mod progress;
mod remote;
mod stdout;
mod supervisor;
mod timing;
mod versions;

pub use names::registered_name;

use crate::process::sandbox::{families, kernel_support};
use crate::registry::Registry;
use dsh_tools_protocol::{
    McpServerConfig, McpServerState, McpServerStatus, McpTransport, SandboxConfig,
};
use link::Link;
use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::sync::Arc;
use supervisor::Supervisor;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// One configured server as the host tracks it.
struct Server {
    link: Arc<Link>,
    task: Option<JoinHandle<()>>,
    settled: watch::Receiver<bool>,
}

/// The ingested MCP servers of one host: start, observe, shut down.
pub struct McpHost {
    servers: Mutex<Vec<Server>>,
    stop: CancellationToken,
    changed: Arc<watch::Sender<u64>>,
    elicitor: Mutex<Option<Arc<dyn elicitation::Elicitor>>>,
    browser: Arc<oauth::Browser>,
}

impl Default for McpHost {
    fn default() -> Self {
        McpHost {
            servers: Mutex::new(Vec::new()),
            stop: CancellationToken::new(),
            changed: Arc::new(watch::Sender::new(0)),
            elicitor: Mutex::new(None),
            browser: Arc::default(),
        }
    }
}

impl McpHost {
    /// A host with no servers yet.
    pub fn new() -> Self {
        McpHost::default()
    }

    /// Who answers the servers' elicitations (without one they are declined, saying no
    /// front end answers them); effective for servers started after this call.
    pub fn set_elicitor(&self, elicitor: Arc<dyn elicitation::Elicitor>) {
        *self.elicitor.lock() = Some(elicitor);
    }

    /// Starts one supervisor per enabled server (in the current tokio runtime); their tools
    /// register into `registry` as they are listed. A second call is ignored: the servers
    /// of a host are fixed once started. A server with a `sandbox` of its own runs under
    /// it over `sandbox` (the top-level one); one without runs unsandboxed.
    pub fn start(
        &self,
        registry: &Arc<Registry>,
        configs: &BTreeMap<String, McpServerConfig>,
        sandbox: &SandboxConfig,
    ) {
        let mut servers = self.servers.lock();
        if !servers.is_empty() {
            tracing::warn!(target: "mcp", "MCP servers were already started; ignoring a second start");
            return;
        }
        if configs.values().any(|config| config.url.is_some()) {
            // reqwest is built without a crypto provider of its own (no C toolchain for
            // aws-lc at build time); `ring`'s is installed once, for every https server.
            let _ = rustls::crypto::ring::default_provider().install_default();
        }
        for (name, config) in configs {
            let state = if config.enabled {
                McpServerState::Starting
            } else {
                McpServerState::Disabled
            };
            let transport = match config.url {
                Some(_) => McpTransport::Http,
                None => McpTransport::Stdio,
            };
            let link = Link::new(name, transport, state, self.changed.clone());
            if let Some(elicitor) = self.elicitor.lock().clone() {
                link.asking.set_elicitor(elicitor);
            }
            let (settled_tx, settled) = watch::channel(!config.enabled);
            let task = config.enabled.then(|| {
                let supervisor = Supervisor {
                    link: link.clone(),
                    config: config.clone(),
                    sandbox: families::mcp_server(sandbox, name, config, &kernel_support()),
                    registry: registry.clone(),
                    stop: self.stop.clone(),
                    settled: settled_tx,
                    browser: self.browser.clone(),
                };
                tokio::spawn(supervisor.run())
            });
            servers.push(Server {
                link,
                task,
                settled,
            });
        }
    }

    /// Sends the OAuth authorization URLs of this host's servers to `opener` (a front end
    /// that can show them) instead of printing them.
    pub fn set_url_opener(&self, opener: Option<Arc<dyn oauth::UrlOpener>>) {
        self.browser.set_opener(opener);
    }

    /// Resolves once every server's first attempt settled (running, or failed and backing
    /// off), so callers that need the full tool set can wait for it.
    pub async fn ready(&self) {
        let waiting: Vec<watch::Receiver<bool>> = self
            .servers
            .lock()
            .iter()
            .map(|s| s.settled.clone())
            .collect();
        for mut settled in waiting {
            let _ = settled.wait_for(|done| *done).await;
        }
    }

    /// `mcp/status`: one entry per configured server, by name.
    pub fn status(&self) -> Vec<McpServerStatus> {
        self.servers
            .lock()
            .iter()
            .map(|s| s.link.status())
            .collect()
    }

    /// Resolves once `condition` holds for the status (checked after every change).
    pub async fn wait_for(&self, condition: impl Fn(&[McpServerStatus]) -> bool) {
        let mut changes = self.changed.subscribe();
        loop {
            changes.mark_unchanged();
            if condition(&self.status()) {
                return;
            }
            if changes.changed().await.is_err() {
                return;
            }
        }
    }

    /// Stops every supervisor; returns once every child was terminated and reaped.
    pub async fn shutdown(&self) {
        self.stop.cancel();
        let tasks: Vec<JoinHandle<()>> = self
            .servers
            .lock()
            .iter_mut()
            .filter_map(|s| s.task.take())
            .collect();
        for task in tasks {
            if let Err(e) = task.await {
                tracing::warn!(target: "mcp", "an MCP supervisor ended abnormally: {e}");
            }
        }
    }
}

impl Drop for McpHost {
    /// A host dropped without [`McpHost::shutdown`] still stops its supervisors (which
    /// terminate their children if the runtime keeps running; `kill_on_drop` otherwise).
    fn drop(&mut self) {
        self.stop.cancel();
    }
}
