//! One task per configured server: spawn (or connect over Streamable HTTP), handshake,
//! list and register, follow `list_changed`, notice a crash (a child's exit; a remote
//! server's failed call or ping), restart with backoff, and stop on shutdown with the
//! child terminated and reaped (a remote session deleted).

use super::catalog::{Catalog, list_all};
use super::client::ClientEvents;
use super::link::Link;
use super::oauth::Authorized;
use super::process::{self, ServerProcess};
use super::progress::{Ordered, ProgressRoutes};
use super::remote::{Remote, describe_handshake};
use super::stdout::{BoundedStdout, MAX_MESSAGE, StdoutWatch};
use super::timing::{
    DEFAULT_STARTUP, EXIT_REPORT, FIRST_BACKOFF, MAX_ATTEMPTS, MAX_BACKOFF, PING_DEADLINE,
    PING_EVERY, STABLE_AFTER, STARTUP_FLOOR,
};
use crate::config::expand::expand_server;
use crate::registry::Registry;
use dsh_tools_protocol::{McpServerConfig, McpServerKind, McpServerState};
use rmcp::RoleClient;
use rmcp::model::{ClientRequest, CustomRequest};
use rmcp::service::{Peer, RunningService, serve_client};
use rmcp::transport::IntoTransport;
use rmcp::transport::async_rw::AsyncRwTransport;
use serde_json::Value;
use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::{Notify, watch};
use tokio_util::sync::CancellationToken;

/// Supervises one server until `stop` fires.
pub struct Supervisor {
    /// The server's shared state.
    pub link: Arc<Link>,
    /// Its configuration.
    pub config: McpServerConfig,
    /// Its sandbox, checked when the host started it.
    pub sandbox: crate::process::Sandbox,
    /// Where its tools are registered.
    pub registry: Arc<Registry>,
    /// Fires on host shutdown.
    pub stop: CancellationToken,
    /// Set once the first attempt settled (running or failed).
    pub settled: watch::Sender<bool>,
    /// Where its OAuth authorization URLs go.
    pub browser: Arc<super::oauth::Browser>,
}

/// How a connected server is reached.
enum Endpoint {
    /// A spawned child on stdio, and the end of its stdout.
    Child(Box<ServerProcess>, Arc<StdoutWatch>),
    /// A remote server over Streamable HTTP; `lost` is raised by a call that failed on
    /// the transport.
    Remote { lost: Arc<Notify> },
}

/// A connected server.
struct Connection {
    endpoint: Endpoint,
    client: RunningService<RoleClient, ClientEvents>,
    list_changed: Arc<Notify>,
}

/// What a handshake and first listing produced.
type Started = (RunningService<RoleClient, ClientEvents>, Vec<Value>);

/// How a startup within its deadline went.
enum Startup {
    Ready(Started),
    Failed(String),
    /// The server answered, but with something the client cannot use (a protocol version
    /// it does not speak): its exit, which follows the client closing, is no explanation.
    Refused(String),
    TimedOut(String),
    /// The server answered 401 with this `WWW-Authenticate`; the text says so.
    Unauthorized(String, String),
}

/// Why a handshake did not give a usable session.
enum HandshakeFailure {
    /// The handshake or listing failed (the server's exit may say more).
    Failed(String),
    /// The server's answer cannot be used.
    Refused(String),
    /// The server answered 401 with this `WWW-Authenticate`; the text says so.
    Unauthorized(String, String),
}

/// What woke a running server's supervisor.
enum Event {
    Stop,
    Exited(String),
    ListChanged,
}

/// Why an attempt ended.
enum Ended {
    /// Host shutdown.
    Stopped,
    /// The server failed or exited; the text says how.
    Failed(String),
    /// The server needs an authorization that failed: no retry can succeed on its own.
    Unauthorized(String),
}

