//! Code Mode: the reserved `run_code` tool, its per-run binding bridge, and the SDK the
//! model reads. The program runs in a fresh isolate ([`crate::runtime`]); every
//! `await tools.x(args)` re-enters the complete pipeline with the outer call as parent.

mod admission;
mod announcer;
mod bridge;
mod events;
mod language;
mod tool;

pub use events::{CodeEvents, DispatchEnd, DispatchStart, NoEvents, stream_name};
pub use language::{language_name, language_of};
pub use tool::{EMPTY_RUN, RUN_CODE, render_run};

use crate::codegen::{self, SdkTool};
use crate::pipeline::ToolRuntime;
use crate::process::sandbox::{families, kernel_support};
use crate::registry::{RegisteredTool, RegistryError};
use crate::runtime::{IsolatePool, PoolConfig, PythonConfig, PythonPool, RunLimits};
use crate::tool::{AgentId, ToolError};
use dsh_tools_protocol::{CodeLanguage, CodeRuntimeConfig, SandboxConfig};
use parking_lot::RwLock;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

/// Code Mode state shared by every `run_code` call of one runtime.
pub struct CodeMode {
    config: RwLock<CodeRuntimeConfig>,
    /// The top-level `sandbox` (`codeRuntime.sandbox` overrides it for Python).
    sandbox: RwLock<SandboxConfig>,
    pool: OnceLock<Result<IsolatePool, String>>,
    python: OnceLock<Result<PythonPool, String>>,
    events: RwLock<Arc<dyn CodeEvents>>,
    /// `transport.maxNestingDepth`: the deepest JSON a program may pass or return.
    max_depth: AtomicUsize,
    /// Runs alive, under `codeRuntime.maxConcurrentRuns`.
    admission: admission::Admission,
}

impl CodeMode {
    /// Installs `run_code` into `runtime`'s registry and returns the shared state.
    pub fn install(
        runtime: &Arc<ToolRuntime>,
        config: CodeRuntimeConfig,
    ) -> Result<Arc<CodeMode>, RegistryError> {
        let code = Arc::new(CodeMode {
            config: RwLock::new(config),
            sandbox: RwLock::new(SandboxConfig::default()),
            pool: OnceLock::new(),
            python: OnceLock::new(),
            events: RwLock::new(Arc::new(NoEvents)),
            max_depth: AtomicUsize::new(default_max_depth()),
            admission: admission::Admission::default(),
        });
        let definition = tool::definition(Arc::downgrade(runtime), code.clone())?;
        runtime.registry().install_host_tool(definition)?;
        Ok(code)
    }

    /// A top-level call of the Code Mode entry with `arguments` (`code`, `description`).
    pub fn entry_call(call_id: &str, arguments: serde_json::Value) -> crate::ToolExecutionInput {
        crate::ToolExecutionInput::new(call_id, RUN_CODE, arguments)
    }

    /// Replaces the budgets of later runs (the pool's size and heap cap are fixed once started).
    pub fn configure(&self, config: CodeRuntimeConfig) {
        *self.config.write() = config;
    }

    /// The top-level `sandbox` that Python interpreters start under (read when the pool
    /// starts, like its size).
    pub fn set_sandbox(&self, sandbox: SandboxConfig) {
        *self.sandbox.write() = sandbox;
    }

    /// Bounds the JSON nesting of later runs' binding arguments and completions, as the
    /// transport bounds frames (`transport.maxNestingDepth`).
    pub fn set_max_depth(&self, max_depth: u32) {
        let max_depth = usize::try_from(max_depth).unwrap_or(usize::MAX);
        self.max_depth.store(max_depth, Ordering::Relaxed);
    }

    /// Routes dispatch events and live output to `events`.
    pub fn set_events(&self, events: Arc<dyn CodeEvents>) {
        *self.events.write() = events;
    }

    /// Starts the pools of the loaded languages now, so the first run does not pay for
    /// them (building the startup snapshot takes a second or two, on a blocking thread).
    pub async fn prewarm(self: &Arc<Self>) -> Result<(), ToolError> {
        let config = self.config.read().clone();
        let code = self.clone();
        tokio::task::spawn_blocking(move || {
            if config.loads(CodeLanguage::Python) {
                code.python_pool()?;
            }
            if config.loads(CodeLanguage::Typescript) {
                code.pool()?;
            }
            Ok(())
        })
        .await
        .map_err(|e| ToolError::new(format!("the Code Mode runtime could not start: {e}")))?
    }

    /// The TypeScript SDK over what `agent` sees (lexicographic, byte-identical for an
    /// unchanged tool set and load state).
    pub fn sdk(runtime: &ToolRuntime, agent: Option<&AgentId>) -> String {
        Self::sdk_in(runtime, agent, CodeLanguage::Typescript)
    }

