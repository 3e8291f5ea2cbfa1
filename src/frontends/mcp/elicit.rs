//! Elicitation passed through `dsh-tools mcp`: an ingested server's `elicitation/create`
//! during a call goes to the MCP client of the calling scope (rmcp's server side) when it
//! declared that mode, the answer back to the server. Otherwise the fallback answers
//! (`--elicit defaults`), or the request is declined saying the client cannot be asked.

use super::exits::ExitForwarder;
use crate::mcp::elicitation::{Answer, Elicitation, Elicitor, Modes, mode_name};
use futures::future::BoxFuture;
use rmcp::model::ElicitRequestParams;
use rmcp::service::ElicitationMode;
use std::sync::Arc;
use tokio::sync::watch;

/// Forwards to each scope's MCP client; made before the host (whose servers declare its
/// modes when they start), connected to the front's clients once the front exists. Also
/// OAuth's browser step of those servers ([`super::browser`]).
pub struct ForwardingElicitor {
    /// The front's clients, once it exists.
    pub(super) clients: watch::Sender<Option<Arc<ExitForwarder>>>,
    fallback: Option<Arc<dyn Elicitor>>,
}

impl ForwardingElicitor {
    /// Asks the clients, else `fallback`, else declines.
    pub fn new(fallback: Option<Arc<dyn Elicitor>>) -> Self {
        ForwardingElicitor {
            clients: watch::channel(None).0,
            fallback,
        }
    }

    /// Reaches the clients of `clients` from now on.
    pub(super) fn connect(&self, clients: Arc<ExitForwarder>) {
        self.clients.send_replace(Some(clients));
    }
}

impl Elicitor for ForwardingElicitor {
    /// Both: a client connecting later may answer either.
    fn modes(&self) -> Modes {
        Modes::ALL
    }

    fn elicit(&self, request: Elicitation) -> BoxFuture<'static, Answer> {
        let scope = request.call.as_ref().and_then(|call| call.agent.clone());
        let clients = self.clients.borrow().clone();
        let peer = clients.and_then(|clients| clients.peer(&scope));
        let wanted = match &request.params {
            ElicitRequestParams::FormElicitationParams { .. } => ElicitationMode::Form,
            _ => ElicitationMode::Url,
        };
        let peer = peer.filter(|peer| peer.supported_elicitation_modes().contains(&wanted));
        let Some(peer) = peer else {
            if let Some(fallback) = &self.fallback {
                return fallback.elicit(request);
            }
            let mode = mode_name(&request.params);
            return Box::pin(async move {
                Answer::declined(format!("the MCP client did not declare {mode} elicitation"))
            });
        };
        Box::pin(async move {
            let answered = tokio::select! {
                answered = peer.create_elicitation(request.params) => answered,
                () = request.signal.aborted() => return Answer::cancelled(),
            };
            match answered {
                Ok(result) => Answer::given(result),
                Err(error) => {
                    tracing::warn!(target: "mcp", "forwarding an elicitation failed: {error}");
                    Answer::cancelled()
                }
            }
        })
    }
}