impl Supervisor {
    /// Runs until shutdown; the child is reaped before this returns.
    pub async fn run(mut self) {
        let remote = match self.resolve(|var| std::env::var(var).ok()) {
            Ok(remote) => remote,
            Err(error) => {
                // A configuration problem: no attempt could succeed.
                tracing::warn!(target: "mcp", "[{}] {error}", self.link.name);
                self.link.update(|s| {
                    s.state = McpServerState::Failed;
                    s.last_error = Some(error);
                });
                self.settled.send_replace(true);
                self.stop.cancelled().await;
                self.link.update(|s| s.state = McpServerState::Stopped);
                return;
            }
        };
        let mut catalog = Catalog::default();
        let mut failures = 0u32;
        loop {
            let started = Instant::now();
            let ended = self.attempt(remote.as_ref(), &mut catalog).await;
            self.link.set_peer(None);
            let (error, final_failure) = match ended {
                Ended::Stopped => break,
                Ended::Failed(error) => (error, false),
                Ended::Unauthorized(error) => (error, true),
            };
            let error = self.link.redact(error);
            tracing::warn!(target: "mcp", "[{}] {error}", self.link.name);
            failures = if started.elapsed() >= STABLE_AFTER {
                1
            } else {
                failures + 1
            };
            let state = if final_failure || (remote.is_none() && failures >= MAX_ATTEMPTS) {
                McpServerState::Failed
            } else {
                McpServerState::Restarting
            };
            self.link.update(|s| {
                s.state = state;
                s.last_error = Some(error);
            });
            self.settled.send_replace(true);
            if state == McpServerState::Failed {
                self.stop.cancelled().await;
                return;
            }
            let backoff = (FIRST_BACKOFF * 2u32.pow((failures - 1).min(16))).min(MAX_BACKOFF);
            if self
                .until_stopped(tokio::time::sleep(backoff))
                .await
                .is_none()
            {
                break;
            }
        }
        self.link.update(|s| s.state = McpServerState::Stopped);
    }

    /// One life of the server: start it, serve its tools until it exits or the host stops.
    async fn attempt(&self, remote: Option<&Remote>, catalog: &mut Catalog) -> Ended {
        let connected = match remote {
            Some(remote) => self.connect_remote(remote, catalog).await,
            None => self.connect_child(catalog).await,
        };
        let mut connection = match connected {
            Ok(connection) => connection,
            Err(ended) => return ended,
        };
        self.settled.send_replace(true);
        let peer = connection.client.peer().clone();
        loop {
            let event = tokio::select! {
                () = self.stop.cancelled() => Event::Stop,
                how = ended(&mut connection.endpoint, &self.link, &peer) => Event::Exited(how),
                () = connection.list_changed.notified() => Event::ListChanged,
            };
            match event {
                Event::Stop => {
                    let _ = tokio::time::timeout(PING_DEADLINE, connection.client.close()).await;
                    if let Endpoint::Child(process, _) = connection.endpoint {
                        process.terminate().await;
                    }
                    return Ended::Stopped;
                }
                Event::Exited(how) => {
                    let _ = tokio::time::timeout(PING_DEADLINE, connection.client.close()).await;
                    // A server whose stdout ended but that kept running is ended here
                    // (one that exited is only reaped).
                    if let Endpoint::Child(process, _) = connection.endpoint {
                        process.terminate().await;
                    }
                    return Ended::Failed(self.link.with_stderr(how));
                }
                Event::ListChanged => match self.until_stopped(list_all(&peer)).await {
                    Some(Ok(listed)) => self.publish(catalog, listed),
                    Some(Err(e)) => self.link.update(|s| s.last_error = Some(e.text)),
                    None => {}
                },
            }
        }
    }

