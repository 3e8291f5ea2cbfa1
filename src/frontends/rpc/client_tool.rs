//! Tools the client registers and executes: the body is a `client/executeTool` round trip;
//! `concurrencySafe: "ask"` and `render: "client"` ask the client too.

use super::progress::ProgressRoutes;
use crate::json;
use crate::pipeline::timed_out;
use crate::registry::RegistryError;
use crate::tool::DefinitionError;
use crate::tool::{
    BodyOutput, Classifier, Concurrency, ContentBlock, HarnessCode, Render, Renderer, ToolBody,
    ToolDefinition, ToolError, ToolExecution, ToolRunContext,
};
use crate::transport::{Peer, PeerError};
use dsh_tools_protocol as wire;
use futures::future::BoxFuture;
use serde_json::Value;
use std::sync::Arc;

/// Builds the definition of a client-executed tool from its wire spec.
pub fn definition(
    spec: wire::ToolSpec,
    peer: &Arc<Peer>,
    routes: &Arc<ProgressRoutes>,
) -> Result<ToolDefinition, RegistryError> {
    let mut builder = ToolDefinition::builder(spec.name.clone()).description(spec.description);
    builder = match (spec.parameters, spec.input_schema) {
        (Some(_), Some(_)) => return Err(DefinitionError::AmbiguousInput.into()),
        (Some(parameters), None) => builder.parameters(parameters),
        (None, Some(schema)) => builder.input_schema(schema),
        (None, None) => builder,
    };
    builder = match spec.output {
        None => return Err(DefinitionError::MissingOutput.into()),
        Some(wire::OutputSpec {
            schema: Some(_),
            json_schema: Some(_),
        }) => return Err(DefinitionError::AmbiguousOutput.into()),
        Some(wire::OutputSpec {
            schema: None,
            json_schema: None,
        }) => return Err(DefinitionError::MissingOutput.into()),
        Some(wire::OutputSpec {
            schema: Some(schema),
            ..
        }) => builder.output(schema),
        Some(wire::OutputSpec {
            json_schema: Some(schema),
            ..
        }) => builder.output_json_schema(schema),
    };
    if let Some(ms) = spec.timeout_ms {
        builder = builder.timeout_ms(ms);
    }
    builder = builder
        .idempotent(spec.idempotent)
        .deferred(spec.deferred)
        .concurrency(match spec.concurrency_safe {
            None | Some(wire::ConcurrencySpec::Fixed(false)) => Concurrency::Exclusive,
            Some(wire::ConcurrencySpec::Fixed(true)) => Concurrency::Parallel,
            Some(wire::ConcurrencySpec::Ask(_)) => {
                Concurrency::Classified(Arc::new(ClientClassifier {
                    peer: peer.clone(),
                    name: spec.name.clone(),
                }))
            }
        });
    if spec.render == wire::RenderSpec::Client {
        builder = builder.render(Render::Custom(Arc::new(ClientRenderer(peer.clone()))));
    }
    let definition = builder.body(ClientBody {
        peer: peer.clone(),
        routes: routes.clone(),
        timeout_ms: None,
    })?;
    // The round trip is bounded by the tool's own timeout even when enforcement is off:
    // a client that never answers must not hang the call.
    let body = ClientBody {
        peer: peer.clone(),
        routes: routes.clone(),
        timeout_ms: definition.timeout_ms,
    };
    Ok(ToolDefinition {
        body: Arc::new(body),
        ..definition
    })
}

struct ClientBody {
    peer: Arc<Peer>,
    /// Where the client's `tools/reportProgress` for a running call is routed.
    routes: Arc<ProgressRoutes>,
    timeout_ms: Option<u64>,
}

