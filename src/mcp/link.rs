//! One configured server as its tools and the status method see it: the live client
//! connection (absent while the server is down), its status, the secrets (header values,
//! tokens) redacted from every text it shows, and the signal by which a failed call tells
//! the supervisor of a remote server that the connection is gone.

use dsh_tools_protocol::{McpServerState, McpServerStatus, McpTransport};
use parking_lot::{Mutex, RwLock};
use rmcp::RoleClient;
use rmcp::service::Peer;
use std::sync::Arc;
use tokio::sync::{Notify, watch};

/// The live connection and its loss signal.
struct Live {
    peer: Peer<RoleClient>,
    lost: Arc<Notify>,
}

/// Shared between the server's supervisor (which writes) and its tool bodies (which read).
pub struct Link {
    /// The server's name (its `mcpServers` key).
    pub name: Arc<str>,
    /// Its calls that asked for progress, by token.
    pub progress: Arc<super::progress::ProgressRoutes>,
    /// Its calls in flight and who answers its elicitations.
    pub asking: Arc<super::elicitation::Asking>,
    live: RwLock<Option<Live>>,
    lost_because: Mutex<Option<String>>,
    secrets: RwLock<Vec<String>>,
    status: Mutex<McpServerStatus>,
    last_stderr: Mutex<Option<String>>,
    /// Bumped after every status change (shared by all servers of a host).
    changed: Arc<watch::Sender<u64>>,
    /// Authorizes the live connection for more scopes (an OAuth server's).
    step_up: RwLock<Option<super::oauth::StepUp>>,
}

impl Link {
    /// A server that has not started yet (or never will, when disabled); `changed` is
    /// bumped after every status change.
    pub fn new(
        name: &str,
        transport: McpTransport,
        state: McpServerState,
        changed: Arc<watch::Sender<u64>>,
    ) -> Arc<Self> {
        Arc::new(Link {
            name: Arc::from(name),
            progress: Arc::default(),
            asking: Arc::new(super::elicitation::Asking::new(Arc::from(name))),
            live: RwLock::new(None),
            lost_because: Mutex::new(None),
            secrets: RwLock::new(Vec::new()),
            status: Mutex::new(McpServerStatus {
                server: name.to_string(),
                transport,
                state,
                tools: Vec::new(),
                warnings: Vec::new(),
                last_error: None,
            }),
            last_stderr: Mutex::new(None),
            changed,
            step_up: RwLock::new(None),
        })
    }

    /// The live connection, if the server is running.
    pub fn peer(&self) -> Option<Peer<RoleClient>> {
        self.live.read().as_ref().map(|live| live.peer.clone())
    }

    /// Installs or clears the live connection; an installed one comes with the signal that
    /// [`report_lost`](Self::report_lost) raises for it (and only for it).
    pub fn set_peer(&self, peer: Option<(Peer<RoleClient>, Arc<Notify>)>) {
        *self.lost_because.lock() = None;
        *self.live.write() = peer.map(|(peer, lost)| Live { peer, lost });
    }

    /// Sets how a call asked for more scopes authorizes them (`None`: it cannot).
    pub fn set_step_up(&self, step_up: Option<super::oauth::StepUp>) {
        *self.step_up.write() = step_up;
    }

    /// How a call asked for more scopes authorizes them, if it can.
    pub fn step_up(&self) -> Option<super::oauth::StepUp> {
        self.step_up.read().clone()
    }

    /// A call found the connection unusable (a remote server that went away, a session
    /// it no longer knows): wakes the supervisor, which reconnects.
    pub fn report_lost(&self, why: &str) {
        if let Some(live) = self.live.read().as_ref() {
            self.lost_because
                .lock()
                .get_or_insert_with(|| why.to_owned());
            live.lost.notify_one();
        }
    }

    /// Why the connection was reported lost.
    pub fn lost_because(&self) -> String {
        self.lost_because
            .lock()
            .clone()
            .unwrap_or_else(|| "the connection was lost".to_owned())
    }

    /// Sets the values [`redact`](Self::redact) removes.
    pub fn set_secrets(&self, secrets: Vec<String>) {
        *self.secrets.write() = secrets;
    }

    /// `text` with every secret of the server replaced by `***`.
    pub fn redact(&self, text: String) -> String {
        super::remote::redact(&self.secrets.read(), text)
    }

    /// A snapshot of the status.
    pub fn status(&self) -> McpServerStatus {
        self.status.lock().clone()
    }

    /// Applies `change` to the status (its error text redacted) and wakes waiters.
    pub fn update(&self, change: impl FnOnce(&mut McpServerStatus)) {
        {
            let mut status = self.status.lock();
            change(&mut status);
            if let Some(error) = status.last_error.take() {
                status.last_error = Some(self.redact(error));
            }
        }
        self.changed.send_modify(|generation| *generation += 1);
    }

    /// Keeps the server's latest non-blank stderr line (it often says why it exited).
    pub fn remember_stderr(&self, line: String) {
        *self.last_stderr.lock() = Some(line);
    }

    /// Drops the remembered stderr line.
    pub fn forget_stderr(&self) {
        *self.last_stderr.lock() = None;
    }

    /// `what`, followed by the latest stderr line when there is one.
    pub fn with_stderr(&self, what: String) -> String {
        match self.last_stderr.lock().take() {
            Some(line) => format!("{what} (stderr: {line})"),
            None => what,
        }
    }

    /// Why a call cannot reach the server now; the message names the server.
    pub fn unavailable(&self) -> String {
        let status = self.status.lock();
        let name = &self.name;
        let cause = status
            .last_error
            .as_deref()
            .map(|e| format!(": {e}"))
            .unwrap_or_default();
        match status.state {
            McpServerState::Starting => format!("MCP server \"{name}\" is still starting"),
            McpServerState::Running | McpServerState::Restarting => {
                format!("MCP server \"{name}\" is not running and is being restarted{cause}")
            }
            McpServerState::Failed => {
                format!("MCP server \"{name}\" failed and was not restarted again{cause}")
            }
            McpServerState::Disabled => format!("MCP server \"{name}\" is disabled"),
            McpServerState::Stopped => format!("MCP server \"{name}\" was stopped"),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn unavailability_names_the_server_and_the_cause() {
        let cases = [
            (
                McpServerState::Starting,
                None,
                "MCP server \"t\" is still starting",
            ),
            (
                McpServerState::Restarting,
                Some("exited with exit status: 1"),
                "MCP server \"t\" is not running and is being restarted: exited with exit status: 1",
            ),
            (
                McpServerState::Failed,
                Some("could not start `nope`"),
                "MCP server \"t\" failed and was not restarted again: could not start `nope`",
            ),
            (
                McpServerState::Stopped,
                None,
                "MCP server \"t\" was stopped",
            ),
        ];
        for (state, error, expected) in cases {
            let link = Link::new(
                "t",
                McpTransport::Stdio,
                state,
                Arc::new(watch::Sender::new(0)),
            );
            link.update(|s| s.last_error = error.map(str::to_string));
            assert_eq!(link.unavailable(), expected);
        }
    }

    #[test]
    fn every_update_wakes_subscribers() {
        let changed = Arc::new(watch::Sender::new(0));
        let link = Link::new(
            "t",
            McpTransport::Http,
            McpServerState::Starting,
            changed.clone(),
        );
        let mut changes = changed.subscribe();
        link.update(|s| s.state = McpServerState::Running);
        assert!(changes.has_changed().unwrap());
        changes.mark_unchanged();
        assert_eq!(link.status().state, McpServerState::Running);
    }
}