    /// Expands `${VAR}` and `${VAR:-default}` in the configuration (with `env`, the host's
    /// environment) and resolves a remote server's headers and token; an error is a
    /// configuration problem that no attempt could overcome.
    fn resolve(&mut self, env: impl Fn(&str) -> Option<String>) -> Result<Option<Remote>, String> {
        if self.config.kind == Some(McpServerKind::Sse) {
            return Err(
                "type \"sse\" (the deprecated HTTP+SSE transport) is not supported: \
                 give the server's Streamable HTTP endpoint with type \"http\""
                    .into(),
            );
        }
        self.config = expand_server(&self.config, &env)?;
        let Some(url) = &self.config.url else {
            return Ok(None);
        };
        if !crate::config::is_http_url(url) {
            return Err(format!("url {}", crate::config::URL_RULE));
        }
        let remote =
            Remote::resolve(&self.config, env)?.with_oauth(&self.link.name, self.browser.clone());
        self.link.set_secrets(remote.secrets());
        Ok(Some(remote))
    }

    /// The handshake and first listing deadline.
    fn startup_deadline(&self) -> Duration {
        match (self.config.startup_timeout_ms, self.config.timeout_ms) {
            (Some(ms), _) => Duration::from_millis(ms),
            (None, Some(ms)) => Duration::from_millis(ms).max(STARTUP_FLOOR),
            (None, None) => DEFAULT_STARTUP,
        }
    }

    /// `startup` within the startup deadline: `None` when the host stopped first.
    async fn start(
        &self,
        startup: impl Future<Output = Result<Started, HandshakeFailure>>,
    ) -> Option<Startup> {
        let deadline = self.startup_deadline();
        let outcome = tokio::select! {
            () = self.stop.cancelled() => return None,
            outcome = tokio::time::timeout(deadline, startup) => outcome,
        };
        Some(match outcome {
            Ok(Ok(started)) => Startup::Ready(started),
            Ok(Err(HandshakeFailure::Failed(e))) => Startup::Failed(e),
            Ok(Err(HandshakeFailure::Refused(e))) => Startup::Refused(e),
            Ok(Err(HandshakeFailure::Unauthorized(challenge, e))) => {
                Startup::Unauthorized(challenge, e)
            }
            Err(_) => Startup::TimedOut(format!(
                "the server did not complete the MCP handshake and tools/list within {} ms",
                deadline.as_millis()
            )),
        })
    }

    /// Connects to a remote server over Streamable HTTP (authorizing with OAuth first when
    /// it answers 401 and may), then publishes its tools.
    async fn connect_remote(
        &self,
        remote: &Remote,
        catalog: &mut Catalog,
    ) -> Result<Connection, Ended> {
        // Saved tokens need the authorization server's metadata again: an unresponsive one
        // costs at most the startup deadline, then the server is tried without them.
        let saved = tokio::time::timeout(self.startup_deadline(), remote.authorized());
        let Some(authorized) = self.until_stopped(saved).await else {
            return Err(Ended::Stopped);
        };
        let authorized = authorized.unwrap_or_else(|_| {
            tracing::warn!(target: "mcp", "[{}] the authorization server did not answer within the startup deadline; connecting without the saved OAuth tokens", self.link.name);
            None
        });
        let (mut startup, mut list_changed) = self.start_remote(remote, authorized.clone()).await;
        let mut authorized = authorized;
        if let Some(Startup::Unauthorized(challenge, _)) = &startup
            && let Some(oauth) = remote.oauth()
        {
            if oauth.settles_before_the_browser_step() {
                // Its client is served meanwhile; the tools come with the authorization.
                self.settled.send_replace(true);
            }
            let fresh = match self.until_stopped(oauth.authorize(challenge)).await {
                None => return Err(Ended::Stopped),
                Some(Err(e)) => {
                    return Err(Ended::Unauthorized(format!(
                        "could not connect to {}: it requires OAuth authorization, which failed: {e}",
                        remote.shown_url()
                    )));
                }
                Some(Ok(authorized)) => authorized,
            };
            remote.set_authorized(fresh.clone()).await;
            (startup, list_changed) = self.start_remote(remote, Some(fresh.clone())).await;
            authorized = Some(fresh);
        }
        let step_up = remote
            .oauth()
            .zip(authorized)
            .map(|(oauth, authorized)| oauth.step_up(authorized));
        self.link.set_step_up(step_up);
        match startup {
            None => Err(Ended::Stopped),
            Some(Startup::Ready((client, listed))) => {
                let lost = Arc::new(Notify::new());
                self.link
                    .set_peer(Some((client.peer().clone(), lost.clone())));
                self.log_version(client.peer());
                self.publish(catalog, listed);
                Ok(Connection {
                    endpoint: Endpoint::Remote { lost },
                    client,
                    list_changed,
                })
            }
            Some(Startup::Unauthorized(_, e)) if remote.oauth().is_some() => {
                Err(Ended::Unauthorized(format!(
                    "could not connect to {}: {e} after OAuth authorization",
                    remote.shown_url()
                )))
            }
            Some(
                Startup::Failed(e)
                | Startup::Refused(e)
                | Startup::TimedOut(e)
                | Startup::Unauthorized(_, e),
            ) => Err(Ended::Failed(format!(
                "could not connect to {}: {e}",
                remote.shown_url()
            ))),
        }
    }

