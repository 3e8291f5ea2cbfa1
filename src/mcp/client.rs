//! The host's side of one MCP client session: what it tells the server about itself and
//! what it does with the server's notifications.

use super::progress::ProgressRoutes;
use rmcp::ClientHandler;
use rmcp::model::{ClientCapabilities, ClientConfig, Implementation, ProgressNotificationParam};
use rmcp::service::{NotificationContext, RoleClient};
use std::sync::Arc;
use tokio::sync::Notify;

/// Forwards `notifications/tools/list_changed` to the supervisor and
/// `notifications/progress` to the call it names.
pub struct ClientEvents {
    /// Woken on every `notifications/tools/list_changed`.
    pub list_changed: Arc<Notify>,
    /// The server's calls that asked for progress.
    pub progress: Arc<ProgressRoutes>,
}

impl ClientEvents {
    /// Events whose `list_changed` is the returned signal, progress going to `progress`.
    pub fn new(progress: Arc<ProgressRoutes>) -> (ClientEvents, Arc<Notify>) {
        let list_changed = Arc::new(Notify::new());
        let events = ClientEvents {
            list_changed: list_changed.clone(),
            progress,
        };
        (events, list_changed)
    }
}

impl ClientHandler for ClientEvents {
    async fn on_tool_list_changed(&self, _: NotificationContext<RoleClient>) {
        self.list_changed.notify_one();
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _: NotificationContext<RoleClient>,
    ) {
        self.progress.deliver(params);
    }

    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("dsh-tools", env!("CARGO_PKG_VERSION")),
        )
    }
}
