//! Commands of the binary besides `serve`: run a program, print the SDK, serve MCP,
//! check the sandbox, generate protocol files; and the orderly-shutdown signal they share.

mod live;
mod mcp;
mod run;
pub mod sandbox;
mod terminate;

pub use mcp::{http_options, serve_mcp};
pub use run::{run_program, sdk_text};
pub use terminate::{EofOnCancel, on_terminate};

use dsh_tools::ToolRuntime;
use dsh_tools::code_mode::CodeMode;
use dsh_tools::mcp::McpHost;
use dsh_tools::policy::PolicySet;
use dsh_tools_protocol::{HostConfig, PresentationMode};
use std::sync::Arc;

/// A runtime presenting `mode` with the configured tool sources registered: its MCP
/// servers are started and their first listing has settled.
pub struct Local {
    /// The registry and pipeline.
    pub runtime: Arc<ToolRuntime>,
    /// Code Mode state.
    pub code: Arc<CodeMode>,
    /// The ingested MCP servers ([`McpHost::shutdown`] before exiting).
    pub mcp: McpHost,
    /// The configured policy (its metrics table is what `dsh-tools mcp` reports).
    pub policy: PolicySet,
}

/// Builds a [`Local`] runtime (whatever `tools.mode` says, the command decides the mode).
pub async fn local_runtime(config: &HostConfig, mode: PresentationMode) -> anyhow::Result<Local> {
    let mut config = config.clone();
    config.tools.mode = mode;
    let runtime = ToolRuntime::new(&config);
    let code = CodeMode::install(&runtime, config.code_runtime.clone())?;
    dsh_tools::discovery::install(&runtime, &code)?;
    code.set_sandbox(config.sandbox.clone());
    code.set_max_depth(config.transport.max_nesting_depth);
    let policy = PolicySet::install(&runtime, &config)?;
    dsh_tools::builtins::register_builtins(&runtime, &config.builtins, &config.sandbox)?;
    let mcp = McpHost::new();
    mcp.start(runtime.registry(), &config.mcp_servers, &config.sandbox);
    mcp.ready().await;
    Ok(Local {
        runtime,
        code,
        mcp,
        policy,
    })
}