    /// One handshake with a remote server, sending `authorized`'s OAuth token if given.
    async fn start_remote(
        &self,
        remote: &Remote,
        authorized: Option<Authorized>,
    ) -> (Option<Startup>, Arc<Notify>) {
        let (events, list_changed) = ClientEvents::new(self.link.asking.clone());
        let progress = &self.link.progress;
        let startup = match authorized {
            Some(client) => {
                let transport = remote.authorized_transport(client);
                self.start(handshake(events, transport, progress)).await
            }
            None => {
                self.start(handshake(events, remote.transport(), progress))
                    .await
            }
        };
        (startup, list_changed)
    }

    /// Spawns, handshakes and lists within the startup deadline, then publishes the tools.
    async fn connect_child(&self, catalog: &mut Catalog) -> Result<Connection, Ended> {
        let spawned =
            process::spawn(&self.link, &self.config, &self.sandbox).map_err(Ended::Failed)?;
        let mut process = spawned.process;
        let (events, list_changed) = ClientEvents::new(self.link.asking.clone());
        let (stdout, watch) = BoundedStdout::new(spawned.stdout, &self.link);
        // `BoundedStdout` passes on no line longer than this (a dropped line's beginning
        // ends with a newline of its own).
        let transport = AsyncRwTransport::new_client(stdout, spawned.stdin)
            .with_max_line_length(MAX_MESSAGE + 1);
        let startup = handshake(events, transport, &self.link.progress);
        let failure = match self.start(startup).await {
            None => {
                process.terminate().await;
                return Err(Ended::Stopped);
            }
            Some(Startup::Ready((client, listed))) => {
                // A child's loss shows as its exit: nothing waits on this signal.
                let lost = Arc::new(Notify::new());
                self.link.set_peer(Some((client.peer().clone(), lost)));
                self.log_version(client.peer());
                self.publish(catalog, listed);
                return Ok(Connection {
                    endpoint: Endpoint::Child(Box::new(process), watch),
                    client,
                    list_changed,
                });
            }
            Some(Startup::Failed(e)) => match process.exit_within(EXIT_REPORT).await {
                Some(how) => format!("the server {how} before it was ready"),
                None => e,
            },
            Some(Startup::Refused(e) | Startup::TimedOut(e) | Startup::Unauthorized(_, e)) => e,
        };
        process.terminate().await;
        Err(Ended::Failed(self.link.with_stderr(failure)))
    }

    /// Logs the protocol version the server answered in `initialize`.
    fn log_version(&self, peer: &Peer<RoleClient>) {
        if let Some(info) = peer.peer_info() {
            tracing::debug!(target: "mcp", "[{}] speaks MCP protocol version {}", self.link.name, info.protocol_version);
        }
    }

