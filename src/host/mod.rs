//! One host assembled from a configuration: the tool runtime with its host tools (Code
//! Mode's entry, tool discovery), the policy, the built-ins, Code Mode's runtimes and
//! sandbox, and the ingested MCP servers. Every command (`serve`, `mcp` over stdio and HTTP,
//! `run`, `sdk`) builds its host here; a front end adds only its transport and the hooks
//! that reach its client (approvals, progress, dispatch events).

use crate::builtins::bash::session::ExecSessions;
use crate::builtins::{self, BuiltinsError};
use crate::code_mode::CodeMode;
use crate::mcp::McpHost;
use crate::mcp::elicitation::Elicitor;
use crate::mcp::oauth::UrlOpener;
use crate::pipeline::ToolRuntime;
use crate::pipeline::wrappers::{Metrics, ToolMetrics};
use crate::policy::{Book, BookError, PolicySet};
use dsh_tools_protocol::{HostConfig, PresentationMode};
use parking_lot::Mutex;
use std::sync::Arc;

/// Why a configuration could not be applied (the host is unchanged where it failed first).
#[derive(Debug, thiserror::Error)]
pub enum HostError {
    /// A permission rule or pipeline policy is malformed.
    #[error(transparent)]
    Policy(#[from] BookError),
    /// A built-in family could not be registered.
    #[error(transparent)]
    Builtins(#[from] BuiltinsError),
}

/// The parts of one host, shared by its front end.
pub struct Host {
    /// The registry and pipeline.
    pub runtime: Arc<ToolRuntime>,
    /// Code Mode state (`run_code`'s runtimes, budgets, sandbox, events).
    pub code: Arc<CodeMode>,
    /// The ingested MCP servers.
    pub mcp: McpHost,
    /// Commands that outlived their `bash` call.
    pub exec: Arc<ExecSessions>,
    /// The configured policy: permission rules, retry and metrics (set by `configure`).
    policy: Mutex<Option<PolicySet>>,
}

impl Host {
    /// The runtime with its host tools installed; nothing of `config` beyond the runtime's
    /// own settings is applied until [`configure`](Self::configure).
    pub fn new(config: &HostConfig) -> Host {
        let runtime = ToolRuntime::new(config);
        // Installing the host tools fails only for an invalid built-in schema: a bug, not input.
        let code = CodeMode::install(&runtime, config.code_runtime.clone())
            .unwrap_or_else(|e| unreachable!("run_code definition is valid: {e}"));
        crate::discovery::install(&runtime, &code)
            .unwrap_or_else(|e| unreachable!("search_tools definition is valid: {e}"));
        code.set_max_depth(config.transport.max_nesting_depth);
        let exec = ExecSessions::new();
        exec.configure(&config.exec);
        let closing = exec.clone();
        runtime.on_scopes_closed(Arc::new(move |scopes| closing.close_scopes(scopes)));
        Host {
            runtime,
            code,
            mcp: McpHost::new(),
            exec,
            policy: Mutex::new(None),
        }
    }

    /// A host with `config` applied, presenting `mode` whatever `tools.mode` says, once its
    /// MCP servers' first listing has settled (the local commands: `run`, `sdk`, `mcp`).
    pub async fn assemble(config: &HostConfig, mode: PresentationMode) -> Result<Host, HostError> {
        Host::assemble_eliciting(config, mode, None, None).await
    }

    /// [`assemble`](Self::assemble) with `elicitor` answering the MCP servers' elicitations
    /// (set before they start: their `initialize` declares what it answers) and `opener`
    /// taking their OAuth browser steps (else they are printed).
    pub async fn assemble_eliciting(
        config: &HostConfig,
        mode: PresentationMode,
        elicitor: Option<Arc<dyn Elicitor>>,
        opener: Option<Arc<dyn UrlOpener>>,
    ) -> Result<Host, HostError> {
        let mut config = config.clone();
        config.tools.mode = mode;
        let host = Host::new(&config);
        if let Some(elicitor) = elicitor {
            host.mcp.set_elicitor(elicitor);
        }
        host.mcp.set_url_opener(opener);
        host.configure(&config)?;
        host.mcp.ready().await;
        Ok(host)
    }

    /// Applies `config`: policy, pipeline settings, built-ins, Code Mode's budgets, sandbox
    /// and depth, and starts the MCP servers (their first listing is [`McpHost::ready`]).
    pub fn configure(&self, config: &HostConfig) -> Result<(), HostError> {
        let mut config = config.clone();
        config.sandbox.protected = crate::policy::protected_files(&config.permissions);
        let config = &config;
        {
            let mut policy = self.policy.lock();
            match policy.as_mut() {
                Some(set) => set.replace(&self.runtime, config)?,
                None => {
                    let set = PolicySet::install(&self.runtime, config)?;
                    let book = set.book.clone();
                    // A grant narrowed to an agent scope (an MCP session's) ends with it.
                    self.runtime
                        .on_scopes_closed(Arc::new(move |scopes| book.close_scopes(scopes)));
                    *policy = Some(set);
                }
            }
        }
        self.runtime.configure(config);
        self.exec.configure(&config.exec);
        builtins::register_builtins(&self.runtime, &config.builtins, &config.sandbox, &self.exec)?;
        self.code.configure(config.code_runtime.clone());
        self.code.set_sandbox(config.sandbox.clone());
        self.code.set_max_depth(config.transport.max_nesting_depth);
        self.mcp.start(
            self.runtime.registry(),
            &config.mcp_servers,
            &config.sandbox,
        );
        Ok(())
    }

    /// Warms Code Mode's isolates in the background when `mode` presents it; a failure
    /// surfaces on the first run instead.
    pub fn prewarm_in_background(&self, mode: PresentationMode) {
        if mode == PresentationMode::Native {
            return;
        }
        let code = self.code.clone();
        tokio::spawn(async move {
            if let Err(e) = code.prewarm().await {
                tracing::warn!("{e}");
            }
        });
    }

    /// The permission rules and grants (`None` before `configure`).
    pub fn book(&self) -> Option<Arc<Book>> {
        self.policy.lock().as_ref().map(|p| p.book.clone())
    }

    /// Per-tool metrics of the configured policy (empty before `configure`), `bash`'s with
    /// the connections its sandbox's proxy refused and `web_fetch`'s with those its policy did.
    pub fn metrics(&self) -> Vec<ToolMetrics> {
        let mut metrics = self
            .policy
            .lock()
            .as_ref()
            .map(|p| p.metrics.snapshot())
            .unwrap_or_default();
        for (tool, blocked) in [
            ("bash", self.exec.blocked_connections()),
            ("web_fetch", self.exec.blocked_fetches()),
        ] {
            if let Some(row) = metrics.iter_mut().find(|m| m.name == tool) {
                row.blocked_connections = blocked;
            }
        }
        metrics
    }

    /// The configured policy's metrics table, shared (`dsh-tools mcp` reports it live;
    /// before `configure`, an empty table of its own).
    pub fn metrics_table(&self) -> Arc<Metrics> {
        let policy = self.policy.lock();
        policy
            .as_ref()
            .map(|p| p.metrics.clone())
            .unwrap_or_default()
    }

    /// Ends the host's work once every call has settled: the exec sessions are killed, the
    /// MCP servers are terminated and reaped, and the spill files go (unless `spill.keep`).
    pub async fn shutdown(&self) {
        self.exec.shutdown().await;
        self.mcp.shutdown().await;
        self.runtime.spill().cleanup();
    }
}
