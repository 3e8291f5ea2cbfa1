//! The host's side of one MCP client session: what it tells the server about itself, what
//! it does with the server's notifications (progress is routed by the transport, see
//! `progress::Ordered`) and its requests (`elicitation/create`, see `elicitation`).

use super::elicitation::Asking;
use rmcp::model::{
    ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult, Implementation,
};
use rmcp::service::{NotificationContext, RequestContext, RoleClient};
use rmcp::{ClientHandler, ErrorData};
use std::sync::Arc;
use tokio::sync::Notify;

/// Forwards `notifications/tools/list_changed` to the supervisor and elicitations to the
/// server's [`Asking`].
pub struct ClientEvents {
    /// Woken on every `notifications/tools/list_changed`.
    pub list_changed: Arc<Notify>,
    /// The server's calls in flight and its elicitor.
    pub asking: Arc<Asking>,
}

impl ClientEvents {
    /// Events whose `list_changed` is the returned signal, eliciting through `asking`.
    pub fn new(asking: Arc<Asking>) -> (ClientEvents, Arc<Notify>) {
        let list_changed = Arc::new(Notify::new());
        let events = ClientEvents {
            list_changed: list_changed.clone(),
            asking,
        };
        (events, list_changed)
    }
}

impl ClientHandler for ClientEvents {
    async fn on_tool_list_changed(&self, _: NotificationContext<RoleClient>) {
        self.list_changed.notify_one();
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        Ok(self.asking.ask(request).await)
    }

    fn get_info(&self) -> ClientConfig {
        // `elicitation` only with modes someone answers.
        let mut capabilities = ClientCapabilities::default();
        capabilities.elicitation = self.asking.modes().capability();
        ClientConfig::new(
            capabilities,
            Implementation::new("dsh-tools", env!("CARGO_PKG_VERSION")),
        )
        .with_protocol_version(super::versions::OFFERED)
    }
}
