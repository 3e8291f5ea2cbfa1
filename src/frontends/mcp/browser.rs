//! OAuth's browser step under `dsh-tools mcp`, whose MCP client has no `client/openUrl`: a
//! client that declared URL elicitation is sent `elicitation/create` in mode `url` with the
//! authorization URL and a message naming the server (MCP's own way to send a person to a
//! page); until one is connected the URL is printed on stderr, as `dsh-tools run` does. A
//! server's first 401 comes before any client connected (the servers start first): its URL
//! is printed then and sent to the first client that connects declaring URL elicitation;
//! the loopback listener completes the flow from whichever the person follows.

use super::elicit::ForwardingElicitor;
use crate::mcp::oauth::{UrlOpener, print_browser_step};
use futures::future::BoxFuture;
use rmcp::model::{ElicitRequestParams, ElicitationAction};
use rmcp::service::ElicitationMode;
use std::sync::atomic::{AtomicU64, Ordering};

/// Numbers the elicitations this process sends (their `elicitationId`).
static SENT: AtomicU64 = AtomicU64::new(0);

impl UrlOpener for ForwardingElicitor {
    fn open_url(
        &self,
        server: &str,
        url: &str,
        reason: &str,
    ) -> BoxFuture<'static, Result<(), String>> {
        let mut front = self.clients.subscribe();
        let (server, url, message) = (server.to_owned(), url.to_owned(), reason.to_owned());
        Box::pin(async move {
            let mut printed = false;
            let mut print_once = || {
                if !std::mem::replace(&mut printed, true) {
                    print_browser_step(&server, &url);
                }
            };
            // `Ok` without asking anyone: the printed URL may still be followed.
            let clients = loop {
                if let Some(clients) = front.borrow_and_update().clone() {
                    break clients;
                }
                print_once();
                if front.changed().await.is_err() {
                    return Ok(());
                }
            };
            let mut connections = clients.connections();
            let peer = loop {
                if let Some(peer) = clients.peer_eliciting(&ElicitationMode::Url) {
                    break peer;
                }
                print_once();
                if connections.changed().await.is_err() {
                    return Ok(());
                }
            };
            let number = SENT.fetch_add(1, Ordering::Relaxed) + 1;
            let params = ElicitRequestParams::UrlElicitationParams {
                meta: None,
                message,
                url: url.clone(),
                elicitation_id: format!("dsh-tools-oauth-{number}"),
            };
            match peer.create_elicitation(params).await {
                Ok(answer) if answer.action == ElicitationAction::Accept => Ok(()),
                Ok(answer) => Err(format!(
                    "the MCP client answered {:?} to opening the authorization URL",
                    answer.action
                )),
                Err(error) => {
                    tracing::warn!(target: "mcp", "asking the MCP client to open the authorization URL of \"{server}\" failed: {error}");
                    print_once();
                    Ok(())
                }
            }
        })
    }

    fn awaits_a_client(&self) -> bool {
        true
    }
}