impl ToolBody for ClientBody {
    fn call(&self, ctx: ToolRunContext) -> BoxFuture<'static, Result<BodyOutput, ToolError>> {
        let (peer, timeout_ms) = (self.peer.clone(), self.timeout_ms);
        let routes = self.routes.clone();
        Box::pin(async move {
            let execution = &ctx.execution;
            let _route = routes.open(execution.token.to_string(), ctx.progress.clone());
            let params = wire::ExecuteToolParams {
                registration: ctx.registration.to_string(),
                token: execution.token.to_string(),
                call_id: execution.call_id.to_string(),
                name: execution.name.to_string(),
                arguments: json::deep_clone(&execution.arguments),
                agent: execution.agent.as_ref().map(ToString::to_string),
                parent: execution.parent.map(|p| p.to_string()),
            };
            let name = &execution.name;
            let raw = peer
                .request(
                    "client/executeTool",
                    &params,
                    ctx.signal.aborted(),
                    timeout_ms,
                )
                .await
                .map_err(|e| match e {
                    PeerError::Remote { message, .. } => ToolError::new(message),
                    PeerError::Cancelled => {
                        ToolError::harness(HarnessCode::Aborted, "tool call aborted")
                    }
                    PeerError::TimedOut(ms) => timed_out(name, ms),
                    other => {
                        ToolError::new(format!("client could not execute tool \"{name}\": {other}"))
                    }
                })?;
            let answer: wire::ExecuteToolResult =
                super::params::from_str(raw.get()).map_err(|e| {
                    ToolError::new(format!(
                        "client returned an invalid result for tool \"{name}\": {}",
                        shape_error(e.message())
                    ))
                })?;
            for context in answer.additional_contexts {
                ctx.defer_context(context);
            }
            Ok(BodyOutput {
                value: answer.value,
                content: answer.content,
                meta: answer.meta,
                structured_content: None,
            })
        })
    }
}

/// How long `client/classify` and `client/render` may take: past it the call is exclusive,
/// respectively a normalized failure, so a client that never answers cannot hang anything.
const CLIENT_ANSWER_MS: u64 = 30_000;

/// Asks the client per call (`concurrencySafe: "ask"`).
struct ClientClassifier {
    peer: Arc<Peer>,
    name: String,
}

impl Classifier for ClientClassifier {
    fn classify(&self, registration: &str, arguments: &Value) -> BoxFuture<'static, bool> {
        let peer = self.peer.clone();
        let params = wire::ClassifyParams {
            registration: registration.to_string(),
            name: self.name.clone(),
            arguments: json::deep_clone(arguments),
        };
        Box::pin(async move {
            let answer = peer
                .request(
                    "client/classify",
                    &params,
                    std::future::pending(),
                    Some(CLIENT_ANSWER_MS),
                )
                .await;
            // Anything but exactly `true` is exclusive.
            matches!(answer, Ok(raw) if raw.get().trim() == "true")
        })
    }
}

struct ClientRenderer(Arc<Peer>);

impl Renderer for ClientRenderer {
    fn render(
        &self,
        execution: &ToolExecution,
        registration: &str,
        value: &Value,
    ) -> BoxFuture<'static, Result<Vec<ContentBlock>, ToolError>> {
        let peer = self.0.clone();
        let name = execution.name.clone();
        let signal = execution.signal.clone();
        let params = wire::RenderParams {
            registration: registration.to_string(),
            name: name.to_string(),
            arguments: json::deep_clone(&execution.arguments),
            value: json::deep_clone(value),
        };
        Box::pin(async move {
            let failed = |detail: String| {
                ToolError::new(format!(
                    "client/render failed for tool \"{name}\": {detail}"
                ))
            };
            let raw = peer
                .request(
                    "client/render",
                    &params,
                    signal.aborted(),
                    Some(CLIENT_ANSWER_MS),
                )
                .await
                .map_err(|e| failed(e.to_string()))?;
            super::params::from_str::<Vec<ContentBlock>>(raw.get())
                .map_err(|e| failed(shape_error(e.message()).to_string()))
        })
    }
}

/// What was wrong with an answer's shape, without the `invalid params:` framing the
/// parser uses for incoming requests (the client's answer is not a request's params) and
/// without the `at line L column C` position, which depends on the client's whitespace.
fn shape_error(message: &str) -> &str {
    let message = message.strip_prefix("invalid params: ").unwrap_or(message);
    let Some((detail, position)) = message.rsplit_once(" at line ") else {
        return message;
    };
    let is_position = position
        .split_once(" column ")
        .is_some_and(|(line, column)| is_number(line) && is_number(column));
    if is_position { detail } else { message }
}

fn is_number(text: &str) -> bool {
    !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shape_errors_lose_the_request_framing_and_the_text_position() {
        let check = |message: &str, expected: &str| assert_eq!(shape_error(message), expected);
        check(
            "invalid params: missing field `value` at line 1 column 2",
            "missing field `value`",
        );
        check(
            "invalid params: content: expected a sequence at line 3 column 40",
            "content: expected a sequence",
        );
        check("missing field `value`", "missing field `value`");
        check(
            "invalid params: a string \"at line 1 column x\"",
            "a string \"at line 1 column x\"",
        );
    }
}
