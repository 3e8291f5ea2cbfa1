//! One task per configured server: spawn, handshake, list and register, follow
//! `list_changed`, notice a crash, restart with bounded backoff, and stop on shutdown with
//! the child terminated and reaped.

use super::catalog::{Catalog, list_all};
use super::client::ClientEvents;
use super::link::Link;
use super::process::{self, ServerProcess};
use crate::registry::Registry;
use dsh_tools_protocol::{McpServerConfig, McpServerState};
use rmcp::RoleClient;
use rmcp::service::{RunningService, serve_client};
use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::{Notify, watch};
use tokio_util::sync::CancellationToken;

/// Handshake and listing deadline for servers that configure no `timeoutMs`.
const DEFAULT_STARTUP: Duration = Duration::from_secs(30);
/// The least time a server gets to start, whatever its per-call `timeoutMs` (starting a
/// runtime such as node takes longer than a call should).
const STARTUP_FLOOR: Duration = Duration::from_secs(10);
/// How long a server whose handshake failed gets to report its exit status.
const EXIT_REPORT: Duration = Duration::from_millis(500);
/// Consecutive failed attempts (spawn, handshake, listing, or a crash soon after) before
/// the supervisor gives up.
const MAX_ATTEMPTS: u32 = 5;
/// First backoff before a restart; doubled per consecutive failure.
const FIRST_BACKOFF: Duration = Duration::from_millis(200);
/// A server that ran this long before exiting starts a fresh series of attempts.
const STABLE_AFTER: Duration = Duration::from_secs(30);

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
}

/// A connected server.
struct Connection {
    process: ServerProcess,
    client: RunningService<RoleClient, ClientEvents>,
    list_changed: Arc<Notify>,
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
}

impl Supervisor {
    /// Runs until shutdown; the child is reaped before this returns.
    pub async fn run(self) {
        let mut catalog = Catalog::default();
        let mut failures = 0u32;
        loop {
            let started = Instant::now();
            let ended = self.attempt(&mut catalog).await;
            self.link.set_peer(None);
            let Ended::Failed(error) = ended else { break };
            tracing::warn!(target: "mcp", "[{}] {error}", self.link.name);
            failures = if started.elapsed() >= STABLE_AFTER {
                1
            } else {
                failures + 1
            };
            let state = if failures >= MAX_ATTEMPTS {
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
            let backoff = FIRST_BACKOFF * 2u32.pow(failures - 1);
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
    async fn attempt(&self, catalog: &mut Catalog) -> Ended {
        let mut connection = match self.connect(catalog).await {
            Ok(connection) => connection,
            Err(ended) => return ended,
        };
        self.settled.send_replace(true);
        loop {
            let event = tokio::select! {
                () = self.stop.cancelled() => Event::Stop,
                how = connection.process.exited() => Event::Exited(how),
                () = connection.list_changed.notified() => Event::ListChanged,
            };
            match event {
                Event::Stop => {
                    let _ = connection.client.close().await;
                    connection.process.terminate().await;
                    return Ended::Stopped;
                }
                Event::Exited(how) => {
                    let _ = connection.client.close().await;
                    return Ended::Failed(self.link.with_stderr(format!("the server {how}")));
                }
                Event::ListChanged => {
                    let peer = connection.client.peer().clone();
                    match self.until_stopped(list_all(&peer)).await {
                        Some(Ok(listed)) => self.publish(catalog, listed),
                        Some(Err(e)) => self.link.update(|s| s.last_error = Some(e)),
                        None => {}
                    }
                }
            }
        }
    }

    /// Spawns, handshakes and lists within the startup deadline, then publishes the tools.
    async fn connect(&self, catalog: &mut Catalog) -> Result<Connection, Ended> {
        let spawned =
            process::spawn(&self.link, &self.config, &self.sandbox).map_err(Ended::Failed)?;
        let mut process = spawned.process;
        let list_changed = Arc::new(Notify::new());
        let events = ClientEvents {
            list_changed: list_changed.clone(),
        };
        let deadline = self
            .config
            .timeout_ms
            .map(|ms| Duration::from_millis(ms).max(STARTUP_FLOOR))
            .unwrap_or(DEFAULT_STARTUP);
        let startup = async {
            let client = serve_client(events, (spawned.stdout, spawned.stdin))
                .await
                .map_err(|e| format!("the MCP handshake failed: {e}"))?;
            let listed = list_all(client.peer()).await?;
            Ok::<_, String>((client, listed))
        };
        let outcome = tokio::select! {
            () = self.stop.cancelled() => None,
            outcome = tokio::time::timeout(deadline, startup) => Some(outcome),
        };
        let failure = match outcome {
            None => {
                process.terminate().await;
                return Err(Ended::Stopped);
            }
            Some(Ok(Ok((client, listed)))) => {
                self.link.set_peer(Some(client.peer().clone()));
                self.publish(catalog, listed);
                return Ok(Connection {
                    process,
                    client,
                    list_changed,
                });
            }
            Some(Ok(Err(e))) => match process.exit_within(EXIT_REPORT).await {
                Some(how) => format!("the server {how} before it was ready"),
                None => e,
            },
            Some(Err(_)) => format!(
                "the server did not complete the MCP handshake and tools/list within {} ms",
                deadline.as_millis()
            ),
        };
        process.terminate().await;
        Err(Ended::Failed(self.link.with_stderr(failure)))
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
