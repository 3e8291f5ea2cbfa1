//! The host's side of one MCP client session: what it tells the server about itself and
//! what it does with the server's notifications (progress is routed by the transport, see
//! `progress::Ordered`).

use rmcp::ClientHandler;
use rmcp::model::{ClientCapabilities, ClientConfig, Implementation};
use rmcp::service::{NotificationContext, RoleClient};
use std::sync::Arc;
use tokio::sync::Notify;

/// Forwards `notifications/tools/list_changed` to the supervisor.
pub struct ClientEvents {
    /// Woken on every `notifications/tools/list_changed`.
    pub list_changed: Arc<Notify>,
}

impl ClientEvents {
    /// Events whose `list_changed` is the returned signal.
    pub fn new() -> (ClientEvents, Arc<Notify>) {
        let list_changed = Arc::new(Notify::new());
        let events = ClientEvents {
            list_changed: list_changed.clone(),
        };
        (events, list_changed)
    }
}

impl ClientHandler for ClientEvents {
    async fn on_tool_list_changed(&self, _: NotificationContext<RoleClient>) {
        self.list_changed.notify_one();
    }

    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("dsh-tools", env!("CARGO_PKG_VERSION")),
        )
        .with_protocol_version(super::versions::OFFERED)
    }
}
