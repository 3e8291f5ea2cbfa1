//! `client/elicit`: an ingested MCP server's `elicitation/create` put to the client that
//! declared `capabilities.elicitation` in `initialize`, its answer passed back to the
//! server. A mode the client did not declare is declined saying so; an answer that cannot
//! be read, or none (the call aborted, the client gone), is a cancel.

use super::{convert, params};
use crate::mcp::elicitation::{Answer, Elicitation, Elicitor, Modes, Nobody, message, mode_name};
use crate::transport::Peer;
use dsh_tools_protocol as wire;
use futures::future::BoxFuture;
use rmcp::model::{ElicitRequestParams, ElicitResult, ElicitationAction};
use std::sync::Arc;

/// Asks the RPC client.
pub struct ClientElicitor {
    /// The client.
    pub peer: Arc<Peer>,
    /// What it declared.
    pub modes: Modes,
}

impl ClientElicitor {
    /// The elicitor for a client that declared `capability`.
    pub fn new(peer: Arc<Peer>, capability: wire::ElicitationCapability) -> Self {
        let modes = Modes {
            form: capability.answers_forms(),
            url: capability.answers_urls(),
        };
        ClientElicitor { peer, modes }
    }
}

/// Who answers elicitations for a client that declared `capability` in `initialize`: the
/// client, or (without it) nobody, saying so.
pub fn for_client(
    peer: &Arc<Peer>,
    capability: Option<wire::ElicitationCapability>,
) -> Arc<dyn Elicitor> {
    match capability {
        Some(capability) => Arc::new(ClientElicitor::new(peer.clone(), capability)),
        None => Arc::new(Nobody(
            "the client did not declare the elicitation capability in initialize".to_owned(),
        )),
    }
}

impl Elicitor for ClientElicitor {
    fn modes(&self) -> Modes {
        self.modes
    }

    fn elicit(&self, request: Elicitation) -> BoxFuture<'static, Answer> {
        if !self.modes.answer(&request.params) {
            let mode = mode_name(&request.params);
            return Box::pin(async move {
                Answer::declined(format!(
                    "the client did not declare {mode} elicitation in initialize"
                ))
            });
        }
        let peer = self.peer.clone();
        let params = wire_params(&request);
        Box::pin(async move {
            let answered = peer
                .request("client/elicit", &params, request.signal.aborted(), None)
                .await;
            let raw = match answered {
                Ok(raw) => raw,
                Err(error) => {
                    tracing::warn!(target: "mcp", "client/elicit failed: {error}");
                    return Answer::cancelled();
                }
            };
            match params::from_str::<wire::ElicitResult>(raw.get()) {
                Ok(answer) => Answer::given(mcp_result(answer)),
                Err(error) => {
                    tracing::warn!(target: "mcp", "client/elicit answered badly: {}", error.message());
                    Answer::cancelled()
                }
            }
        })
    }
}

/// The request as the client is sent it.
fn wire_params(request: &Elicitation) -> wire::ElicitParams {
    let mut params = wire::ElicitParams {
        server: request.server.to_string(),
        execution: request.call.as_deref().map(convert::execution_view),
        mode: wire::ElicitMode::Form,
        message: message(&request.params).to_owned(),
        requested_schema: None,
        url: None,
        elicitation_id: None,
    };
    match &request.params {
        ElicitRequestParams::FormElicitationParams {
            requested_schema, ..
        } => params.requested_schema = serde_json::to_value(requested_schema).ok(),
        ElicitRequestParams::UrlElicitationParams {
            url,
            elicitation_id,
            ..
        } => {
            params.mode = wire::ElicitMode::Url;
            params.url = Some(url.clone());
            params.elicitation_id = (!elicitation_id.is_empty()).then(|| elicitation_id.clone());
        }
        _ => {}
    }
    params
}

/// The client's answer as the server's result.
fn mcp_result(answer: wire::ElicitResult) -> ElicitResult {
    let action = match answer.action {
        wire::ElicitAction::Accept => ElicitationAction::Accept,
        wire::ElicitAction::Decline => ElicitationAction::Decline,
        wire::ElicitAction::Cancel => ElicitationAction::Cancel,
    };
    let accepted = action == ElicitationAction::Accept;
    let result = ElicitResult::new(action);
    match answer.content {
        Some(content) if accepted => result.with_content(content),
        _ => result,
    }
}
