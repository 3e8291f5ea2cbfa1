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
use rmcp::service::Peer;
use std::collections::HashMap;
use std::sync::Arc;

/// The logger name the notification carries.
pub const LOGGER: &str = "bash/exited";

/// The client of each scope.
#[derive(Default)]
pub struct ExitForwarder {
    peers: Mutex<HashMap<Option<AgentId>, Peer<RoleServer>>>,
}

impl ExitForwarder {
    /// Tells `peer` of the ends of `scope`'s sessions from now on.
    pub fn connect(&self, scope: Option<AgentId>, peer: Peer<RoleServer>) {
        self.peers.lock().insert(scope, peer);
    }

    /// The client of `scope`, if one is connected.
    pub fn peer(&self, scope: &Option<AgentId>) -> Option<Peer<RoleServer>> {
        self.peers.lock().get(scope).cloned()
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