    /// Registers `listed` and reports the server running (stderr from before this point,
    /// such as a startup banner, no longer explains a later exit).
    fn publish(&self, catalog: &mut Catalog, listed: Vec<serde_json::Value>) {
        self.link.forget_stderr();
        let synced = catalog.sync(&self.registry, &self.link, &self.config, listed);
        self.link.update(|s| {
            s.state = McpServerState::Running;
            s.tools = synced.tools;
            s.warnings = synced.warnings;
        });
    }

    /// `work`'s output, or `None` when the host stops first.
    async fn until_stopped<T>(&self, work: impl Future<Output = T>) -> Option<T> {
        tokio::select! {
            () = self.stop.cancelled() => None,
            output = work => Some(output),
        }
    }
}

/// Handshakes over `transport` (its progress reports routed by `progress` as they are read)
/// and lists every tool.
async fn handshake<T, E, A>(
    events: ClientEvents,
    transport: T,
    progress: &Arc<ProgressRoutes>,
) -> Result<Started, HandshakeFailure>
where
    T: IntoTransport<RoleClient, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    let transport = Ordered::new(transport.into_transport(), progress.clone());
    let client = serve_client(events, transport).await.map_err(|e| {
        let text = format!("the MCP handshake failed: {}", describe_handshake(&e));
        match e.auth_challenge() {
            Some(challenge) => HandshakeFailure::Unauthorized(challenge.to_owned(), text),
            None => HandshakeFailure::Failed(text),
        }
    })?;
    let answered = client
        .peer()
        .peer_info()
        .map(|info| info.protocol_version.clone());
    if let Some(why) = answered.as_ref().and_then(super::versions::refusal) {
        let _ = client.cancel().await;
        return Err(HandshakeFailure::Refused(format!(
            "the MCP handshake failed: {why}"
        )));
    }
    let listed = match list_all(client.peer()).await {
        Ok(listed) => listed,
        Err(failure) => {
            let _ = client.cancel().await;
            return Err(match failure.challenge {
                Some(challenge) => HandshakeFailure::Unauthorized(challenge, failure.text),
                None => HandshakeFailure::Failed(failure.text),
            });
        }
    };
    Ok((client, listed))
}

/// Resolves when the connected server is gone, saying how: a child's exit, or the end of
/// its stdout (it can answer nothing more: closed, or given up on by the reader); for a
/// remote server, a call that failed on the transport or an unanswered ping.
async fn ended(endpoint: &mut Endpoint, link: &Link, peer: &Peer<RoleClient>) -> String {
    match endpoint {
        Endpoint::Child(process, stdout) => {
            let exited = tokio::select! {
                how = process.exited() => Some(how),
                () = stdout.closed() => None,
            };
            // The reader gave up on the server (which may then exit on its own, its stdin
            // closed by rmcp): that is the cause.
            if let Some(why) = stdout.why() {
                return format!("{why}; the server was stopped");
            }
            // A server that exits closes its stdout first: its exit status says more.
            let exited = match exited {
                Some(how) => Some(how),
                None => process.exit_within(EXIT_REPORT).await,
            };
            match exited {
                Some(how) => format!("the server {how}"),
                None => format!(
                    "the server closed its stdout but kept running (pid {}); it was stopped",
                    process
                        .pid()
                        .map_or_else(|| "?".to_owned(), |pid| pid.to_string())
                ),
            }
        }
        Endpoint::Remote { lost } => loop {
            tokio::select! {
                () = lost.notified() => return link.lost_because(),
                () = tokio::time::sleep(PING_EVERY) => {}
            }
            let ping = ClientRequest::CustomRequest(CustomRequest::new("ping", None));
            match tokio::time::timeout(PING_DEADLINE, peer.send_request(ping)).await {
                Ok(Ok(_)) => {}
                Ok(Err(e)) => return format!("the server stopped answering: {e}"),
                Err(_) => {
                    return format!(
                        "the server did not answer a ping within {} ms",
                        PING_DEADLINE.as_millis()
                    );
                }
            }
        },
    }
}
