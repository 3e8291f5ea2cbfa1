//! `dsh-tools mcp`: the registry (built-ins, ingested MCP servers, Code Mode) served to an
//! MCP client on stdin/stdout until EOF or a termination signal, or with `--http` to many
//! clients over Streamable HTTP until a termination signal.

use dsh_tools::frontends::mcp::gate::{Gate, TokenSource};
use dsh_tools::frontends::mcp::http::{self, HttpOptions};
use dsh_tools::frontends::mcp::{ForwardingElicitor, McpFront, serve};
use dsh_tools::host::Host;
use dsh_tools::transport::stdio;
use dsh_tools_protocol::{HostConfig, PresentationMode};
use std::io::Write;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// Serves MCP in `mode` (the configured `tools.mode` unless overridden), over stdio or,
/// with `over_http`, over Streamable HTTP; every ingested server is terminated and reaped
/// before this returns.
pub async fn serve_mcp(
    config: &HostConfig,
    mode: Option<PresentationMode>,
    over_http: Option<HttpOptions>,
    elicit: Option<super::ElicitPolicy>,
    stop: CancellationToken,
) -> anyhow::Result<()> {
    let mode = mode.unwrap_or(config.tools.mode);
    // Bind before starting anything: a refused address fails fast.
    let listening = match &over_http {
        Some(options) => Some(http::bind(options).await?),
        None => None,
    };
    // Servers' elicitations go to the calling client, else to `--elicit`; their OAuth
    // browser steps to a client that declared URL elicitation, else to stderr.
    let elicitor = Arc::new(ForwardingElicitor::new(super::elicit::fallback(elicit)));
    let host =
        Host::assemble_eliciting(config, mode, Some(elicitor.clone()), Some(elicitor.clone()))
            .await?;
    if mode != PresentationMode::Native
        && let Err(e) = host.code.prewarm().await
    {
        tracing::warn!("{e}");
    }
    let front = McpFront::new(host.runtime.clone(), mode, host.metrics_table())
        .with_language(config.code_runtime.language)
        .forwarding_exits(&host.exec)
        .forwarding_elicitation(&elicitor);
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

/// Who may use the `--http` server: the bearer token (from an environment variable, or
/// generated and printed), also accepted bare in a header of the user's choosing, and
/// loopback peers without it when opted in.
#[derive(Clone, Debug, Default)]
pub struct HttpAccess {
    /// `--http-token-env`.
    pub token_env: Option<String>,
    /// `--http-token-header`.
    pub token_header: Option<String>,
    /// `--http-no-auth-loopback`.
    pub no_auth_loopback: bool,
}

/// The `--http` options, with the token read from `access.token_env` or generated (and
/// then printed to stderr: the only place it is shown).
pub fn http_options(
    addr: std::net::SocketAddr,
    allow_remote: bool,
    access: &HttpAccess,
    allowed_origins: Vec<String>,
    limits: &HttpLimitArgs,
) -> anyhow::Result<HttpOptions> {
    let header = access
        .token_header
        .as_deref()
        .map(|name| {
            name.parse::<::http::header::HeaderName>().map_err(|_| {
                anyhow::anyhow!("--http-token-header {name:?}: not a valid HTTP header name")
            })
        })
        .transpose()?;
    if header.as_ref() == Some(&::http::header::AUTHORIZATION) {
        anyhow::bail!(
            "--http-token-header Authorization: Authorization already takes the token (as `Bearer <token>`); name another header"
        );
    }
    let (token, source) = match access.token_env.as_deref() {
        Some(var) => std::env::var(var)
            .ok()
            .filter(|token| !token.is_empty())
            .map(|token| (token, TokenSource::Env(var.to_owned())))
            .ok_or_else(|| {
                anyhow::anyhow!("--http-token-env {var}: the variable is unset or empty")
            })?,
        None => {
            let token = http::generate_token()?;
            let _ = writeln!(std::io::stderr(), "dsh-tools mcp: bearer token {token}");
            (token, TokenSource::Printed)
        }
    };
    if access.no_auth_loopback && addr.ip().is_loopback() {
        let _ = writeln!(
            std::io::stderr(),
            "dsh-tools mcp: --http-no-auth-loopback: clients on this machine need no token"
        );
    }
    Ok(HttpOptions {
        addr,
        allow_remote,
        gate: Gate::new(&token, source, header, access.no_auth_loopback),
        allowed_origins,
        max_body_bytes: limits.max_body,
        idle: Duration::from_secs(limits.idle_secs.max(1)),
        max_connections: limits.max_connections.max(1),
        max_connections_per_peer: limits.max_connections_per_peer.max(1),
        header_timeout: Duration::from_millis(limits.header_timeout_ms.max(1)),
        auth_timeout: Duration::from_millis(limits.auth_timeout_ms.max(1)),
    })
}

/// The `--http` server's limits, as flags of `dsh-tools mcp`.
#[derive(clap::Args, Clone, Debug)]
pub struct HttpLimitArgs {
    /// Largest request body accepted, in bytes (larger ones get 413).
    #[arg(long = "http-max-body", value_name = "BYTES", default_value_t = 4 * 1024 * 1024)]
    pub max_body: usize,
    /// Seconds a session may stay idle before it expires (its agent scope closes).
    #[arg(long = "http-idle-secs", value_name = "SECS", default_value_t = 300)]
    pub idle_secs: u64,
    /// Most connections open at once; one more is answered 503 and closed at once.
    #[arg(
        long = "http-max-connections",
        value_name = "N",
        default_value_t = 1024
    )]
    pub max_connections: usize,
    /// Most connections open at once from one IP address (503 past it).
    #[arg(
        long = "http-max-connections-per-peer",
        value_name = "N",
        default_value_t = 256
    )]
    pub max_connections_per_peer: usize,
    /// Milliseconds a request head may take to arrive, and a keep-alive connection may
    /// idle between requests, before the connection is closed.
    #[arg(
        long = "http-header-timeout-ms",
        value_name = "MS",
        default_value_t = 10_000
    )]
    pub header_timeout_ms: u64,
    /// Milliseconds a connection may stay open without a request carrying the bearer
    /// token before it is closed.
    #[arg(
        long = "http-auth-timeout-ms",
        value_name = "MS",
        default_value_t = 30_000
    )]
    pub auth_timeout_ms: u64,
}
