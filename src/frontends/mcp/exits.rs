//! `bash/exited` over MCP: an exec session's end reaches the client of the scope that
//! started it as a `notifications/message` (logger `bash/exited`, level `info`, `data` the
//! protocol's `BashExitedNotification`), so an MCP client need not poll either. MCP's
//! logging is deprecated by SEP-2577 but still what every client shows; nothing replaces
//! it yet for an unsolicited message (progress needs a request in flight).
#![allow(deprecated)]

use crate::builtins::bash::session::SessionEvents;
use crate::tool::AgentId;
use dsh_tools_protocol::BashExitedNotification;
use parking_lot::Mutex;
use rmcp::RoleServer;
use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam};
use rmcp::service::{ElicitationMode, Peer};
use std::collections::HashMap;
use std::sync::Arc;
use tokio::sync::watch;

/// The logger name the notification carries.
pub const LOGGER: &str = "bash/exited";

/// The client of each scope.
pub struct ExitForwarder {
    peers: Mutex<HashMap<Option<AgentId>, Peer<RoleServer>>>,
    /// How many clients connected so far, for whoever waits for one.
    connections: watch::Sender<u64>,
}

impl Default for ExitForwarder {
    fn default() -> Self {
        ExitForwarder {
            peers: Mutex::default(),
            connections: watch::channel(0).0,
        }
    }
}

impl ExitForwarder {
    /// Tells `peer` of the ends of `scope`'s sessions from now on.
    pub fn connect(&self, scope: Option<AgentId>, peer: Peer<RoleServer>) {
        self.peers.lock().insert(scope, peer);
        self.connections.send_modify(|count| *count += 1);
    }

    /// The client of `scope`, if one is connected.
    pub fn peer(&self, scope: &Option<AgentId>) -> Option<Peer<RoleServer>> {
        self.peers.lock().get(scope).cloned()
    }

    /// A connected client that declared elicitation `mode`: the host's own (stdio) first,
    /// else one of the HTTP sessions'.
    pub fn peer_eliciting(&self, mode: &ElicitationMode) -> Option<Peer<RoleServer>> {
        let peers = self.peers.lock();
        let declared = |peer: &&Peer<RoleServer>| peer.supported_elicitation_modes().contains(mode);
        peers
            .get(&None)
            .filter(declared)
            .or_else(|| peers.values().find(declared))
            .cloned()
    }

    /// Changes whenever a client connects.
    pub fn connections(&self) -> watch::Receiver<u64> {
        self.connections.subscribe()
    }

    /// Forgets `scope`'s client.
    pub fn disconnect(&self, scope: &Option<AgentId>) {
        self.peers.lock().remove(scope);
    }
}

impl SessionEvents for Arc<ExitForwarder> {
    fn exited(&self, exited: &BashExitedNotification) {
        let scope = exited.agent.as_deref().map(AgentId::from);
        let Some(peer) = self.peers.lock().get(&scope).cloned() else {
            return;
        };
        let Ok(data) = serde_json::to_value(exited) else {
            return;
        };
        let message =
            LoggingMessageNotificationParam::new(LoggingLevel::Info, data).with_logger(LOGGER);
        tokio::spawn(async move {
            let _ = peer.notify_logging_message(message).await;
        });
    }
}
