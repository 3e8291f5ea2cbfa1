//! `dsh-tools mcp --http ADDR`: the registry served over MCP's Streamable HTTP transport
//! to many clients at once, on rmcp's own server side (`StreamableHttpService` with its
//! local session manager) under a plain hyper HTTP/1.1 listener.
//!
//! Decisions (the MCP spec's security guidance for local servers):
//! - **Bind**: loopback only, unless `allow_remote` (a remote bind also lifts the `Host`
//!   check, which only loopback names would pass).
//! - **Bearer token**: every request must carry `Authorization: Bearer <token>`, compared in
//!   constant time; anything else is 401 with `WWW-Authenticate: Bearer`, before rmcp
//!   sees the request.
//! - **Origin**: validated on every request that carries one (browsers always do): only the
//!   server's own loopback origins and the configured ones pass, others are 403 (DNS
//!   rebinding); requests without `Origin` (non-browser clients) pass. The `Host` header
//!   must name a loopback host (rmcp's check), also 403 otherwise.
//! - **Limits**: request bodies over `max_body_bytes` are 413; a session idle for `idle`
//!   expires (its scope closes; the client gets 404 and re-initializes).
//! - **Sessions**: each MCP session's server is a [`McpFront::session`] in an agent scope
//!   `mcp-http-<n>` of its own, sharing the host's tools, policy and pools.

use super::McpFront;
use bytes::Bytes;
use http::{Request, Response, StatusCode, header};
use http_body_util::{BodyExt, Full, combinators::BoxBody};
use hyper_util::rt::TokioIo;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

/// The MCP endpoint's path.
pub const PATH: &str = "/mcp";

/// How `dsh-tools mcp --http` serves.
#[derive(Clone, Debug)]
pub struct HttpOptions {
    /// Where to listen (port 0: any free port).
    pub addr: SocketAddr,
    /// Allow a non-loopback `addr`.
    pub allow_remote: bool,
    /// The bearer token every request must carry.
    pub token: String,
    /// Browser origins allowed besides the server's own loopback ones.
    pub allowed_origins: Vec<String>,
    /// Largest request body accepted.
    pub max_body_bytes: usize,
    /// How long a session may stay idle before it expires.
    pub idle: Duration,
}

/// Why serving over HTTP could not start.
#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    /// A non-loopback address without `--http-allow-remote`.
    #[error(
        "--http {0}: not a loopback address; pass --http-allow-remote to listen on other interfaces (every client still needs the bearer token)"
    )]
    NotLoopback(SocketAddr),
    /// The listener could not bind.
    #[error("--http {0}: cannot listen: {1}")]
    Bind(SocketAddr, std::io::Error),
}

/// A bound listener, before serving.
pub struct Listening {
    listener: TcpListener,
    /// The address actually bound (the port chosen when 0 was asked).
    pub local: SocketAddr,
}

/// Binds `options.addr`, refusing a non-loopback address unless `allow_remote`.
pub async fn bind(options: &HttpOptions) -> Result<Listening, HttpError> {
    if !options.addr.ip().is_loopback() && !options.allow_remote {
        return Err(HttpError::NotLoopback(options.addr));
    }
    let listener = TcpListener::bind(options.addr)
        .await
        .map_err(|e| HttpError::Bind(options.addr, e))?;
    let local = listener
        .local_addr()
        .map_err(|e| HttpError::Bind(options.addr, e))?;
    Ok(Listening { listener, local })
}

/// A fresh random token (32 bytes from the kernel, hex).
pub fn generate_token() -> std::io::Result<String> {
    use std::io::Read;
    let mut bytes = [0u8; 32];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut bytes)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

type Body = BoxBody<Bytes, Infallible>;

/// Serves `front`'s registry on `listening` until `stop` fires; every session gets its own
/// [`McpFront::session`].
pub async fn serve_http(
    front: McpFront,
    listening: Listening,
    options: HttpOptions,
    stop: CancellationToken,
) {
    let port = listening.local.port();
    let mut origins: Vec<String> = ["localhost", "127.0.0.1", "[::1]"]
        .iter()
        .map(|host| format!("http://{host}:{port}"))
        .collect();
    origins.extend(options.allowed_origins.iter().cloned());
    let sessions = stop.child_token();
    let mut config = StreamableHttpServerConfig::default()
        .with_allowed_origins(origins)
        .enforce_origin_validation()
        .with_max_request_body_bytes(options.max_body_bytes)
        .with_cancellation_token(sessions.clone());
    if options.allow_remote {
        config = config.disable_allowed_hosts();
    }
    let mut manager = LocalSessionManager::default();
    manager.session_config.keep_alive = Some(options.idle);
    let front = Arc::new(front.announcing());
    let next = Arc::new(AtomicU64::new(0));
    let service = StreamableHttpService::new(
        move || {
            let agent = format!("mcp-http-{}", next.fetch_add(1, Ordering::Relaxed) + 1);
            front
                .session(Arc::from(agent))
                .map_err(|e| std::io::Error::other(e.to_string()))
        },
        Arc::new(manager),
        config,
    );
    let token: Arc<str> = Arc::from(format!("Bearer {}", options.token));
    loop {
        let accepted = tokio::select! {
            () = stop.cancelled() => break,
            accepted = listening.listener.accept() => accepted,
        };
        let stream = match accepted {
            Ok((stream, _)) => stream,
            Err(e) => {
                tracing::warn!(target: "mcp", "accepting an HTTP connection failed: {e}");
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let (service, token) = (service.clone(), token.clone());
        let handler = hyper::service::service_fn(move |request: Request<hyper::body::Incoming>| {
            let (service, token) = (service.clone(), token.clone());
            async move { Ok::<_, Infallible>(answer(&service, &token, request).await) }
        });
        let connection_stop = sessions.clone();
        tokio::spawn(async move {
            let connection = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), handler);
            tokio::select! {
                () = connection_stop.cancelled() => {}
                served = connection => {
                    if let Err(e) = served {
                        tracing::debug!(target: "mcp", "HTTP connection ended: {e}");
                    }
                }
            }
        });
    }
    sessions.cancel();
}

/// 401 unless the request carries the token; otherwise rmcp's answer.
async fn answer(
    service: &StreamableHttpService<McpFront, LocalSessionManager>,
    token: &str,
    request: Request<hyper::body::Incoming>,
) -> Response<Body> {
    let presented = request
        .headers()
        .get(header::AUTHORIZATION)
        .map(|value| value.as_bytes())
        .unwrap_or_default();
    if !constant_time_eq(presented, token.as_bytes()) {
        let mut response = Response::new(
            Full::new(Bytes::from_static(
                b"Unauthorized: a bearer token is required",
            ))
            .boxed(),
        );
        *response.status_mut() = StatusCode::UNAUTHORIZED;
        response.headers_mut().insert(
            header::WWW_AUTHENTICATE,
            header::HeaderValue::from_static("Bearer"),
        );
        return response;
    }
    if request.uri().path() != PATH {
        let mut response = Response::new(Full::new(Bytes::from_static(b"Not Found")).boxed());
        *response.status_mut() = StatusCode::NOT_FOUND;
        return response;
    }
    service.handle(request).await
}

/// Equality whose time depends only on the lengths.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_compare_whole() {
        assert!(constant_time_eq(b"Bearer abc", b"Bearer abc"));
        assert!(!constant_time_eq(b"Bearer abd", b"Bearer abc"));
        assert!(!constant_time_eq(b"Bearer ab", b"Bearer abc"));
        assert!(!constant_time_eq(b"", b"Bearer abc"));
    }
}
