//! The body of an MCP tool: one `tools/call` over the server's live connection, with
//! cancellation forwarded as `notifications/cancelled` and the result normalized.

use super::link::Link;
use super::stdout::OVERSIZED_KEY;
use crate::tool::{
    BodyOutput, ContentBlock, HarnessCode, Progress, ToolBody, ToolError, ToolRunContext,
};
use futures::future::BoxFuture;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, CancelledNotification,
    CancelledNotificationParam, ClientNotification, ClientRequest, RequestId, ServerResult,
};
use rmcp::service::{Peer, PeerRequestOptions};
use rmcp::{RoleClient, ServiceError};
use serde_json::Value;
use std::sync::Arc;

/// Where a call's canonical value comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputShape {
    /// The tool declares `outputSchema`: the value is its `structuredContent`.
    Structured,
    /// Content only: the value is the text of its text blocks, joined by newlines.
    Text,
}

/// Calls one tool of one server.
pub struct McpToolBody {
    /// The server.
    pub link: Arc<Link>,
    /// The tool's own name on that server.
    pub tool: Arc<str>,
    /// How the value is derived.
    pub shape: OutputShape,
}

impl ToolBody for McpToolBody {
    fn call(&self, ctx: ToolRunContext) -> BoxFuture<'static, Result<BodyOutput, ToolError>> {
        let (link, tool, shape) = (self.link.clone(), self.tool.clone(), self.shape);
        Box::pin(async move {
            // Elicitations during the call are attributed to it; host declines noted on it.
            let in_flight = link.asking.open(&ctx);
            in_flight.noted(call(&link, &tool, shape, &ctx).await)
        })
    }
}

async fn call(
    link: &Link,
    tool: &str,
    shape: OutputShape,
    ctx: &ToolRunContext,
) -> Result<BodyOutput, ToolError> {
    let server = &link.name;
    let peer = link
        .peer()
        .ok_or_else(|| ToolError::new(link.unavailable()))?;
    let arguments = match ctx.arguments() {
        Value::Object(arguments) => Some(arguments.clone()),
        Value::Null => None,
        _ => {
            return Err(ToolError::new(format!(
                "MCP tool \"{tool}\" takes a JSON object of arguments"
            )));
        }
    };
    let mut params = CallToolRequestParams::new(tool.to_string());
    params.arguments = arguments;
    // Dropping the request future (on abort or deadline) sends `notifications/cancelled`.
    let mut outcome = tokio::select! {
        biased;
        () = ctx.signal.aborted() => {
            return Err(ToolError::harness(HarnessCode::Aborted, "tool call aborted"));
        }
        outcome = request(link, &peer, params.clone(), &ctx.progress) => outcome,
    };
    // A 403 asking for more scopes (refused before the server ran the tool): authorize
    // them, then send the call once more.
    if let Some(challenge) = outcome.as_ref().err().and_then(scope_challenge)
        && let Some(step_up) = link.step_up()
    {
        let upgraded = tokio::select! {
            biased;
            () = ctx.signal.aborted() => {
                return Err(ToolError::harness(HarnessCode::Aborted, "tool call aborted"));
            }
            upgraded = step_up(challenge) => upgraded,
        };
        if let Err(e) = upgraded {
            return Err(ToolError::new(format!(
                "MCP server \"{server}\" needs more OAuth scopes for \"{tool}\", and authorizing them failed: {e}"
            )));
        }
        outcome = tokio::select! {
            biased;
            () = ctx.signal.aborted() => {
                return Err(ToolError::harness(HarnessCode::Aborted, "tool call aborted"));
            }
            outcome = request(link, &peer, params, &ctx.progress) => outcome,
        };
    }
    match outcome {
        Ok(result) => normalize(server, tool, shape, result),
        // Put in place of an over-long answer by the stdout reader, not sent by the server.
        Err(ServiceError::McpError(error))
            if error
                .data
                .as_ref()
                .is_some_and(|data| data.get(OVERSIZED_KEY).is_some()) =>
        {
            Err(ToolError::new(format!(
                "MCP server \"{server}\" answered the call to \"{tool}\" but {}",
                error.message
            )))
        }
        Err(ServiceError::McpError(error)) => Err(ToolError::new(link.redact(format!(
            "MCP server \"{server}\" rejected the call to \"{tool}\" (error {}): {}",
            error.code.0, error.message
        )))),
        Err(ServiceError::TransportClosed) => {
            link.report_lost("the connection closed during a call");
            Err(ToolError::new(format!(
                "MCP server \"{server}\" closed the connection during the call to \"{tool}\""
            )))
        }
        Err(ServiceError::TransportSend(error)) => {
            // A remote server that went away, answered an HTTP error or no longer knows
            // the session: its supervisor reconnects.
            let why = link.redact(super::remote::describe(&error));
            link.report_lost(&format!("a call failed on the transport: {why}"));
            Err(ToolError::new(format!(
                "MCP server \"{server}\" could not be reached for the call to \"{tool}\": {why}"
            )))
        }
        Err(ServiceError::UnexpectedResponse) => Err(ToolError::new(format!(
            "MCP server \"{server}\" answered the call to \"{tool}\" with something other than a tool result"
        ))),
        Err(other) => Err(ToolError::new(link.redact(format!(
            "MCP server \"{server}\" failed the call to \"{tool}\": {other}"
        )))),
    }
}

