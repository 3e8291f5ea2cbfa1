//! `client/openUrl`: a remote MCP server's OAuth authorization page, shown to the user by
//! a client that declared the `openUrl` capability (the host then waits for the redirect on
//! its loopback listener).

use super::params;
use crate::mcp::oauth::UrlOpener;
use crate::transport::Peer;
use dsh_tools_protocol as wire;
use futures::future::BoxFuture;
use std::sync::Arc;

/// Asks the client to open authorization URLs.
pub struct ClientUrlOpener(pub Arc<Peer>);

impl UrlOpener for ClientUrlOpener {
    fn open_url(
        &self,
        server: &str,
        url: &str,
        reason: &str,
    ) -> BoxFuture<'static, Result<(), String>> {
        let peer = self.0.clone();
        let params = wire::OpenUrlParams {
            url: url.to_owned(),
            reason: reason.to_owned(),
            server: Some(server.to_owned()),
        };
        Box::pin(async move {
            let raw = peer
                .request("client/openUrl", &params, std::future::pending(), None)
                .await
                .map_err(|e| format!("client/openUrl failed: {e}"))?;
            let answer = params::from_str::<wire::OpenUrlResult>(raw.get())
                .map_err(|e| format!("client/openUrl answered unreadably: {}", e.message()))?;
            if answer.opened {
                Ok(())
            } else {
                Err("the client did not open the authorization URL".to_owned())
            }
        })
    }
}
