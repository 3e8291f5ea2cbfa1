//! `dsh-tools mcp`: the registry (built-ins, ingested MCP servers, Code Mode) served to an
//! MCP client on stdin/stdout until EOF or a termination signal.

use dsh_tools::frontends::mcp::{McpFront, serve};
use dsh_tools_protocol::{HostConfig, PresentationMode};
use tokio_util::sync::CancellationToken;

/// Serves MCP in `mode` (the configured `tools.mode` unless overridden); every ingested
/// server is terminated and reaped before this returns.
pub async fn serve_mcp(
    config: &HostConfig,
    mode: Option<PresentationMode>,
    stop: CancellationToken,
) -> anyhow::Result<()> {
    let mode = mode.unwrap_or(config.tools.mode);
    let local = super::local_runtime(config, mode).await?;
    if mode != PresentationMode::Native
        && let Err(e) = local.code.prewarm().await
    {
        tracing::warn!("{e}");
    }
    let metrics = local.policy.metrics.clone();
    let front = McpFront::new(local.runtime.clone(), mode, metrics)
        .with_language(config.code_runtime.language);
    let served = serve(front, tokio::io::stdin(), tokio::io::stdout(), stop).await;
    local.mcp.shutdown().await;
    local.runtime.spill().cleanup();
    Ok(served?)
}