/// The `WWW-Authenticate` of a 403 `insufficient_scope` that failed a call.
fn scope_challenge(error: &ServiceError) -> Option<String> {
    let challenge = error.auth_challenge()?;
    super::oauth::is_insufficient_scope(challenge).then(|| challenge.to_owned())
}

/// Sends one `tools/call` and waits for its answer, the server's progress for it going to
/// `progress` meanwhile.
async fn request(
    link: &Link,
    peer: &Peer<RoleClient>,
    params: CallToolRequestParams,
    progress: &Progress,
) -> Result<CallToolResult, ServiceError> {
    let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
    let handle = peer
        .send_request_with_option(request, PeerRequestOptions::no_options())
        .await?;
    // rmcp gives every request a progressToken of its own: the call's reports come by it.
    let route = link.progress.open(handle.progress_token.clone(), progress);
    let mut abandoned = Abandoned(Some((peer.clone(), handle.id.clone())));
    let answer = handle.await_response().await;
    abandoned.0 = None;
    if route.is_some() {
        // rmcp hands each notification to a task of its own: one the server sent just
        // before its answer gets its turn before the route closes.
        tokio::task::yield_now().await;
    }
    drop(route);
    match answer? {
        ServerResult::CallToolResult(result) => Ok(result),
        ServerResult::EmptyResult(_) => Ok(CallToolResult::success(Vec::new())),
        _ => Err(ServiceError::UnexpectedResponse),
    }
}

/// Sends `notifications/cancelled` for a request dropped before its answer.
struct Abandoned(Option<(Peer<RoleClient>, RequestId)>);

impl Drop for Abandoned {
    fn drop(&mut self) {
        let Some((peer, id)) = self.0.take() else {
            return;
        };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let reason = Some("the call was aborted".to_owned());
        let cancelled =
            CancelledNotification::new(CancelledNotificationParam::new(Some(id), reason));
        runtime.spawn(async move {
            let _ = peer
                .send_notification(ClientNotification::CancelledNotification(cancelled))
                .await;
        });
    }
}

