//! `dsh-tools mcp --http ADDR`: the registry served over MCP's Streamable HTTP transport
//! to many clients at once, on rmcp's own server side (`StreamableHttpService` with its
//! local session manager) under a plain hyper HTTP/1.1 listener.
//!
//! Decisions (the MCP spec's security guidance for local servers):
//! - **Bind**: loopback only, unless `allow_remote` (a remote bind also lifts the `Host`
//!   check, which only loopback names would pass).
//! - **Token** ([`gate`](super::gate)): every request must carry `Authorization: Bearer
//!   <token>` (or the bare token in the `--http-token-header` header), compared in constant
//!   time; anything else is 401 with a `WWW-Authenticate: Bearer` challenge saying where the
//!   token is, before rmcp sees the request. `--http-no-auth-loopback` lets loopback peers
//!   in without it (loopback binds only).
//! - **Origin**: validated on every request that carries one (browsers always do): only the
//!   server's own loopback origins and the configured ones pass, others are 403 (DNS
//!   rebinding); requests without `Origin` (non-browser clients) pass. The `Host` header
//!   must name a loopback host (rmcp's check), also 403 otherwise.
//! - **Limits**: request bodies over `max_body_bytes` are 413; a session idle for `idle`
//!   expires (its scope closes; the client gets 404 and re-initializes).
//! - **Connections** ([`admission`](super::admission)): at most `max_connections` open and
//!   `max_connections_per_peer` from one address; one past either cap is answered 503 and
//!   closed as soon as it is accepted. A request head not complete within
//!   `header_timeout` (slowloris; an idle keep-alive connection too) closes its connection,
//!   and so does having made no request with the token within `auth_timeout` of connecting.
//!   An accept that fails for want of descriptors or memory pauses the loop for
//!   [`ACCEPT_PAUSE`] (the connection stays queued: retrying at once would spin).
//! - **Resumable streams** ([`replay`](super::replay)): every SSE event carries an id and
//!   is kept for a bounded window, so a client that lost a stream reconnects with
//!   `Last-Event-ID` and gets what it missed, the tool response included.
//! - **DELETE** of a session answers 200 (rmcp answers 202, which clients such as the
//!   Python SDK take for a failed termination).
//! - **Sessions**: each MCP session's server is a [`McpFront::session`] in an agent scope
//!   `mcp-http-<n>` of its own, sharing the host's tools, policy and pools.

use super::McpFront;
use super::admission::{Admission, Refused};
use super::gate::Gate;
use super::replay::{ReplayLimits, ReplayStore};
use bytes::Bytes;
use http::{Method, Request, Response, StatusCode};
use http_body_util::{BodyExt, Full, combinators::BoxBody};
use hyper_util::rt::{TokioIo, TokioTimer};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;

/// The MCP endpoint's path.
pub const PATH: &str = "/mcp";

/// How long the accept loop rests after an accept failed for want of file descriptors or
/// memory: long enough that the loop costs nothing while the host is at its limit, short
/// enough that a freed descriptor is used soon.
pub const ACCEPT_PAUSE: Duration = Duration::from_millis(100);

/// What a connection past a cap is told before it is closed.
const REFUSED: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\nContent-Length: 20\r\nRetry-After: 1\r\nConnection: close\r\n\r\ntoo many connections";

/// How `dsh-tools mcp --http` serves.
#[derive(Clone, Debug)]
pub struct HttpOptions {
    /// Where to listen (port 0: any free port).
    pub addr: SocketAddr,
    /// Allow a non-loopback `addr`.
    pub allow_remote: bool,
    /// Who may pass: the token (also in a header of the user's choosing), loopback peers
    /// without it when opted in (refused with a non-loopback `addr`).
    pub gate: Gate,
    /// Browser origins allowed besides the server's own loopback ones.
    pub allowed_origins: Vec<String>,
    /// Largest request body accepted.
    pub max_body_bytes: usize,
    /// How long a session may stay idle before it expires.
    pub idle: Duration,
    /// Most connections open at once.
    pub max_connections: usize,
    /// Most connections open at once from one IP address.
    pub max_connections_per_peer: usize,
    /// How long a request head may take to arrive (and a keep-alive connection may idle).
    pub header_timeout: Duration,
    /// How long a connection may stay open without a request carrying the token.
    pub auth_timeout: Duration,
}

/// Why serving over HTTP could not start.
#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    /// A non-loopback address without `--http-allow-remote`.
    #[error(
        "--http {0}: not a loopback address; pass --http-allow-remote to listen on other interfaces (every client still needs the bearer token)"
    )]
    NotLoopback(SocketAddr),
    /// `--http-no-auth-loopback` with a non-loopback address.
    #[error(
        "--http {0}: --http-no-auth-loopback is only for a loopback address (every client on another interface needs the bearer token)"
    )]
    NoAuthNotLoopback(SocketAddr),
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

