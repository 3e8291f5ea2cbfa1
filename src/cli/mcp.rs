//! `dsh-tools mcp`: the registry (built-ins, ingested MCP servers, Code Mode) served to an
//! MCP client on stdin/stdout until EOF or a termination signal, or with `--http` to many
//! clients over Streamable HTTP until a termination signal.

use dsh_tools::frontends::mcp::http::{self, HttpOptions};
use dsh_tools::frontends::mcp::{McpFront, serve};
use dsh_tools::host::Host;
use dsh_tools::transport::stdio;
use dsh_tools_protocol::{HostConfig, PresentationMode};
use std::io::Write;
use tokio_util::sync::CancellationToken;

/// Serves MCP in `mode` (the configured `tools.mode` unless overridden), over stdio or,
/// with `over_http`, over Streamable HTTP; every ingested server is terminated and reaped
/// before this returns.
pub async fn serve_mcp(
    config: &HostConfig,
    mode: Option<PresentationMode>,
    over_http: Option<HttpOptions>,
    stop: CancellationToken,
) -> anyhow::Result<()> {
    let mode = mode.unwrap_or(config.tools.mode);
    // Bind before starting anything: a refused address fails fast.
    let listening = match &over_http {
        Some(options) => Some(http::bind(options).await?),
        None => None,
    };
    let host = Host::assemble(config, mode).await?;
    if mode != PresentationMode::Native
        && let Err(e) = host.code.prewarm().await
    {
        tracing::warn!("{e}");
    }
    let front = McpFront::new(host.runtime.clone(), mode, host.metrics_table())
        .with_language(config.code_runtime.language);
    let served = match (over_http, listening) {
        (Some(options), Some(listening)) => {
            // The one line a launcher reads to find the server (and, when generated, its
            // token); written once everything is ready to serve.
            let _ = writeln!(
                std::io::stderr(),
                "dsh-tools mcp: listening on http://{}{}",
                listening.local,
                http::PATH
            );
            http::serve_http(front, listening, options, stop).await;
            Ok(())
        }
        _ => serve(front, stdio::stdin(), stdio::stdout(), stop).await,
    };
    host.shutdown().await;
    Ok(served?)
}

/// The `--http` options, with the token read from `token_env` or generated (and then
/// printed to stderr: the only place it is shown).
pub fn http_options(
    addr: std::net::SocketAddr,
    allow_remote: bool,
    token_env: Option<&str>,
    allowed_origins: Vec<String>,
    max_body_bytes: usize,
    idle_secs: u64,
) -> anyhow::Result<HttpOptions> {
    let token = match token_env {
        Some(var) => std::env::var(var)
            .ok()
            .filter(|token| !token.is_empty())
            .ok_or_else(|| {
                anyhow::anyhow!("--http-token-env {var}: the variable is unset or empty")
            })?,
        None => {
            let token = http::generate_token()?;
            let _ = writeln!(std::io::stderr(), "dsh-tools mcp: bearer token {token}");
            token
        }
    };
    Ok(HttpOptions {
        addr,
        allow_remote,
        token,
        allowed_origins,
        max_body_bytes,
        idle: std::time::Duration::from_secs(idle_secs.max(1)),
    })
}