/// A `tools/call` result as a body output: `isError` becomes a failure the model reads,
/// the MCP content blocks become the model-facing content.
fn normalize(
    server: &str,
    tool: &str,
    shape: OutputShape,
    result: CallToolResult,
) -> Result<BodyOutput, ToolError> {
    let text: Vec<&str> = result
        .content
        .iter()
        .filter_map(|block| block.as_text().map(|t| t.text.as_str()))
        .collect();
    let text = text.join("\n");
    if result.is_error == Some(true) {
        if text.is_empty() {
            return Err(ToolError::new(format!(
                "MCP tool \"{tool}\" of server \"{server}\" reported an error without a message"
            )));
        }
        return Err(ToolError::new(text));
    }
    let content: Vec<ContentBlock> = result
        .content
        .iter()
        .filter_map(|block| serde_json::to_value(block).ok())
        .filter_map(|block| serde_json::from_value(block).ok())
        .collect();
    let value = match (shape, &result.structured_content) {
        (OutputShape::Structured, Some(value)) => value.clone(),
        (OutputShape::Structured, None) => {
            return Err(ToolError::new(format!(
                "MCP tool \"{tool}\" of server \"{server}\" declares an outputSchema but returned no structuredContent"
            )));
        }
        (OutputShape::Text, _) => Value::String(text),
    };
    // Kept whatever the shape, so a client of the host (and `dsh-tools mcp`) sees it too.
    Ok(BodyOutput {
        value,
        content: (!content.is_empty()).then_some(content),
        meta: None,
        structured_content: result.structured_content,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn result(raw: Value) -> CallToolResult {
        serde_json::from_value(raw).unwrap()
    }

    fn check(shape: OutputShape, raw: Value, expected: Result<BodyOutput, ToolError>) {
        assert_eq!(
            normalize("s", "t", shape, result(raw.clone())),
            expected,
            "{raw}"
        );
    }

    #[test]
    fn results_normalize_by_shape() {
        let image = json!({ "type": "image", "data": "AAAA", "mimeType": "image/png" });
        let blocks = |raw: Value| -> Option<Vec<ContentBlock>> { serde_json::from_value(raw).ok() };
        check(
            OutputShape::Text,
            json!({ "content": [{ "type": "text", "text": "a" }, image, { "type": "text", "text": "b" }] }),
            Ok(BodyOutput {
                value: json!("a\nb"),
                content: blocks(
                    json!([{ "type": "text", "text": "a" }, image, { "type": "text", "text": "b" }]),
                ),
                meta: None,
                structured_content: None,
            }),
        );
        check(
            OutputShape::Structured,
            json!({ "content": [{ "type": "text", "text": "{}" }], "structuredContent": { "n": 1.50 } }),
            Ok(BodyOutput {
                value: json!({ "n": 1.50 }),
                content: blocks(json!([{ "type": "text", "text": "{}" }])),
                meta: None,
                structured_content: Some(json!({ "n": 1.50 })),
            }),
        );
        // Without an outputSchema the value is the text, and the object is kept beside it.
        check(
            OutputShape::Text,
            json!({ "content": [{ "type": "text", "text": "sunny" }], "structuredContent": { "sky": "clear" } }),
            Ok(BodyOutput {
                value: json!("sunny"),
                content: blocks(json!([{ "type": "text", "text": "sunny" }])),
                meta: None,
                structured_content: Some(json!({ "sky": "clear" })),
            }),
        );
        check(
            OutputShape::Text,
            json!({ "content": [] }),
            Ok(BodyOutput {
                value: json!(""),
                content: None,
                meta: None,
                structured_content: None,
            }),
        );
        check(
            OutputShape::Structured,
            json!({ "content": [{ "type": "text", "text": "x" }] }),
            Err(ToolError::new(
                "MCP tool \"t\" of server \"s\" declares an outputSchema but returned no structuredContent",
            )),
        );
        check(
            OutputShape::Structured,
            json!({ "content": [{ "type": "text", "text": "bad zone" }], "isError": true }),
            Err(ToolError::new("bad zone")),
        );
        check(
            OutputShape::Text,
            json!({ "content": [], "isError": true }),
            Err(ToolError::new(
                "MCP tool \"t\" of server \"s\" reported an error without a message",
            )),
        );
    }
}