/// Binds `options.addr`, refusing a non-loopback address unless `allow_remote`, and always
/// when loopback peers need no token.
pub async fn bind(options: &HttpOptions) -> Result<Listening, HttpError> {
    if !options.addr.ip().is_loopback() && options.gate.loopback_free() {
        return Err(HttpError::NoAuthNotLoopback(options.addr));
    }
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
    let replay = Arc::new(ReplayStore::new(ReplayLimits::default()));
    let mut manager = LocalSessionManager::default().with_event_store(replay);
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
    let gate = Arc::new(options.gate.clone());
    let admission = Admission::new(options.max_connections, options.max_connections_per_peer);
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(options.header_timeout);
    let mut failing = false;
    loop {
        let accepted = tokio::select! {
            () = stop.cancelled() => break,
            accepted = listening.listener.accept() => accepted,
        };
        let (stream, peer) = match accepted {
            Ok(accepted) => accepted,
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionAborted => continue,
            Err(e) => {
                if !failing {
                    tracing::warn!(target: "mcp", "accepting an HTTP connection failed: {e}; pausing {} ms between attempts until one succeeds", ACCEPT_PAUSE.as_millis());
                }
                failing = true;
                tokio::select! {
                    () = stop.cancelled() => break,
                    () = tokio::time::sleep(ACCEPT_PAUSE) => continue,
                }
            }
        };
        failing = false;
        let seat = match admission.admit(peer.ip()) {
            Ok(seat) => seat,
            Err(why) => {
                refuse(&stream, peer, why);
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let authenticated = Arc::new(AtomicBool::new(false));
        let (service, gate, flag) = (service.clone(), gate.clone(), authenticated.clone());
        let handler = hyper::service::service_fn(move |request: Request<hyper::body::Incoming>| {
            let (service, gate, flag) = (service.clone(), gate.clone(), flag.clone());
            async move { Ok::<_, Infallible>(answer(&service, &gate, peer, &flag, request).await) }
        });
        let connection = builder.serve_connection(TokioIo::new(stream), handler);
        let connection_stop = sessions.clone();
        let auth_timeout = options.auth_timeout;
        tokio::spawn(async move {
            let _seat = seat;
            let mut connection = std::pin::pin!(connection);
            tokio::select! {
                () = connection_stop.cancelled() => return,
                served = &mut connection => return ended(served),
                () = tokio::time::sleep(auth_timeout) => {}
            }
            if !authenticated.load(Ordering::Acquire) {
                tracing::debug!(target: "mcp", "closed an HTTP connection from {peer}: no request with the token within {} ms", auth_timeout.as_millis());
                return;
            }
            tokio::select! {
                () = connection_stop.cancelled() => {}
                served = connection => ended(served),
            }
        });
    }
    sessions.cancel();
}

/// Logs how a connection ended, if badly (a header timeout among others).
fn ended(served: hyper::Result<()>) {
    if let Err(e) = served {
        tracing::debug!(target: "mcp", "HTTP connection ended: {e}");
    }
}

/// Answers a connection past a cap with 503 (if its socket takes it at once) and closes it.
fn refuse(stream: &TcpStream, peer: SocketAddr, why: Refused) {
    let _ = stream.try_write(REFUSED);
    let cap = match why {
        Refused::Total => "the connection cap",
        Refused::Peer => "the per-peer connection cap",
    };
    tracing::debug!(target: "mcp", "refused an HTTP connection from {peer}: {cap} is reached");
}

/// 401 unless the request may pass (which marks its connection `authenticated`);
/// otherwise rmcp's answer, a session's DELETE answered 200 rather than 202.
async fn answer(
    service: &StreamableHttpService<McpFront, LocalSessionManager>,
    gate: &Gate,
    peer: SocketAddr,
    authenticated: &AtomicBool,
    request: Request<hyper::body::Incoming>,
) -> Response<Body> {
    if !gate.admits(request.headers(), peer.ip()) {
        return gate.refusal(request.headers());
    }
    authenticated.store(true, Ordering::Release);
    if request.uri().path() != PATH {
        let mut response = Response::new(Full::new(Bytes::from_static(b"Not Found")).boxed());
        *response.status_mut() = StatusCode::NOT_FOUND;
        return response;
    }
    let deleting = request.method() == Method::DELETE;
    let mut response = service.handle(request).await;
    if deleting && response.status() == StatusCode::ACCEPTED {
        *response.status_mut() = StatusCode::OK;
    }
    response
}