    /// The SDK over what `agent` sees, in `language` (same ordering and determinism): every
    /// tool it presents natively is declared in full (`search_tools` and the loaded deferred
    /// tools included), the deferred tools not loaded yet are listed one line each.
    pub fn sdk_in(
        runtime: &ToolRuntime,
        agent: Option<&AgentId>,
        language: CodeLanguage,
    ) -> String {
        let presented = runtime.registry().presented(agent);
        let declared: Vec<SdkTool> = presented.listed().map(|t| sdk_tool(t)).collect();
        let deferred: Vec<SdkTool> = presented.unloaded().map(|t| sdk_tool(t)).collect();
        match language {
            CodeLanguage::Typescript => codegen::typescript_sdk_deferring(&declared, &deferred),
            CodeLanguage::Python => codegen::python_sdk_deferring(&declared, &deferred),
        }
    }

    /// The Code Mode language of programs run without a `presentAs` language
    /// (`codeRuntime.language`).
    pub fn default_language(&self) -> CodeLanguage {
        self.config.read().language
    }

    /// Fresh isolates waiting for a run (0 before the pool started).
    pub fn ready_isolates(&self) -> usize {
        self.pool
            .get()
            .and_then(|p| p.as_ref().ok())
            .map_or(0, IsolatePool::ready_isolates)
    }

    /// The configured number of pooled isolates.
    pub fn pool_size(&self) -> usize {
        usize::try_from(self.config.read().pool_size)
            .unwrap_or(1)
            .max(1)
    }

    fn events(&self) -> Arc<dyn CodeEvents> {
        self.events.read().clone()
    }

    fn limits(&self) -> RunLimits {
        let config = self.config.read();
        RunLimits {
            compute_ms: config.compute_ms,
            max_wall_ms: config.max_wall_ms,
            max_output_bytes: config.max_output_bytes,
            max_depth: self.max_depth.load(Ordering::Relaxed),
        }
    }

    /// The interpreter pool, started on a blocking thread if this is its first use (finding
    /// the interpreter runs it once).
    async fn started_python_pool(self: &Arc<Self>) -> Result<PythonPool, ToolError> {
        if let Some(pool) = self.python.get() {
            return pool.clone().map_err(|e| {
                ToolError::new(format!("the Python Code Mode runtime could not start: {e}"))
            });
        }
        let code = self.clone();
        tokio::task::spawn_blocking(move || code.python_pool().cloned())
            .await
            .map_err(|e| {
                ToolError::new(format!("the Python Code Mode runtime could not start: {e}"))
            })?
    }

    /// The interpreter pool (started on first use; call inside the tokio runtime).
    fn python_pool(&self) -> Result<&PythonPool, ToolError> {
        let pool = self.python.get_or_init(|| {
            let config = self.config.read();
            PythonPool::new(PythonConfig {
                interpreter: config
                    .python
                    .clone()
                    .unwrap_or_else(|| "python3".to_owned()),
                size: usize::try_from(config.pool_size).unwrap_or(1).max(1),
                max_heap_mb: config.max_heap_mb,
                sandbox: families::python(
                    &self.sandbox.read(),
                    config.sandbox.as_ref(),
                    &kernel_support(),
                ),
            })
            .map_err(|e| e.to_string())
        });
        pool.as_ref().map_err(|e| {
            ToolError::new(format!("the Python Code Mode runtime could not start: {e}"))
        })
    }

    /// Fresh Python interpreters waiting for a run (0 before the pool started).
    pub fn ready_interpreters(&self) -> usize {
        self.python
            .get()
            .and_then(|p| p.as_ref().ok())
            .map_or(0, PythonPool::ready_interpreters)
    }

    /// A top-level `run_code` call in `agent`'s scope is on its way: if it will run
    /// TypeScript on a pool that has started, the isolate it will likely get warms up
    /// meanwhile (`IsolatePool::anticipate`). Returns at once; never starts the pool.
    pub fn anticipate(&self, runtime: &ToolRuntime, agent: Option<&AgentId>) {
        let language = language_of(runtime, agent, &self.config.read());
        if let (CodeLanguage::Typescript, Some(Ok(pool))) = (language, self.pool.get()) {
            pool.anticipate();
        }
    }

    fn pool(&self) -> Result<&IsolatePool, ToolError> {
        let pool = self.pool.get_or_init(|| {
            let config = self.config.read();
            let size = usize::try_from(config.pool_size).unwrap_or(1).max(1);
            IsolatePool::new(PoolConfig {
                size,
                max_heap_mb: config.max_heap_mb,
            })
            .map_err(|e| e.to_string())
        });
        pool.as_ref()
            .map_err(|e| ToolError::new(format!("the Code Mode runtime could not start: {e}")))
    }
}

/// One tool as the SDK renders it.
pub fn sdk_tool(tool: &RegisteredTool) -> SdkTool<'_> {
    SdkTool {
        name: &tool.definition.name,
        description: &tool.definition.description,
        input_schema: tool.definition.input.json_schema(),
        output_schema: tool.definition.output.presented_schema(),
    }
}

fn default_max_depth() -> usize {
    let depth = dsh_tools_protocol::TransportConfig::default().max_nesting_depth;
    usize::try_from(depth).unwrap_or(usize::MAX)
}
